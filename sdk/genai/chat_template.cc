// The chat-template interpreter: executes the parsed template over Values, with Jinja's
// scoping (a for loop and a macro call open a scope; set assigns in the innermost one, so a
// set inside a loop does not leak out: templates use namespace() for that).
#include "sdk/genai/chat_template.h"

#include <cmath>
#include <unordered_map>

#include "sdk/genai/chat_template_ast.h"
#include "sdk/genai/chat_template_builtins.h"
#include "sdk/genai/chat_template_lexer.h"
#include "sdk/genai/chat_template_methods.h"
#include "sdk/genai/tokenizer.h"
#include "sdk/genai/unicode.h"

namespace xonnx::genai {
namespace jinja {
namespace {

constexpr int kMaxCallDepth = 64;
// Steps of one render, about 1 s of work: a statement or expression is one step, a loop
// iteration 16, an item of a list built 4, 16 bytes of a string built or indexed 1. Real chat
// templates take thousands per message; a loop nest that would run for hours stops.
constexpr int64_t kMaxSteps = int64_t{1} << 25;
constexpr uint64_t kStepsPerIteration = 16, kStepsPerItem = 4, kBytesPerStep = 16;

class Renderer {
 public:
  // The caller checks the context's nesting first (json_nesting: from_json recurses).
  explicit Renderer(const OrderedJson& context) {
    scopes_.emplace_back();
    if (context.is_object()) {
      for (auto it = context.begin(); it != context.end(); ++it) scopes_[0][it.key()] = Value::from_json(*it);
    }
  }

  Result<std::string> run(const Template& t) {
    struct RestoreWalkBudget {
      ~RestoreWalkBudget() { set_walk_budget(INT64_MAX); }
    } restore;
    set_walk_budget(kMaxSteps);
    std::string out;
    XONNX_ASSIGN_OR_RETURN(Flow flow, exec(t.body, out));
    (void)flow;
    return out;
  }

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  using Scope = std::unordered_map<std::string, Value>;

  static Status fail(const Position& pos, const Status& s) {
    return invalid_argument("chat template ", where(pos), s.message());
  }
  static Status fail(const Position& pos, const std::string& what) {
    return invalid_argument("chat template ", where(pos), what);
  }

  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) return found->second;
    }
    return global_function(name);
  }

  Status charge(uint64_t steps, const Position& pos) {
    steps_left_ -= static_cast<int64_t>(std::min<uint64_t>(steps, kMaxSteps));
    if (steps_left_ < 0 || walk_budget_exhausted()) {
      return fail(pos, "rendering takes more than " + std::to_string(kMaxSteps) +
                           " steps (a loop or recursion without a useful end?)");
    }
    return Status::ok();
  }

  // What any expression yields stays inside the bounds of chat_template_value.h.
  Status check_value(const Value& v, const Position& pos) {
    if (Status s = check_string_size(v.string.size()); !s.is_ok()) return fail(pos, s);
    if (Status s = check_items(v.is_list() ? v.list->size() : 0); !s.is_ok()) return fail(pos, s);
    if (v.nesting() > kMaxNesting) {
      return fail(pos, "lists and dicts nested deeper than " + std::to_string(kMaxNesting));
    }
    return Status::ok();
  }

  // Namespaces are the only mutable values; kept out of lists and dicts, no value can contain
  // itself and every value's nesting() stays exact.
  static Status refuse_namespace(const Value& v, const Position& pos) {
    if (v.is_namespace()) return fail(pos, "a namespace() cannot be put inside a list, dict or namespace");
    return Status::ok();
  }

  Status append(std::string& out, const std::string& s, const Position& pos) {
    if (out.size() + s.size() > kMaxStringBytes) return fail(pos, "output longer than 64 MiB");
    out += s;
    return Status::ok();
  }

  Result<Flow> exec(const Body& body, std::string& out) {
    for (const auto& n : body) {
      XONNX_ASSIGN_OR_RETURN(Flow flow, exec_node(*n, out));
      if (flow != Flow::kNormal) return flow;
    }
    return Flow::kNormal;
  }

