#include "converter/passes/rotary_tables.h"

#include <cmath>
#include <set>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "converter/value_probe.h"

namespace xonnx {
namespace convert {
namespace {

constexpr int kMaxTableNodes = 64;  // a rotary cos / sin computation is a handful of nodes
constexpr double kTableTol = 1e-6;

bool is_integer(DataType t) {
  return t == DataType::kInt64 || t == DataType::kInt32 || t == DataType::kInt16 || t == DataType::kInt8 ||
         t == DataType::kUint8;
}

// Index ops an integer positions tensor passes through on its way to a Cast / Gather; the walk
// continues through them to the positions themselves (whose producer is something else).
bool is_index_reshape(const Node& n) {
  return n.domain.empty() && (n.op_type == "Unsqueeze" || n.op_type == "Squeeze" || n.op_type == "Cast" ||
                              n.op_type == "Identity" || n.op_type == "Reshape");
}

// An integer value computed only from constants and the shapes of non-input float values (the
// target of a Reshape that flattens the interleaved pairs, when torch did not fold it): shape
// metadata of the cos / sin computation itself, not where the positions come from.
bool is_shape_metadata(const Graph& g, const GraphIndex& index, const ShapeFacts& facts, const std::string& value) {
  std::vector<std::string> stack = {value};
  std::set<std::string> seen;
  while (!stack.empty()) {
    const std::string v = stack.back();
    stack.pop_back();
    if (v.empty() || !seen.insert(v).second || constant_tensor(g, v)) continue;
    const int p = index.producer(v);
    if (p < 0 || seen.size() > static_cast<size_t>(kMaxTableNodes)) return false;  // a graph input
    const Node& n = g.nodes[static_cast<size_t>(p)];
    if (n.domain.empty() && n.op_type == "Shape") {
      const TypeInfo* t = facts.type(n.inputs[0]);
      if (!t || is_integer(t->elem_type) || index.producer(n.inputs[0]) < 0) return false;
      continue;
    }
    for (const std::string& in : n.inputs) {
      const TypeInfo* t = facts.type(in);
      if (!in.empty() && !constant_tensor(g, in) && !(t && is_integer(t->elem_type))) return false;
      stack.push_back(in);
    }
  }
  return true;
}

struct Sources {
  std::set<std::string> positions;  // non-constant integer leaves
  int64_t table_rows = 0;           // rows of a constant table gathered from (0: none)
};

// Walks back from `value` to constants and integer leaves.
Status walk(const Graph& g, const GraphIndex& index, const ShapeFacts& facts, const std::string& value, Sources* s) {
  std::vector<std::string> stack = {value};
  std::set<std::string> seen;
  int nodes = 0;
  while (!stack.empty()) {
    const std::string v = stack.back();
    stack.pop_back();
    if (v.empty() || !seen.insert(v).second || constant_tensor(g, v)) continue;
    const TypeInfo* t = facts.type(v);
    const bool integer = t && is_integer(t->elem_type);
    const int p = index.producer(v);
    if (integer) {
      // Follow pure re-indexing back to the positions; anything else that makes integers is
      // where the positions come from.
      if (p >= 0 && is_index_reshape(g.nodes[static_cast<size_t>(p)])) {
        const Node& n = g.nodes[static_cast<size_t>(p)];
        const TypeInfo* in = facts.type(n.inputs[0]);
        bool rest_constant = true;
        for (size_t i = 1; i < n.inputs.size(); ++i)
          rest_constant = rest_constant && (n.inputs[i].empty() || constant_tensor(g, n.inputs[i]));
        if (in && is_integer(in->elem_type) && rest_constant) {
          stack.push_back(n.inputs[0]);
          continue;
        }
      }
      if (!is_shape_metadata(g, index, facts, v)) s->positions.insert(v);
      continue;
    }
    if (p < 0) return invalid_argument("it depends on the input '", v, "'");
    if (++nodes > kMaxTableNodes) return invalid_argument("its computation is larger than a rotary table's");
    const Node& n = g.nodes[static_cast<size_t>(p)];
    if (n.domain.empty() && n.op_type == "Gather" && n.inputs.size() == 2 && attr_int_or(n, "axis", 0) == 0) {
      if (const Tensor* table = constant_tensor(g, n.inputs[0])) {
        if (table->rank() >= 1) s->table_rows = s->table_rows ? std::min(s->table_rows, table->dim(0)) : table->dim(0);
      }
    }
    for (const std::string& in : n.inputs) stack.push_back(in);
  }
  return Status::ok();
}

Tensor positions_tensor(const std::vector<int64_t>& values, int64_t rank) {
  const int64_t n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>(values, rank == 1 ? Shape{n} : Shape{1, n});
}

// Evaluates `value` for the given positions; returns it as [n, head_dim] (leading dims must be 1).
Result<std::vector<float>> rows_for(const Model& model, const ShapeFacts& facts, const std::string& value,
                                    const RotaryTables& t, const std::vector<int64_t>& positions, int64_t head_dim) {
  ValueProbe probe(model, &facts);
  Probe p;
  p.pinned[t.positions] = positions_tensor(positions, t.positions_rank);
  XONNX_ASSIGN_OR_RETURN(Tensor out, probe.evaluate(value, p));
  const int64_t n = static_cast<int64_t>(positions.size());
  if (out.dtype() != DataType::kFloat || out.rank() < 2 || out.dim(out.rank() - 1) != head_dim ||
      out.dim(out.rank() - 2) != n) {
    return invalid_argument("for ", n, " positions it is ", shape_to_string(out.shape()), ", not [..., ", n, ", ",
                            head_dim, "] float32");
  }
  for (size_t i = 0; i + 2 < out.rank(); ++i) {
    if (out.dim(i) != 1)
      return invalid_argument("it varies along more than the positions: ", shape_to_string(out.shape()));
  }
  return std::vector<float>(out.data<float>(), out.data<float>() + out.numel());
}

// [rows, head_dim] -> the [rows, head_dim / 2] cache, when the two copies of each angle agree.
Result<Tensor> half_table(const std::vector<float>& full, int64_t rows, int64_t head_dim, bool interleaved) {
  const int64_t half = head_dim / 2;
  std::vector<float> out(static_cast<size_t>(rows * half));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < half; ++j) {
      const float a = full[r * head_dim + (interleaved ? 2 * j : j)];
      const float b = full[r * head_dim + (interleaved ? 2 * j + 1 : j + half)];
      if (!(std::fabs(a - b) <= kTableTol)) {
        return invalid_argument("row ", r, " is not ",
                                interleaved ? "pairs of equal values (interleaved)" : "two equal halves", " (", a,
                                " vs ", b, ")");
      }
      out[static_cast<size_t>(r * half + j)] = a;
    }
  }
  return Tensor::from_vector<float>(out, {rows, half});
}

Result<Tensor> table_of(const Model& model, const ShapeFacts& facts, const std::string& value, const RotaryTables& t,
                        int64_t rows, int64_t head_dim, bool interleaved) {
  std::vector<int64_t> all(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) all[static_cast<size_t>(i)] = i;
  XONNX_ASSIGN_OR_RETURN(std::vector<float> full, rows_for(model, facts, value, t, all, head_dim));
  // Row by row: scattered positions must give the same rows.
  std::vector<int64_t> scattered;
  for (int64_t k = 0; k < std::min<int64_t>(rows, 13); ++k) scattered.push_back((k * 37 + 5) % rows);
  XONNX_ASSIGN_OR_RETURN(std::vector<float> some, rows_for(model, facts, value, t, scattered, head_dim));
  for (size_t k = 0; k < scattered.size(); ++k) {
    for (int64_t j = 0; j < head_dim; ++j) {
      const float a = some[k * static_cast<size_t>(head_dim) + static_cast<size_t>(j)];
      const float b = full[static_cast<size_t>(scattered[k] * head_dim + j)];
      if (!(std::fabs(a - b) <= kTableTol)) {
        return invalid_argument("it is not a function of each position alone (position ", scattered[k], ")");
      }
    }
  }
  return half_table(full, rows, head_dim, interleaved);
}

}  // namespace

