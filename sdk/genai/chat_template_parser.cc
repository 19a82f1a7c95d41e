// Parser of chat templates: statements (if / for / set / macro / break / continue /
// generation) and Jinja's expression grammar, precedence from low to high:
// conditional, or, and, not, comparisons and `in`, + -, ~, * / // %, **, unary - +, then
// postfix . [] () with | filters and `is` tests.
#include "sdk/genai/chat_template_ast.h"
#include "sdk/genai/chat_template_lexer.h"

namespace xonnx::genai::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Result<std::shared_ptr<Template>> run() {
    auto tmpl = std::make_shared<Template>();
    std::string stop;
    XONNX_RETURN_IF_ERROR(body(tmpl->body, {}, stop));
    return tmpl;
  }

 private:
  const Token& peek(size_t ahead = 0) const { return t_[std::min(i_ + ahead, t_.size() - 1)]; }
  const Token& next() { return t_[std::min(i_++, t_.size() - 1)]; }
  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).type == Token::Type::kOperator && peek(ahead).text == op;
  }
  bool is_name(const char* name, size_t ahead = 0) const {
    return peek(ahead).type == Token::Type::kName && peek(ahead).text == name;
  }
  Status error(const Token& at, const std::string& what) const {
    return invalid_argument("chat template ", where(at.pos), what);
  }
  Status expect_op(const char* op) {
    if (!is_op(op)) return error(peek(), std::string("expected '") + op + "'");
    ++i_;
    return Status::ok();
  }
  Status expect_block_end() {
    if (peek().type != Token::Type::kBlockEnd) return error(peek(), "expected '%}'");
    ++i_;
    return Status::ok();
  }
  Result<std::string> expect_name() {
    if (peek().type != Token::Type::kName) return error(peek(), "expected a name");
    return next().text;
  }

  // Statements until one of the stop keywords opens a block (it is consumed, and returned in
  // stop) or the template ends (only valid when stops is empty).
  Status body(Body& out, const std::vector<std::string>& stops, std::string& stop) {
    while (true) {
      const Token& tok = peek();
      if (tok.type == Token::Type::kEnd) {
        if (stops.empty()) return Status::ok();
        return error(tok, "missing {% " + stops.back() + " %}");
      }
      if (tok.type == Token::Type::kText) {
        auto n = node(Node::Kind::kText, tok);
        n->text = tok.text;
        out.push_back(std::move(n));
        ++i_;
        continue;
      }
      if (tok.type == Token::Type::kVarBegin) {
        ++i_;
        auto n = node(Node::Kind::kOutput, tok);
        XONNX_ASSIGN_OR_RETURN(ExprPtr e, expression());
        n->exprs.push_back(std::move(e));
        if (peek().type != Token::Type::kVarEnd) return error(peek(), "expected '}}'");
        ++i_;
        out.push_back(std::move(n));
        continue;
      }
      if (tok.type != Token::Type::kBlockBegin) return error(tok, "unexpected token");
      const Token& keyword = peek(1);
      if (keyword.type != Token::Type::kName) return error(keyword, "expected a statement name");
      for (const std::string& s : stops) {
        if (keyword.text == s) {
          i_ += 2;
          stop = s;
          return Status::ok();
        }
      }
      i_ += 2;
      XONNX_RETURN_IF_ERROR(statement(keyword, out));
    }
  }

  std::unique_ptr<Node> node(Node::Kind kind, const Token& at) {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->pos = at.pos;
    return n;
  }

  Status statement(const Token& keyword, Body& out) {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return error(keyword, "statements nested too deeply");
    const std::string& k = keyword.text;
    std::string stop;
    if (k == "if") {
      auto n = node(Node::Kind::kIf, keyword);
      while (true) {
        XONNX_ASSIGN_OR_RETURN(ExprPtr cond, expression());
        XONNX_RETURN_IF_ERROR(expect_block_end());
        n->exprs.push_back(std::move(cond));
        n->bodies.emplace_back();
        XONNX_RETURN_IF_ERROR(body(n->bodies.back(), {"elif", "else", "endif"}, stop));
        if (stop != "elif") break;
      }
      if (stop == "else") {
        XONNX_RETURN_IF_ERROR(expect_block_end());
        n->bodies.emplace_back();
        XONNX_RETURN_IF_ERROR(body(n->bodies.back(), {"endif"}, stop));
      }
      XONNX_RETURN_IF_ERROR(expect_block_end());
      out.push_back(std::move(n));
      return Status::ok();
    }
    if (k == "for") {
      auto n = node(Node::Kind::kFor, keyword);
      do {
        XONNX_ASSIGN_OR_RETURN(std::string target, expect_name());
        n->targets.push_back(target);
      } while (is_op(",") && (++i_, true));
      if (!is_name("in")) return error(peek(), "expected 'in'");
      ++i_;
      XONNX_ASSIGN_OR_RETURN(ExprPtr iterable, or_expr());
      n->exprs.push_back(std::move(iterable));
      if (is_name("if")) {
        ++i_;
        XONNX_ASSIGN_OR_RETURN(ExprPtr filter, or_expr());
        n->exprs.push_back(std::move(filter));
      }
      if (is_name("recursive")) return error(peek(), "recursive loops are not supported");
      XONNX_RETURN_IF_ERROR(expect_block_end());
      n->bodies.resize(2);
      XONNX_RETURN_IF_ERROR(body(n->bodies[0], {"else", "endfor"}, stop));
      if (stop == "else") {
        XONNX_RETURN_IF_ERROR(expect_block_end());
        XONNX_RETURN_IF_ERROR(body(n->bodies[1], {"endfor"}, stop));
      }
      XONNX_RETURN_IF_ERROR(expect_block_end());
      out.push_back(std::move(n));
      return Status::ok();
    }
    if (k == "set") {
      XONNX_ASSIGN_OR_RETURN(std::string target, expect_name());
      if (is_op(".")) {  // namespace attribute
        ++i_;
        auto n = node(Node::Kind::kSet, keyword);
        n->text = target;
        XONNX_ASSIGN_OR_RETURN(n->attribute, expect_name());
        XONNX_RETURN_IF_ERROR(expect_op("="));
        XONNX_ASSIGN_OR_RETURN(ExprPtr value, expression());
        n->exprs.push_back(std::move(value));
        XONNX_RETURN_IF_ERROR(expect_block_end());
        out.push_back(std::move(n));
        return Status::ok();
      }
      if (peek().type == Token::Type::kBlockEnd) {  // {% set x %}...{% endset %}
        ++i_;
        auto n = node(Node::Kind::kSetBlock, keyword);
        n->text = target;
        n->bodies.emplace_back();
        XONNX_RETURN_IF_ERROR(body(n->bodies.back(), {"endset"}, stop));
        XONNX_RETURN_IF_ERROR(expect_block_end());
        out.push_back(std::move(n));
        return Status::ok();
      }
      auto n = node(Node::Kind::kSet, keyword);
      n->targets.push_back(target);
      while (is_op(",")) {
        ++i_;
        XONNX_ASSIGN_OR_RETURN(std::string more, expect_name());
        n->targets.push_back(more);
      }
      XONNX_RETURN_IF_ERROR(expect_op("="));
      XONNX_ASSIGN_OR_RETURN(ExprPtr value, tuple_or_expression());
      n->exprs.push_back(std::move(value));
      XONNX_RETURN_IF_ERROR(expect_block_end());
      out.push_back(std::move(n));
      return Status::ok();
    }
    if (k == "macro") {
      auto n = node(Node::Kind::kMacro, keyword);
      XONNX_ASSIGN_OR_RETURN(n->text, expect_name());
      XONNX_RETURN_IF_ERROR(expect_op("("));
      while (!is_op(")")) {
        XONNX_ASSIGN_OR_RETURN(std::string param, expect_name());
        n->targets.push_back(param);
        ExprPtr fallback;
        if (is_op("=")) {
          ++i_;
          XONNX_ASSIGN_OR_RETURN(fallback, expression());
        }
        n->exprs.push_back(std::move(fallback));
        if (!is_op(",")) break;
        ++i_;
      }
      XONNX_RETURN_IF_ERROR(expect_op(")"));
      XONNX_RETURN_IF_ERROR(expect_block_end());
      n->bodies.emplace_back();
      XONNX_RETURN_IF_ERROR(body(n->bodies.back(), {"endmacro"}, stop));
      XONNX_RETURN_IF_ERROR(expect_block_end());
      out.push_back(std::move(n));
      return Status::ok();
    }
    if (k == "break" || k == "continue") {
      out.push_back(node(k == "break" ? Node::Kind::kBreak : Node::Kind::kContinue, keyword));
      return expect_block_end();
    }
    if (k == "generation") {  // marks assistant text for masks in training: no effect on output
      XONNX_RETURN_IF_ERROR(expect_block_end());
      auto n = node(Node::Kind::kScope, keyword);
      n->bodies.emplace_back();
      XONNX_RETURN_IF_ERROR(body(n->bodies.back(), {"endgeneration"}, stop));
      XONNX_RETURN_IF_ERROR(expect_block_end());
      out.push_back(std::move(n));
      return Status::ok();
    }
    return error(keyword, "unsupported statement '" + k +
                              "' (supported: if, for, set, macro, break, continue, generation, raw)");
  }

  Result<ExprPtr> make(Expr::Kind kind, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = at.pos;
    return e;
  }

  // `a, b` at the top of a set value is a tuple.
  Result<ExprPtr> tuple_or_expression() {
    const Token& start = peek();
    XONNX_ASSIGN_OR_RETURN(ExprPtr first, expression());
    if (!is_op(",")) return first;
    XONNX_ASSIGN_OR_RETURN(ExprPtr tuple, make(Expr::Kind::kTuple, start));
    tuple->children.push_back(std::move(first));
    while (is_op(",")) {
      ++i_;
      XONNX_ASSIGN_OR_RETURN(ExprPtr more, expression());
      tuple->children.push_back(std::move(more));
    }
    return tuple;
  }

  // Nesting deeper than this is refused, so a hostile template cannot exhaust the stack.
  static constexpr int kMaxDepth = 200;
  struct DepthGuard {
    int& depth;
    explicit DepthGuard(int& d) : depth(++d) {}
    ~DepthGuard() { --depth; }
  };

  Result<ExprPtr> expression() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return error(peek(), "expressions nested too deeply");
    XONNX_ASSIGN_OR_RETURN(ExprPtr value, or_expr());
    while (is_name("if")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr cond, or_expr());
      ExprPtr otherwise;
      if (is_name("else")) {
        ++i_;
        XONNX_ASSIGN_OR_RETURN(otherwise, expression());
      }
      XONNX_ASSIGN_OR_RETURN(ExprPtr c, make(Expr::Kind::kConditional, at));
      c->children.push_back(std::move(cond));
      c->children.push_back(std::move(value));
      c->children.push_back(std::move(otherwise));  // may be null: undefined
      value = std::move(c);
    }
    return value;
  }

  Result<ExprPtr> binary(Expr::Kind kind, const std::string& op, ExprPtr a, ExprPtr b, const Token& at) {
    XONNX_ASSIGN_OR_RETURN(ExprPtr e, make(kind, at));
    e->name = op;
    e->children.push_back(std::move(a));
    e->children.push_back(std::move(b));
    return e;
  }

  Result<ExprPtr> or_expr() {
    XONNX_ASSIGN_OR_RETURN(ExprPtr a, and_expr());
    while (is_name("or")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr b, and_expr());
      XONNX_ASSIGN_OR_RETURN(a, binary(Expr::Kind::kOr, "or", std::move(a), std::move(b), at));
    }
    return a;
  }

  Result<ExprPtr> and_expr() {
    XONNX_ASSIGN_OR_RETURN(ExprPtr a, not_expr());
    while (is_name("and")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr b, not_expr());
      XONNX_ASSIGN_OR_RETURN(a, binary(Expr::Kind::kAnd, "and", std::move(a), std::move(b), at));
    }
    return a;
  }

  Result<ExprPtr> not_expr() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return error(peek(), "expressions nested too deeply");
    if (is_name("not")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr operand, not_expr());
      XONNX_ASSIGN_OR_RETURN(ExprPtr e, make(Expr::Kind::kNot, at));
      e->children.push_back(std::move(operand));
      return e;
    }
    return compare();
  }

  Result<ExprPtr> compare() {
    XONNX_ASSIGN_OR_RETURN(ExprPtr a, math1());
    while (true) {
      std::string op;
      const Token& at = peek();
      if (peek().type == Token::Type::kOperator && (at.text == "==" || at.text == "!=" || at.text == "<" ||
                                                    at.text == "<=" || at.text == ">" || at.text == ">=")) {
        op = at.text;
        ++i_;
      } else if (is_name("in")) {
        op = "in";
        ++i_;
      } else if (is_name("not") && is_name("in", 1)) {
        op = "not in";
        i_ += 2;
      } else {
        return a;
      }
      XONNX_ASSIGN_OR_RETURN(ExprPtr b, math1());
      XONNX_ASSIGN_OR_RETURN(a, binary(Expr::Kind::kBinary, op, std::move(a), std::move(b), at));
    }
  }

  Result<ExprPtr> math1() {
    XONNX_ASSIGN_OR_RETURN(ExprPtr a, concat());
    while (is_op("+") || is_op("-")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr b, concat());
      XONNX_ASSIGN_OR_RETURN(a, binary(Expr::Kind::kBinary, at.text, std::move(a), std::move(b), at));
    }
    return a;
  }

  Result<ExprPtr> concat() {
    XONNX_ASSIGN_OR_RETURN(ExprPtr a, math2());
    while (is_op("~")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr b, math2());
      XONNX_ASSIGN_OR_RETURN(a, binary(Expr::Kind::kBinary, "~", std::move(a), std::move(b), at));
    }
    return a;
  }

  Result<ExprPtr> math2() {
    XONNX_ASSIGN_OR_RETURN(ExprPtr a, power());
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr b, power());
      XONNX_ASSIGN_OR_RETURN(a, binary(Expr::Kind::kBinary, at.text, std::move(a), std::move(b), at));
    }
    return a;
  }

  Result<ExprPtr> power() {
    XONNX_ASSIGN_OR_RETURN(ExprPtr a, unary());
    while (is_op("**")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr b, unary());
      XONNX_ASSIGN_OR_RETURN(a, binary(Expr::Kind::kBinary, "**", std::move(a), std::move(b), at));
    }
    return a;
  }

  Result<ExprPtr> unary() {
    DepthGuard guard(depth_);
    if (depth_ > kMaxDepth) return error(peek(), "expressions nested too deeply");
    if (is_op("-") || is_op("+")) {
      const Token& at = next();
      XONNX_ASSIGN_OR_RETURN(ExprPtr operand, unary());
      XONNX_ASSIGN_OR_RETURN(ExprPtr e, make(Expr::Kind::kUnary, at));
      e->name = at.text;
      e->children.push_back(std::move(operand));
      return filters(std::move(e));
    }
    XONNX_ASSIGN_OR_RETURN(ExprPtr e, primary());
    XONNX_ASSIGN_OR_RETURN(e, postfix(std::move(e)));
    return filters(std::move(e));
  }

  // Arguments of a call, filter or test after '(' up to ')'.
  Status arguments(Expr& e) {
    XONNX_RETURN_IF_ERROR(expect_op("("));
    while (!is_op(")")) {
      if (peek().type == Token::Type::kName && is_op("=", 1)) {
        e.keywords.push_back(next().text);
        ++i_;
        XONNX_ASSIGN_OR_RETURN(ExprPtr v, expression());
        e.children.push_back(std::move(v));
      } else {
        if (!e.keywords.empty()) return error(peek(), "positional argument after a keyword argument");
        XONNX_ASSIGN_OR_RETURN(ExprPtr v, expression());
        e.children.push_back(std::move(v));
      }
      if (!is_op(",")) break;
      ++i_;
    }
    return expect_op(")");
  }

  Result<ExprPtr> filters(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        const Token& at = next();
        XONNX_ASSIGN_OR_RETURN(ExprPtr f, make(Expr::Kind::kFilter, at));
        XONNX_ASSIGN_OR_RETURN(f->name, expect_name());
        f->children.push_back(std::move(e));
        if (is_op("(")) XONNX_RETURN_IF_ERROR(arguments(*f));
        e = std::move(f);
      } else if (is_name("is")) {
        const Token& at = next();
        XONNX_ASSIGN_OR_RETURN(ExprPtr t, make(Expr::Kind::kTest, at));
        if (is_name("not")) {
          t->negated = true;
          ++i_;
        }
        // Names that are keywords of the grammar are tests here: none, true, false, in.
        if (peek().type != Token::Type::kName) return error(peek(), "expected a test name");
        t->name = next().text;
        t->children.push_back(std::move(e));
        if (is_op("(")) {
          XONNX_RETURN_IF_ERROR(arguments(*t));
        } else if (peek().type == Token::Type::kString || peek().type == Token::Type::kInt ||
                   peek().type == Token::Type::kFloat ||
                   (peek().type == Token::Type::kName && !is_name("else") && !is_name("and") && !is_name("or") &&
                    !is_name("if") && !is_name("in") && !is_name("not"))) {
          XONNX_ASSIGN_OR_RETURN(ExprPtr arg, primary());
          XONNX_ASSIGN_OR_RETURN(arg, postfix(std::move(arg)));
          t->children.push_back(std::move(arg));
        }
        e = std::move(t);
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> postfix(ExprPtr e) {
    while (true) {
      if (is_op(".")) {
        const Token& at = next();
        XONNX_ASSIGN_OR_RETURN(ExprPtr a, make(Expr::Kind::kAttribute, at));
        if (peek().type == Token::Type::kInt) {  // x.0 is x[0]
          a->kind = Expr::Kind::kIndex;
          XONNX_ASSIGN_OR_RETURN(ExprPtr idx, make(Expr::Kind::kLiteral, peek()));
          idx->literal = Value::of(next().integer);
          a->children.push_back(std::move(e));
          a->children.push_back(std::move(idx));
        } else {
          XONNX_ASSIGN_OR_RETURN(a->name, expect_name());
          a->children.push_back(std::move(e));
        }
        e = std::move(a);
      } else if (is_op("[")) {
        const Token& at = next();
        XONNX_ASSIGN_OR_RETURN(ExprPtr s, make(Expr::Kind::kSlice, at));
        s->children.push_back(std::move(e));
        // [a], [a:b], [a:b:c], each part optional in a slice.
        for (int part = 0; part < 3; ++part) {
          if (part > 0) {
            if (!is_op(":")) break;
            ++i_;
          }
          if (!is_op(":") && !is_op("]")) {
            XONNX_ASSIGN_OR_RETURN(ExprPtr v, expression());
            s->children.push_back(std::move(v));
            s->has_slice_part[part] = true;
          }
          if (part == 0 && !is_op(":")) {
            if (!s->has_slice_part[0]) return error(peek(), "empty subscript");
            s->kind = Expr::Kind::kIndex;
            break;
          }
        }
        XONNX_RETURN_IF_ERROR(expect_op("]"));
        e = std::move(s);
      } else if (is_op("(")) {
        XONNX_ASSIGN_OR_RETURN(ExprPtr c, make(Expr::Kind::kCall, peek()));
        c->pos = e->pos;  // errors of a call point at what is called
        c->children.push_back(std::move(e));
        XONNX_RETURN_IF_ERROR(arguments(*c));
        e = std::move(c);
      } else {
        return e;
      }
    }
  }

  Result<ExprPtr> primary() {
    const Token& tok = peek();
    switch (tok.type) {
      case Token::Type::kString: {
        XONNX_ASSIGN_OR_RETURN(ExprPtr e, make(Expr::Kind::kLiteral, tok));
        std::string s;
        while (peek().type == Token::Type::kString) s += next().text;  // adjacent literals join
        e->literal = Value::of(std::move(s));
        return e;
      }
      case Token::Type::kInt: {
        XONNX_ASSIGN_OR_RETURN(ExprPtr e, make(Expr::Kind::kLiteral, tok));
        e->literal = Value::of(next().integer);
        return e;
      }
      case Token::Type::kFloat: {
        XONNX_ASSIGN_OR_RETURN(ExprPtr e, make(Expr::Kind::kLiteral, tok));
        e->literal = Value::of(next().real);
        return e;
      }
      case Token::Type::kName: {
        XONNX_ASSIGN_OR_RETURN(ExprPtr e, make(Expr::Kind::kLiteral, tok));
        const std::string& n = tok.text;
        if (n == "true" || n == "True")
          e->literal = Value::of(true);
        else if (n == "false" || n == "False")
          e->literal = Value::of(false);
        else if (n == "none" || n == "None")
          e->literal = Value::none();
        else {
          e->kind = Expr::Kind::kName;
          e->name = n;
        }
        ++i_;
        return e;
      }
      case Token::Type::kOperator:
        if (tok.text == "(") {
          ++i_;
          if (is_op(")")) {
            ++i_;
            return make(Expr::Kind::kTuple, tok);
          }
          XONNX_ASSIGN_OR_RETURN(ExprPtr first, expression());
          if (is_op(",")) {
            XONNX_ASSIGN_OR_RETURN(ExprPtr tuple, make(Expr::Kind::kTuple, tok));
            tuple->children.push_back(std::move(first));
            while (is_op(",")) {
              ++i_;
              if (is_op(")")) break;
              XONNX_ASSIGN_OR_RETURN(ExprPtr more, expression());
              tuple->children.push_back(std::move(more));
            }
            first = std::move(tuple);
          }
          XONNX_RETURN_IF_ERROR(expect_op(")"));
          return first;
        }
        if (tok.text == "[") {
          ++i_;
          XONNX_ASSIGN_OR_RETURN(ExprPtr list, make(Expr::Kind::kList, tok));
          while (!is_op("]")) {
            XONNX_ASSIGN_OR_RETURN(ExprPtr item, expression());
            list->children.push_back(std::move(item));
            if (!is_op(",")) break;
            ++i_;
          }
          XONNX_RETURN_IF_ERROR(expect_op("]"));
          return list;
        }
        if (tok.text == "{") {
          ++i_;
          XONNX_ASSIGN_OR_RETURN(ExprPtr dict, make(Expr::Kind::kDict, tok));
          while (!is_op("}")) {
            XONNX_ASSIGN_OR_RETURN(ExprPtr key, expression());
            XONNX_RETURN_IF_ERROR(expect_op(":"));
            XONNX_ASSIGN_OR_RETURN(ExprPtr value, expression());
            dict->children.push_back(std::move(key));
            dict->children.push_back(std::move(value));
            if (!is_op(",")) break;
            ++i_;
          }
          XONNX_RETURN_IF_ERROR(expect_op("}"));
          return dict;
        }
        break;
      default: break;
    }
    if (tok.type == Token::Type::kVarEnd || tok.type == Token::Type::kBlockEnd)
      return error(tok, "expected an expression");
    return error(tok, "unexpected '" + tok.text + "'");
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Result<std::shared_ptr<Template>> parse_template(std::string_view source) {
  XONNX_ASSIGN_OR_RETURN(std::vector<Token> tokens, lex_template(source));
  return Parser(std::move(tokens)).run();
}

}  // namespace xonnx::genai::jinja