  Result<Flow> exec_node(const Node& n, std::string& out) {
    XONNX_RETURN_IF_ERROR(charge(1, n.pos));
    switch (n.kind) {
      case Node::Kind::kText: XONNX_RETURN_IF_ERROR(append(out, n.text, n.pos)); return Flow::kNormal;
      case Node::Kind::kOutput: {
        XONNX_ASSIGN_OR_RETURN(Value v, eval(*n.exprs[0]));
        XONNX_RETURN_IF_ERROR(append(out, v.str(), n.pos));
        return Flow::kNormal;
      }
      case Node::Kind::kIf:
        for (size_t i = 0; i < n.bodies.size(); ++i) {
          bool take = i >= n.exprs.size();  // the else branch
          if (!take) {
            XONNX_ASSIGN_OR_RETURN(Value cond, eval(*n.exprs[i]));
            take = cond.truthy();
          }
          if (take) return exec(n.bodies[i], out);
        }
        return Flow::kNormal;
      case Node::Kind::kFor: return exec_for(n, out);
      case Node::Kind::kSet: {
        XONNX_ASSIGN_OR_RETURN(Value v, eval(*n.exprs[0]));
        if (!n.attribute.empty()) {
          Value target = lookup(n.text);
          if (!target.is_namespace()) {
            return fail(n.pos, "'" + n.text + "' is not a namespace: only namespace() attributes can be assigned");
          }
          XONNX_RETURN_IF_ERROR(refuse_namespace(v, n.pos));
          target.dict->set(n.attribute, std::move(v));
          XONNX_RETURN_IF_ERROR(check_value(target, n.pos));
          return Flow::kNormal;
        }
        XONNX_RETURN_IF_ERROR(assign(n.targets, std::move(v), n.pos));
        return Flow::kNormal;
      }
      case Node::Kind::kSetBlock: {
        std::string captured;
        XONNX_ASSIGN_OR_RETURN(Flow flow, exec(n.bodies[0], captured));
        (void)flow;
        scopes_.back()[n.text] = Value::of(std::move(captured));
        return Flow::kNormal;
      }
      case Node::Kind::kMacro: scopes_.back()[n.text] = make_macro(n); return Flow::kNormal;
      case Node::Kind::kBreak: return Flow::kBreak;
      case Node::Kind::kContinue: return Flow::kContinue;
      case Node::Kind::kScope: return exec(n.bodies[0], out);
    }
    return Flow::kNormal;
  }

  Status assign(const std::vector<std::string>& targets, Value v, const Position& pos) {
    if (targets.size() == 1) {
      scopes_.back()[targets[0]] = std::move(v);
      return Status::ok();
    }
    if (!v.is_list() || v.list->size() != targets.size()) {
      return fail(
          pos, "cannot unpack a " + std::string(v.type_name()) + " into " + std::to_string(targets.size()) + " names");
    }
    for (size_t i = 0; i < targets.size(); ++i) scopes_.back()[targets[i]] = (*v.list)[i];
    return Status::ok();
  }