Result<RotaryTables> rotary_tables(const Model& model, const ShapeFacts& facts, const std::string& cos,
                                   const std::string& sin, int64_t head_dim, bool interleaved, int64_t rows) {
  const Graph& g = model.graph;
  if (head_dim <= 0 || head_dim % 2)
    return invalid_argument("the head size ", head_dim, " is not a positive even number");
  const GraphIndex index(g);
  Sources sources;
  Status st = walk(g, index, facts, cos, &sources);
  if (!st.is_ok()) return st.with_context("cos '" + cos + "': ");
  st = walk(g, index, facts, sin, &sources);
  if (!st.is_ok()) return st.with_context("sin '" + sin + "': ");
  if (sources.positions.size() != 1) {
    return invalid_argument("cos and sin depend on ", sources.positions.size(),
                            " integer values, not on one positions tensor");
  }
  RotaryTables t;
  t.positions = *sources.positions.begin();
  const TypeInfo* pt = facts.type(t.positions);
  const std::vector<Dim>* pd = facts.dims(t.positions);
  if (!pt || pt->elem_type != DataType::kInt64 || !pd || pd->empty() || pd->size() > 2) {
    return invalid_argument("the positions '", t.positions, "' are not int64 [S] or [B, S]");
  }
  t.positions_rank = static_cast<int64_t>(pd->size());
  if (sources.table_rows > 0) rows = rows > 0 ? std::min(rows, sources.table_rows) : sources.table_rows;
  if (rows <= 0) {
    return invalid_argument(
        "cos and sin are computed in the graph and the context length is unknown "
        "(give --context-length, or a genai_config.json beside the model)");
  }
  auto c = table_of(model, facts, cos, t, rows, head_dim, interleaved);
  if (!c.is_ok()) return c.status().with_context("cos '" + cos + "': ");
  auto s = table_of(model, facts, sin, t, rows, head_dim, interleaved);
  if (!s.is_ok()) return s.status().with_context("sin '" + sin + "': ");
  t.cos = std::move(c).value();
  t.sin = std::move(s).value();
  return t;
}

}  // namespace convert
}  // namespace xonnx