  Result<Flow> exec_for(const Node& n, std::string& out) {
    XONNX_ASSIGN_OR_RETURN(Value iterable, eval(*n.exprs[0]));
    List items;
    switch (iterable.kind) {
      case Value::Kind::kList: items = *iterable.list; break;
      case Value::Kind::kUndefined: break;
      case Value::Kind::kDict:
        for (const auto& kv : iterable.dict->items) items.push_back(Value::of(kv.first));
        break;
      case Value::Kind::kString:
        if (code_point_count(iterable.string) > kMaxItems) {
          return fail(n.pos, "a loop over more than " + std::to_string(kMaxItems) + " characters");
        }
        for (size_t i = 0; i < iterable.string.size();) {
          const size_t b = i;
          utf8_next(iterable.string, i);
          items.push_back(Value::of(iterable.string.substr(b, i - b)));
        }
        break;
      default: return fail(n.exprs[0]->pos, std::string("cannot loop over a ") + iterable.type_name());
    }
    XONNX_RETURN_IF_ERROR(charge(items.size() * kStepsPerItem, n.pos));
    scopes_.emplace_back();
    struct PopScope {
      std::vector<Scope>& s;
      ~PopScope() { s.pop_back(); }
    } pop{scopes_};
    if (n.exprs.size() > 1) {  // for x in xs if cond: filter first, loop.* count what is left
      List kept;
      for (Value& item : items) {
        XONNX_RETURN_IF_ERROR(assign(n.targets, item, n.pos));
        XONNX_ASSIGN_OR_RETURN(Value keep, eval(*n.exprs[1]));
        if (keep.truthy()) kept.push_back(std::move(item));
      }
      items.swap(kept);
    }
    const auto length = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < length; ++i) {
      XONNX_RETURN_IF_ERROR(charge(kStepsPerIteration, n.pos));
      XONNX_RETURN_IF_ERROR(assign(n.targets, items[static_cast<size_t>(i)], n.pos));
      Dict loop;
      loop.items = {{"index", Value::of(i + 1)},
                    {"index0", Value::of(i)},
                    {"revindex", Value::of(length - i)},
                    {"revindex0", Value::of(length - i - 1)},
                    {"first", Value::of(i == 0)},
                    {"last", Value::of(i == length - 1)},
                    {"length", Value::of(length)},
                    {"previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value()},
                    {"nextitem", i + 1 < length ? items[static_cast<size_t>(i + 1)] : Value()}};
      const int64_t index = i;
      loop.items.emplace_back("cycle", Value::callable([index](const CallArgs& a) -> Result<Value> {
                                if (a.positional.empty()) return invalid_argument("cycle needs arguments");
                                return a.positional[static_cast<size_t>(index) % a.positional.size()];
                              }));
      scopes_.back()["loop"] = Value::of(std::move(loop));
      XONNX_ASSIGN_OR_RETURN(Flow flow, exec(n.bodies[0], out));
      if (flow == Flow::kBreak) break;
    }
    if (length == 0) {
      XONNX_ASSIGN_OR_RETURN(Flow flow, exec(n.bodies[1], out));
      (void)flow;
    }
    return Flow::kNormal;
  }

  Value make_macro(const Node& n) {
    const Node* node = &n;
    return Value::callable([this, node](const CallArgs& a) -> Result<Value> {
      if (call_depth_ >= kMaxCallDepth) return invalid_argument("macro calls nested deeper than ", kMaxCallDepth);
      ++call_depth_;
      scopes_.emplace_back();
      struct Restore {
        Renderer& r;
        ~Restore() {
          r.scopes_.pop_back();
          --r.call_depth_;
        }
      } restore{*this};
      for (size_t i = 0; i < node->targets.size(); ++i) {
        const Value* given = a.get(i, node->targets[i].c_str());
        if (given) {
          scopes_.back()[node->targets[i]] = *given;
        } else if (node->exprs[i]) {
          XONNX_ASSIGN_OR_RETURN(Value fallback, eval(*node->exprs[i]));
          scopes_.back()[node->targets[i]] = fallback;
        } else {
          scopes_.back()[node->targets[i]] = Value();
        }
      }
      std::string out;
      XONNX_ASSIGN_OR_RETURN(Flow flow, exec(node->bodies[0], out));
      (void)flow;
      return Value::of(std::move(out));
    });
  }

  Result<CallArgs> arguments(const Expr& e, size_t first) {
    CallArgs args;
    const size_t keyword_start = e.children.size() - e.keywords.size();
    for (size_t i = first; i < e.children.size(); ++i) {
      XONNX_ASSIGN_OR_RETURN(Value v, eval(*e.children[i]));
      if (i < keyword_start)
        args.positional.push_back(std::move(v));
      else
        args.keyword.emplace_back(e.keywords[i - keyword_start], std::move(v));
    }
    return args;
  }

  Result<Value> eval(const Expr& e) {
    XONNX_RETURN_IF_ERROR(charge(1, e.pos));
    XONNX_ASSIGN_OR_RETURN(Value v, eval_expr(e));
    // What an expression built costs what it holds (a range, a joined string).
    const bool built = e.kind == Expr::Kind::kCall || e.kind == Expr::Kind::kFilter || e.kind == Expr::Kind::kBinary ||
                       e.kind == Expr::Kind::kSlice;
    if (built) {
      XONNX_RETURN_IF_ERROR(
          charge((v.is_list() ? v.list->size() * kStepsPerItem : 0) + v.string.size() / kBytesPerStep, e.pos));
    }
    XONNX_RETURN_IF_ERROR(check_value(v, e.pos));
    return v;
  }

  Result<Value> eval_expr(const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::kLiteral: return e.literal;
      case Expr::Kind::kName: return lookup(e.name);
      case Expr::Kind::kAttribute: {
        XONNX_ASSIGN_OR_RETURN(Value obj, eval(*e.children[0]));
        return get_attribute(obj, e.name);
      }
      case Expr::Kind::kIndex: {
        XONNX_ASSIGN_OR_RETURN(Value obj, eval(*e.children[0]));
        XONNX_ASSIGN_OR_RETURN(Value key, eval(*e.children[1]));
        XONNX_RETURN_IF_ERROR(charge(obj.string.size() / kBytesPerStep, e.pos));  // its code points are counted
        return get_item(obj, key);
      }
      case Expr::Kind::kSlice: return eval_slice(e);
      case Expr::Kind::kCall: {
        XONNX_ASSIGN_OR_RETURN(Value callee, eval(*e.children[0]));
        if (callee.kind != Value::Kind::kCallable) {
          return fail(e.pos, std::string("cannot call a ") + callee.type_name() + " (unknown function or method?)");
        }
        XONNX_ASSIGN_OR_RETURN(CallArgs args, arguments(e, 1));
        auto r = (*callee.function)(args);
        if (!r.is_ok()) return fail(e.pos, r.status());
        return r;
      }
      case Expr::Kind::kFilter: {
        XONNX_ASSIGN_OR_RETURN(Value v, eval(*e.children[0]));
        XONNX_ASSIGN_OR_RETURN(CallArgs args, arguments(e, 1));
        auto r = apply_filter(e.name, v, args);
        if (!r.is_ok()) return fail(e.pos, r.status());
        return r;
      }
      case Expr::Kind::kTest: {
        XONNX_ASSIGN_OR_RETURN(Value v, eval(*e.children[0]));
        XONNX_ASSIGN_OR_RETURN(CallArgs args, arguments(e, 1));
        auto r = apply_test(e.name, v, args);
        if (!r.is_ok()) return fail(e.pos, r.status());
        return Value::of(r.value() != e.negated);
      }
      case Expr::Kind::kNot: {
        XONNX_ASSIGN_OR_RETURN(Value v, eval(*e.children[0]));
        return Value::of(!v.truthy());
      }
      case Expr::Kind::kAnd:
      case Expr::Kind::kOr: {  // Python: the deciding operand itself
        XONNX_ASSIGN_OR_RETURN(Value a, eval(*e.children[0]));
        if (a.truthy() == (e.kind == Expr::Kind::kOr)) return a;
        return eval(*e.children[1]);
      }
      case Expr::Kind::kConditional: {
        XONNX_ASSIGN_OR_RETURN(Value cond, eval(*e.children[0]));
        if (cond.truthy()) return eval(*e.children[1]);
        if (!e.children[2]) return Value();
        return eval(*e.children[2]);
      }
      case Expr::Kind::kUnary: {
        XONNX_ASSIGN_OR_RETURN(Value v, eval(*e.children[0]));
        if (!v.is_number()) return fail(e.pos, std::string("unary ") + e.name + " on a " + v.type_name());
        if (e.name == "+") return v;
        if (v.kind == Value::Kind::kFloat) return Value::of(-v.real);
        const int64_t x = v.kind == Value::Kind::kBool ? int64_t{v.boolean} : v.integer;
        if (x == INT64_MIN) return fail(e.pos, "integer overflow in unary -");
        return Value::of(-x);
      }
      case Expr::Kind::kBinary: {
        XONNX_ASSIGN_OR_RETURN(Value a, eval(*e.children[0]));
        XONNX_ASSIGN_OR_RETURN(Value b, eval(*e.children[1]));
        auto r = binary(e.name, a, b);
        if (!r.is_ok()) return fail(e.pos, r.status());
        return r;
      }
      case Expr::Kind::kList:
      case Expr::Kind::kTuple: {
        List items;
        for (const auto& c : e.children) {
          XONNX_ASSIGN_OR_RETURN(Value v, eval(*c));
          XONNX_RETURN_IF_ERROR(refuse_namespace(v, c->pos));
          items.push_back(std::move(v));
        }
        return Value::of(std::move(items));
      }
      case Expr::Kind::kDict: {
        Dict d;
        for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
          XONNX_ASSIGN_OR_RETURN(Value k, eval(*e.children[i]));
          XONNX_ASSIGN_OR_RETURN(Value v, eval(*e.children[i + 1]));
          if (!k.is_string()) return fail(e.children[i]->pos, "dict keys must be strings");
          XONNX_RETURN_IF_ERROR(refuse_namespace(v, e.children[i + 1]->pos));
          d.set(k.string, std::move(v));
        }
        return Value::of(std::move(d));
      }
    }
    return Value();
  }

  Result<Value> eval_slice(const Expr& e) {
    XONNX_ASSIGN_OR_RETURN(Value obj, eval(*e.children[0]));
    int64_t part[3] = {0, 0, 1};
    bool given[3] = {};
    size_t child = 1;
    for (int k = 0; k < 3; ++k) {
      if (!e.has_slice_part[k]) continue;
      XONNX_ASSIGN_OR_RETURN(Value v, eval(*e.children[child++]));
      if (v.is_none()) continue;
      if (v.kind != Value::Kind::kInt) return fail(e.pos, "slice bounds must be integers");
      part[k] = v.integer;
      given[k] = true;
    }
    const int64_t step = part[2];
    if (step == 0) return fail(e.pos, "slice step cannot be zero");
    std::vector<uint32_t> cps;
    int64_t n;
    if (obj.is_list())
      n = static_cast<int64_t>(obj.list->size());
    else if (obj.is_string())
      n = static_cast<int64_t>((cps = code_points(obj.string)).size());
    else if (obj.is_undefined())
      return Value();
    else
      return fail(e.pos, std::string("cannot slice a ") + obj.type_name());
    // Python's slice.indices.
    auto clamp = [&](int64_t v, bool has, int64_t fallback) {
      if (!has) return fallback;
      if (v < 0) v += n;
      if (step > 0) return std::clamp<int64_t>(v, 0, n);
      return std::clamp<int64_t>(v, -1, n - 1);
    };
    const int64_t start = clamp(part[0], given[0], step > 0 ? 0 : n - 1);
    const int64_t stop = clamp(part[1], given[1], step > 0 ? n : -1);
    List items;
    std::string s;
    XONNX_RETURN_IF_ERROR(charge(obj.string.size() / kBytesPerStep, e.pos));
    for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
      if (obj.is_list())
        items.push_back((*obj.list)[static_cast<size_t>(i)]);
      else
        utf8_append(s, cps[static_cast<size_t>(i)]);
      if (__builtin_add_overflow(i, step, &i)) break;  // past either end
    }
    return obj.is_list() ? Value::of(std::move(items)) : Value::of(std::move(s));
  }

  static Result<Value> binary(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return Value::of(equal(a, b));
    if (op == "!=") return Value::of(!equal(a, b));
    if (op == "<") return less(a, b).is_ok() ? Value::of(less(a, b).value()) : Result<Value>(less(a, b).status());
    if (op == ">") return less(b, a).is_ok() ? Value::of(less(b, a).value()) : Result<Value>(less(b, a).status());
    if (op == "<=" || op == ">=") {
      auto r = op == "<=" ? less(b, a) : less(a, b);
      if (!r.is_ok()) return r.status();
      return Value::of(!r.value());
    }
    if (op == "in" || op == "not in") {
      CallArgs args;
      args.positional.push_back(b);
      auto r = apply_test("in", a, args);
      if (!r.is_ok()) return r.status();
      return Value::of(r.value() == (op == "in"));
    }
    if (op == "~") return concatenate(a.str(), b.str());
    if (op == "+") {
      if (a.is_string() && b.is_string()) return concatenate(a.string, b.string);
      if (a.is_list() && b.is_list()) {
        XONNX_RETURN_IF_ERROR(check_items(a.list->size() + b.list->size()));
        List l = *a.list;
        l.insert(l.end(), b.list->begin(), b.list->end());
        return Value::of(std::move(l));
      }
    }
    if (op == "*" && ((a.is_string() || a.is_list()) && b.kind == Value::Kind::kInt)) {
      const size_t count = b.integer > 0 ? static_cast<size_t>(b.integer) : 0;
      const size_t unit = a.is_string() ? a.string.size() : a.list->size();
      size_t total = 0;
      if (__builtin_mul_overflow(unit, count, &total) || total > (a.is_string() ? kMaxStringBytes : kMaxItems)) {
        return invalid_argument("repetition longer than ", a.is_string() ? "64 MiB" : "the list limit");
      }
      if (unit == 0) return a.is_string() ? Value::of(std::string()) : Value::of(List{});
      if (a.is_string()) {
        std::string s;
        for (size_t i = 0; i < count; ++i) s += a.string;
        return Value::of(std::move(s));
      }
      List l;
      for (size_t i = 0; i < count; ++i) l.insert(l.end(), a.list->begin(), a.list->end());
      return Value::of(std::move(l));
    }
    if (!a.is_number() || !b.is_number()) {
      return invalid_argument("unsupported operand types for ", op, ": ", a.type_name(), " and ", b.type_name());
    }
    const bool ints = a.kind != Value::Kind::kFloat && b.kind != Value::Kind::kFloat;
    const int64_t x = a.kind == Value::Kind::kBool ? a.boolean : a.integer,
                  y = b.kind == Value::Kind::kBool ? b.boolean : b.integer;
    const double fx = a.as_double(), fy = b.as_double();
    // Python's integers do not overflow; ours are 64-bit, so an overflow is an error, not a wrap.
    auto int_result = [&op](bool overflow, int64_t r) -> Result<Value> {
      if (overflow) return invalid_argument("integer overflow in ", op);
      return Value::of(r);
    };
    if (op == "+" || op == "-" || op == "*") {
      if (!ints) return Value::of(op == "+" ? fx + fy : op == "-" ? fx - fy : fx * fy);
      int64_t r = 0;
      const bool overflow = op == "+"   ? __builtin_add_overflow(x, y, &r)
                            : op == "-" ? __builtin_sub_overflow(x, y, &r)
                                        : __builtin_mul_overflow(x, y, &r);
      return int_result(overflow, r);
    }
    if (op == "/") {
      if (fy == 0) return invalid_argument("division by zero");
      return Value::of(fx / fy);
    }
    if (op == "//" || op == "%") {
      if (ints) {
        if (y == 0) return invalid_argument("division by zero");
        if (y == -1) {  // INT64_MIN / -1 traps
          if (op == "%") return Value::of(int64_t{0});
          return x == INT64_MIN ? int_result(true, 0) : Value::of(-x);
        }
        int64_t q = x / y, m = x % y;
        if (m != 0 && ((m < 0) != (y < 0))) --q, m += y;  // Python floors
        return Value::of(op == "//" ? q : m);
      }
      if (fy == 0) return invalid_argument("division by zero");
      const double q = std::floor(fx / fy);
      return Value::of(op == "//" ? q : fx - q * fy);
    }
    if (op == "**") {
      if (ints && y >= 0) {  // by squaring: O(log y) steps
        int64_t p = 1, base = x;
        for (int64_t e = y; e > 0; e >>= 1) {
          if ((e & 1) && __builtin_mul_overflow(p, base, &p)) return invalid_argument("integer overflow in **");
          if (e > 1 && __builtin_mul_overflow(base, base, &base)) return invalid_argument("integer overflow in **");
        }
        return Value::of(p);
      }
      return Value::of(std::pow(fx, fy));
    }
    return invalid_argument("unknown operator ", op);
  }

  static Result<Value> concatenate(const std::string& a, const std::string& b) {
    XONNX_RETURN_IF_ERROR(check_string_size(a.size() + b.size()));
    return Value::of(a + b);
  }

  std::vector<Scope> scopes_;
  int call_depth_ = 0;
  int64_t steps_left_ = kMaxSteps;
};

}  // namespace
}  // namespace jinja

Result<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  try {
    XONNX_ASSIGN_OR_RETURN(std::shared_ptr<jinja::Template> t, jinja::parse_template(source));
    ChatTemplate ct;
    ct.template_ = std::move(t);
    return ct;
  } catch (const std::exception& e) {  // bad_alloc: the bounds above are per value, not in total
    return resource_exhausted("chat template: ", e.what());
  }
}

Result<std::string> ChatTemplate::render(const OrderedJson& context) const {
  if (json_nesting(context) > jinja::kMaxNesting) {
    return invalid_argument("chat template variables (messages, tools) nested deeper than ", jinja::kMaxNesting);
  }
  try {
    jinja::Renderer renderer(context);
    return renderer.run(*template_);
  } catch (const std::exception& e) {
    return resource_exhausted("chat template: ", e.what());
  }
}

Result<std::string> apply_chat_template(const TokenizerConfig& config, const OrderedJson& messages,
                                        const ChatOptions& options) {
  if (!messages.is_array()) return invalid_argument("messages must be a JSON array of {role, content} objects");
  std::string source = options.template_source;
  if (source.empty()) {
    std::string name = options.template_name;
    if (name.empty()) {
      name = "default";
      const bool has_tools = options.tools.is_array() && !options.tools.empty();
      for (const auto& [n, body] : config.chat_templates) {
        if (has_tools && n == "tool_use") name = "tool_use";
      }
    }
    for (const auto& [n, body] : config.chat_templates) {
      if (n == name) source = body;
    }
    if (source.empty()) {
      return not_found(config.chat_templates.empty()
                           ? std::string("tokenizer_config.json has no chat_template")
                           : "tokenizer_config.json has no chat template named \"" + name + "\"");
    }
  }
  XONNX_ASSIGN_OR_RETURN(ChatTemplate t, ChatTemplate::parse(source));
  OrderedJson context = options.extra.is_object() ? options.extra : OrderedJson::object();
  context["messages"] = messages;
  context["add_generation_prompt"] = options.add_generation_prompt;
  context["tools"] = options.tools.is_array() ? options.tools : OrderedJson(nullptr);
  if (!context.contains("documents")) context["documents"] = nullptr;
  const std::pair<const char*, const std::string*> tokens[] = {{"bos_token", &config.bos_token},
                                                               {"eos_token", &config.eos_token},
                                                               {"unk_token", &config.unk_token},
                                                               {"pad_token", &config.pad_token}};
  for (const auto& [key, value] : tokens) {
    if (!value->empty() && !context.contains(key)) context[key] = *value;
  }
  return t.render(context);
}

}  // namespace xonnx::genai
