// A selection of rows, Gather of one constant index or Slice of one constant range along an axis,
// moves up through the row-wise ops that computed its input, so that they compute only the rows
// it reads. ViT's classifier reads the class token of the last encoder layer (`x[:, 0]`): that
// layer's MLP, output projection, queries and attention then run for one row instead of 197. An
// op is row-wise along an axis when each output row reads only the same row of the inputs that
// have the axis: element-wise ops with broadcasting, LayerNormalization, Softmax and reductions
// over other axes, MatMul / Gemm rows and batch axes, Attention's query rows (not causal),
// Transpose, reshapes of known dims, Slice and Concat of other axes. The selection becomes a
// Slice of each such input; Slices that meet at a value from all of its readers merge and climb
// on (a decomposed GELU reads its input twice). A climb stops at a value something else reads,
// a graph output or unknown dims, where its Slice stays; it is kept only when a product or an
// attention computes fewer rows. The rows kept are the same sums (a kernel over fewer rows may
// order them differently). Session creation only.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// The selection a climb starts from: rows [begin, end) of `axis` of `data`, with ONNX Slice's
// meaning of negative and past-the-end bounds.
struct Selection {
  std::string data;
  int64_t axis = 0, begin = 0, end = 0;
  bool gather = false;  // a Gather: it stays, reading index 0 of the rows computed
};

bool same_dim(const Dim& x, const Dim& y) {
  return (x.known() && y.known()) ? x.value == y.value : (!x.param.empty() && x.param == y.param);
}

bool is_one(const Dim& d) { return d.known() && d.value == 1; }

bool all_known(const std::vector<Dim>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.known(); });
}

const std::set<std::string>& elementwise_ops() {
  // clang-format off
  static const std::set<std::string> ops = {
      "Abs", "Add", "And", "Cast", "Ceil", "Celu", "Clip", "Cos", "Div", "Elu", "Equal", "Erf", "Exp",
      "Floor", "Gelu", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf",
      "IsNaN", "LeakyRelu", "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mish", "Mul", "Neg",
      "Not", "Or", "Pow", "PRelu", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin",
      "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tanh", "ThresholdedRelu", "Where"};
  // clang-format on
  return ops;
}

bool is_elementwise(const Node& n) {
  if (n.domain.empty()) return elementwise_ops().count(n.op_type) != 0;
  return n.domain == "com.microsoft" &&
         (n.op_type == "Gelu" || n.op_type == "FastGelu" || n.op_type == "QuickGelu" || n.op_type == "BiasGelu");
}

bool is_reduction(const Node& n) {
  static const std::set<std::string> ops = {"ReduceL1",   "ReduceL2",   "ReduceLogSumExp",
                                            "ReduceMax",  "ReduceMean", "ReduceMin",
                                            "ReduceProd", "ReduceSum",  "ReduceSumSquare"};
  return n.domain.empty() && ops.count(n.op_type) != 0;
}

bool is_reshape(const Node& n) {
  return n.domain.empty() &&
         (n.op_type == "Reshape" || n.op_type == "Squeeze" || n.op_type == "Unsqueeze" || n.op_type == "Flatten");
}

// The ops whose work a climb exists to cut.
bool is_product(const Node& n) {
  if (n.domain.empty()) return n.op_type == "MatMul" || n.op_type == "Gemm" || n.op_type == "Attention";
  return n.domain == "com.microsoft" && (n.op_type == "FusedMatMul" || n.op_type == "MatMulNBits");
}

// ORT's normalizations over the last axis (contrib ops; SimplifiedLayerNormalization also in the
// default domain, as the runtime's fusions write it): the fused forms of models optimized for ORT.
bool is_norm(const Node& n) {
  if (n.op_type == "SimplifiedLayerNormalization") return n.domain.empty() || n.domain == "com.microsoft";
  return n.domain == "com.microsoft" &&
         (n.op_type == "SkipSimplifiedLayerNormalization" || n.op_type == "SkipLayerNormalization");
}

// The ops RowPlanner::plan may take (given shapes).
bool row_wise_kind(const Node& n) {
  static const std::set<std::string> ops = {"Softmax", "LogSoftmax", "Hardmax", "LayerNormalization",
                                            "Gemm",    "Transpose",  "Slice",   "Concat",
                                            "MatMul",  "Attention"};
  return is_elementwise(n) || is_reduction(n) || is_reshape(n) || is_product(n) || is_norm(n) ||
         (n.domain.empty() && ops.count(n.op_type) != 0);
}

// How a row-wise op computes fewer rows of output axis `axis`: input i is cut along cut[i]
// (-1: read whole); a reshape becomes Reshape(cut input, reshape_to).
struct Plan {
  std::vector<int64_t> cut;
  bool reshape = false;
  std::vector<int64_t> reshape_to;
};

class RowPlanner {
 public:
  RowPlanner(const Model& model, const ShapeFacts& facts) : model_(model), facts_(facts) {}

  // Whether node `n`, whose output 0 a selection of `rows` rows of `axis` reads (rows: 0 when
  // unknown), can compute just those rows; the cuts in *plan.
  bool plan(const Node& n, int64_t axis, int64_t rows, Plan* plan) const {
    const std::vector<Dim>* out = facts_.dims(n.outputs.empty() ? "" : n.outputs[0]);
    if (!out || axis < 0 || axis >= static_cast<int64_t>(out->size())) return false;
    plan->cut.assign(n.inputs.size(), -1);
    plan->reshape = false;
    const int64_t rank = static_cast<int64_t>(out->size());
    const Dim& extent = (*out)[static_cast<size_t>(axis)];
    if (is_elementwise(n)) return broadcast_all(n, 0, *out, axis, plan);
    if (is_norm(n)) {  // the skip forms normalize the last axis; their sum output must be unread
      const int64_t first = n.op_type == "SimplifiedLayerNormalization" ? attr_int_or(n, "axis", -1) : -1;
      if (axis >= normalized(first, rank)) return false;
      return broadcast_all(n, 0, *out, axis, plan);
    }
    if (!n.domain.empty() && !(n.domain == "com.microsoft" && is_product(n))) return false;
    const std::string& op = n.op_type;
    if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
      const bool single_axis = opset_of(model_, n) >= 13;
      const int64_t a = normalized(attr_int_or(n, "axis", single_axis ? -1 : 1), rank);
      if (single_axis ? axis == a : axis >= a) return false;
      return cut(n, 0, axis, extent, plan);
    }
    if (op == "LayerNormalization") {
      if (axis >= normalized(attr_int_or(n, "axis", -1), rank)) return false;
      return broadcast_all(n, 0, *out, axis, plan);
    }
    if (is_reduction(n)) {
      std::vector<int64_t> axes;
      if (attr_int_or(n, "keepdims", 1) != 1 || !constant_ints(model_.graph, n, 1, "axes", axes) || axes.empty())
        return false;
      for (const int64_t a : axes)
        if (normalized(a, rank) == axis) return false;
      return cut(n, 0, axis, extent, plan);
    }
    if (op == "MatMul" || op == "FusedMatMul" || op == "MatMulNBits") return plan_matmul(n, *out, axis, plan);
    if (op == "Gemm") {
      if (rank != 2 || axis != 0 || n.inputs.size() < 2) return false;
      const int64_t a_rows = attr_int_or(n, "transA", 0) != 0 ? 1 : 0;
      if (!cut(n, 0, a_rows, extent, plan)) return false;
      return n.inputs.size() < 3 || n.inputs[2].empty() || broadcast(n, 2, *out, axis, plan);
    }
    if (op == "Attention") return plan_attention(n, *out, axis, plan);
    if (op == "Transpose") {
      std::vector<int64_t> perm;
      if (const Attribute* p = n.find_attr("perm")) perm = p->ints;
      if (perm.empty())
        for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
      if (static_cast<int64_t>(perm.size()) != rank) return false;
      return cut(n, 0, perm[static_cast<size_t>(axis)], extent, plan);
    }
    if (is_reshape(n)) return plan_reshape(n, *out, axis, rows, plan);
    if (op == "Slice") {
      std::vector<int64_t> starts, axes;
      const bool inputs_form = opset_of(model_, n) >= 10;
      if (!constant_ints(model_.graph, n, inputs_form ? 1 : SIZE_MAX, "starts", starts)) return false;
      const bool has_axes = inputs_form ? n.inputs.size() > 3 && !n.inputs[3].empty() : n.find_attr("axes") != nullptr;
      if (has_axes && !constant_ints(model_.graph, n, inputs_form ? 3 : SIZE_MAX, "axes", axes)) return false;
      if (!has_axes)
        for (size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<int64_t>(a));
      for (const int64_t a : axes)
        if (normalized(a, rank) == axis) return false;
      return cut(n, 0, axis, extent, plan);
    }
    if (op == "Concat") {
      if (normalized(attr_int_or(n, "axis", 0), rank) == axis) return false;
      return broadcast_all(n, 0, *out, axis, plan);
    }
    return false;
  }

  const std::vector<Dim>* dims(const std::string& name) const { return facts_.dims(name); }

 private:
  static int64_t normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

  // Input i is cut along its axis `at`, whose extent must be the output's `extent`.
  bool cut(const Node& n, size_t i, int64_t at, const Dim& extent, Plan* plan) const {
    const std::vector<Dim>* d = i < n.inputs.size() ? facts_.dims(n.inputs[i]) : nullptr;
    if (!d || at < 0 || at >= static_cast<int64_t>(d->size()) || !same_dim((*d)[static_cast<size_t>(at)], extent))
      return false;
    plan->cut[i] = at;
    return true;
  }

  // Input i broadcast (numpy-style, right-aligned) to `out`: cut where it has the axis, read
  // whole where it lacks it or holds one row.
  bool broadcast(const Node& n, size_t i, const std::vector<Dim>& out, int64_t axis, Plan* plan) const {
    if (n.inputs[i].empty()) return true;
    const std::vector<Dim>* d = facts_.dims(n.inputs[i]);
    if (!d || d->size() > out.size()) return false;
    const int64_t at = axis - static_cast<int64_t>(out.size() - d->size());
    if (at < 0 || is_one((*d)[static_cast<size_t>(at)])) return true;
    return cut(n, i, at, out[static_cast<size_t>(axis)], plan);
  }

  bool broadcast_all(const Node& n, size_t first, const std::vector<Dim>& out, int64_t axis, Plan* plan) const {
    for (size_t i = first; i < n.inputs.size(); ++i)
      if (!broadcast(n, i, out, axis, plan)) return false;
    return true;
  }

  // Rows of A (B read whole), or a batch axis both operands broadcast over. FusedMatMul with a
  // transposed A and MatMulNBits' packed B take rows only.
  bool plan_matmul(const Node& n, const std::vector<Dim>& out, int64_t axis, Plan* plan) const {
    const int64_t rank = static_cast<int64_t>(out.size());
    const std::vector<Dim>* a = n.inputs.empty() ? nullptr : facts_.dims(n.inputs[0]);
    if (!a || a->size() < 2 || n.inputs.size() < 2 || axis >= rank - 1) return false;
    const bool fused = n.op_type == "FusedMatMul";
    if (fused && (attr_int_or(n, "transA", 0) != 0 || attr_int_or(n, "transBatchA", 0) != 0 ||
                  attr_int_or(n, "transBatchB", 0) != 0))
      return false;
    if (axis == rank - 2) return cut(n, 0, static_cast<int64_t>(a->size()) - 2, out[static_cast<size_t>(axis)], plan);
    if (n.op_type == "MatMulNBits") return cut(n, 0, axis, out[static_cast<size_t>(axis)], plan);
    const std::vector<Dim>* b = facts_.dims(n.inputs[1]);
    if (!b || b->size() < 2) return false;
    return broadcast(n, 0, out, axis, plan) && broadcast(n, 1, out, axis, plan);
  }

  // Query rows of a non-causal Attention (Q [B, S, hidden] or [B, heads, S, d]): the mask's rows
  // go with them; keys, values and past keys are read whole. The present keys and the scores
  // output must be unread (the caller checks).
  bool plan_attention(const Node& n, const std::vector<Dim>& out, int64_t axis, Plan* plan) const {
    if (attr_int_or(n, "is_causal", 0) != 0 || n.inputs.size() < 3 || n.inputs.size() > 6) return false;
    const int64_t rank = static_cast<int64_t>(out.size());
    if (axis != rank - 2 || !cut(n, 0, axis, out[static_cast<size_t>(axis)], plan)) return false;
    if (n.inputs.size() < 4 || n.inputs[3].empty()) return true;
    const std::vector<Dim>* mask = facts_.dims(n.inputs[3]);
    if (!mask) return false;
    if (mask->size() < 2) return true;  // one row for every query
    const int64_t rows = static_cast<int64_t>(mask->size()) - 2;
    if (is_one((*mask)[static_cast<size_t>(rows)])) return true;
    return cut(n, 3, rows, out[static_cast<size_t>(axis)], plan);
  }

  // A reshape where output axis `axis` is an axis of the input with the same elements before it:
  // Reshape(input cut on that axis, the output's dims with `rows` there). With symbolic dims the
  // dims before the axis must be the input's own (written 0: copied) and at most one of the axis
  // itself (when symbolic) and the dims after it unknown (written -1).
  bool plan_reshape(const Node& n, const std::vector<Dim>& out, int64_t axis, int64_t rows, Plan* plan) const {
    const std::vector<Dim>* in = n.inputs.empty() ? nullptr : facts_.dims(n.inputs[0]);
    if (!in || rows <= 0 || opset_of(model_, n) < 5) return false;
    const size_t a = static_cast<size_t>(axis);
    int64_t at = -1;
    if (all_known(*in) && all_known(out)) {
      int64_t before = 1, in_before = 1;
      for (size_t d = 0; d < a; ++d)
        if (__builtin_mul_overflow(before, out[d].value, &before)) return false;
      for (size_t d = 0; d < in->size() && at < 0; ++d) {
        if (in_before == before && (*in)[d].value == out[a].value) at = static_cast<int64_t>(d);
        if (__builtin_mul_overflow(in_before, (*in)[d].value, &in_before)) return false;
      }
    } else if (a < in->size()) {
      at = axis;
      for (size_t d = 0; d < a; ++d)
        if (!same_dim((*in)[d], out[d])) return false;
    }
    if (at < 0 || !cut(n, 0, at, out[a], plan)) return false;
    plan->cut.resize(1);
    plan->reshape = true;
    plan->reshape_to.clear();
    int unknown = 0;
    for (size_t d = 0; d < out.size(); ++d) {
      if (out[d].known() && out[d].value == 0) return false;  // 0 would mean "copy"
      if (d == a && out[d].known()) {
        plan->reshape_to.push_back(rows);
      } else if (d == a) {
        // Of a symbolic extent `rows` is what the selection's bounds fix, at most: an input of
        // fewer rows gives fewer (Slice clamps), so the count is inferred.
        if (++unknown > 1) return false;
        plan->reshape_to.push_back(-1);
      } else if (out[d].known()) {
        plan->reshape_to.push_back(out[d].value);
      } else if (d < a) {
        plan->reshape_to.push_back(0);
      } else {
        if (++unknown > 1) return false;
        plan->reshape_to.push_back(-1);
      }
    }
    return true;
  }

  const Model& model_;
  const ShapeFacts& facts_;
};

// The rows a selection keeps of an axis of `extent`; with a symbolic extent, the count its bounds
// fix (0: unknown).
int64_t rows_of(const Selection& sel, const Dim& extent) {
  if (extent.known()) {
    return std::max<int64_t>(0, slice_bound(sel.end, extent.value) - slice_bound(sel.begin, extent.value));
  }
  if (sel.end == INT64_MAX) return sel.begin < 0 ? -sel.begin : 0;  // the last rows (torch's x[:, -k:])
  return (sel.begin < 0) == (sel.end < 0) && sel.end > sel.begin ? sel.end - sel.begin : 0;
}

// The selection node `n` makes, when it is one a climb starts from: fewer rows than its input has.
bool selection_of(const Model& model, const Node& n, const ShapeFacts& facts, Selection* sel) {
  // Below opset 10 the Slices the climb writes would need another form (the converter's files
  // cannot give one node a newer opset).
  if (!n.domain.empty() || n.inputs.empty() || n.outputs.size() != 1 || opset_of(model, n) < 10) return false;
  const std::vector<Dim>* dims = facts.dims(n.inputs[0]);
  if (!dims || dims->empty()) return false;
  const int64_t rank = static_cast<int64_t>(dims->size());
  const auto axis_of = [rank](int64_t a) { return a < 0 ? a + rank : a; };
  if (n.op_type == "Gather") {
    const Tensor* index = n.inputs.size() == 2 ? constant_tensor(model.graph, n.inputs[1]) : nullptr;
    if (!index || (index->dtype() != DataType::kInt64 && index->dtype() != DataType::kInt32) || index->numel() != 1 ||
        index->rank() > 1)
      return false;
    const int64_t axis = axis_of(attr_int_or(n, "axis", 0)), i = index->get_as_int64(0);
    if (axis < 0 || axis >= rank || i == INT64_MAX) return false;
    // Index -1 is the last row: Slice's end past the axis, not 0.
    *sel = {n.inputs[0], axis, i, i == -1 ? INT64_MAX : i + 1, true};
    const Dim& d = (*dims)[static_cast<size_t>(axis)];
    return !d.known() || (d.value > 1 && i >= -d.value && i < d.value);
  }
  if (n.op_type != "Slice" || n.inputs.size() < 4) return false;
  std::vector<int64_t> starts, ends, axes, steps;
  if (!constant_ints(model.graph, n, 1, nullptr, starts) || !constant_ints(model.graph, n, 2, nullptr, ends) ||
      !constant_ints(model.graph, n, 3, nullptr, axes) || starts.size() != 1 || ends.size() != 1 || axes.size() != 1)
    return false;
  if (n.inputs.size() > 4 && !n.inputs[4].empty() &&
      (!constant_ints(model.graph, n, 4, nullptr, steps) || steps.size() != 1 || steps[0] != 1))
    return false;
  const int64_t axis = axis_of(axes[0]);
  if (axis < 0 || axis >= rank) return false;
  *sel = {n.inputs[0], axis, starts[0], ends[0], false};
  const Dim& d = (*dims)[static_cast<size_t>(axis)];
  if (!d.known()) return rows_of(*sel, d) > 0;  // a fixed count of rows
  const int64_t rows = rows_of(*sel, d);
  return rows > 0 && rows < d.value;
}

// Whether a Gather or Slice reads the only use of a value an op of a row-wise kind produced: the
// cheap test before any shape is looked at.
bool has_row_wise_selection(const Graph& g) {
  std::unordered_map<std::string, int> uses;  // of the values selections read
  for (const Node& n : g.nodes)
    if ((is_default(n, "Gather") || is_default(n, "Slice")) && !n.inputs.empty()) uses.emplace(n.inputs[0], 0);
  if (uses.empty()) return false;
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs) {
      const auto u = uses.find(in);
      if (u != uses.end()) ++u->second;
    }
  for (const Node& n : g.nodes) {
    if (n.outputs.empty() || !row_wise_kind(n)) continue;
    const auto u = uses.find(n.outputs[0]);
    if (u != uses.end() && u->second == 1) return true;
  }
  return false;
}

// One selection's climb over the graph as it stands. The walk goes from the selection towards
// the graph's start, so every reader of a value comes before its producer: a value is computed
// in fewer rows ("narrowed") when all of its readers are narrowed nodes that cut it along the
// same axis, its producer is row-wise along that axis and nothing else (a graph output, a
// second output of the producer) needs all of it.
class Climb {
 public:
  // `view` is over the graph as it stands; rewrite() commits it.
  Climb(Model& model, const RowPlanner& planner, FusionView& view, const Selection& sel, int at)
      : model_(model), planner_(planner), view_(view), sel_(sel), at_(at) {}

  // The products and attentions the climb would cut; walk() first.
  int products() const { return products_; }

  // Finds the nodes to narrow.
  void walk() {
    const GraphIndex& index = view_.index();
    reach(sel_.data, sel_.axis);
    for (int i = at_ - 1; i >= 0; --i) {
      const Node& n = view_.node(i);
      if (n.outputs.empty()) continue;
      const auto r = reached_.find(n.outputs[0]);
      if (r == reached_.end() || r->second.conflict || r->second.uses != index.use_count(n.outputs[0]) ||
          index.is_graph_output(n.outputs[0]) || !rest_unread(n))
        continue;
      const int64_t axis = r->second.axis;
      Plan plan;
      if (!planner_.plan(n, axis, rows_of(sel_, extent_of(n.outputs[0], axis)), &plan)) continue;
      for (size_t in = 0; in < plan.cut.size(); ++in)
        if (plan.cut[in] >= 0) reach(n.inputs[in], plan.cut[in]);
      plans_.emplace(i, std::move(plan));
      if (is_product(n)) ++products_;
    }
  }

  // Rewrites the graph: each narrowed node computes its rows from its inputs' rows, Slices
  // where an input is not narrowed.
  void rewrite() {
    NameAllocator names(model_.graph);
    starts_ = add_initializer(model_.graph, names, sel_.data + "/rows_start",
                              Tensor::from_vector<int64_t>({sel_.begin}, Shape{1}));
    ends_ = add_initializer(model_.graph, names, sel_.data + "/rows_end",
                            Tensor::from_vector<int64_t>({sel_.end}, Shape{1}));
    const Node sel_node = view_.node(at_);
    for (const auto& [i, plan] : plans_) {
      const std::string& out = view_.node(i).outputs[0];
      narrowed_[out] = out == sel_.data && !sel_.gather ? sel_node.outputs[0] : names.fresh(out + "/rows");
    }
    for (const auto& [i, plan] : plans_) {
      const Node& p = view_.node(i);
      std::vector<Node> nodes;
      Node cut = p;
      for (size_t in = 0; in < plan.cut.size(); ++in) {
        if (plan.cut[in] < 0) continue;
        const auto done = narrowed_.find(p.inputs[in]);
        if (done != narrowed_.end()) {
          cut.inputs[in] = done->second;
          continue;
        }
        // One Slice per value and axis, made where its first reader stands (nodes go by index).
        std::string& slice = slices_[{p.inputs[in], plan.cut[in]}];
        if (slice.empty()) {
          slice = names.fresh(p.inputs[in] + "/rows");
          Node s = make_node("Slice", "", names.fresh(p.name + "/rows_of_input_" + std::to_string(in)),
                             {p.inputs[in], starts_, ends_, axis_constant(names, plan.cut[in])}, {slice});
          s.origin = p.origin.empty() ? p.describe() : p.origin;
          nodes.push_back(std::move(s));
        }
        cut.inputs[in] = slice;
      }
      if (plan.reshape) {
        cut.op_type = "Reshape";
        cut.domain.clear();
        cut.inputs.resize(1);
        cut.inputs.push_back(
            add_initializer(model_.graph, names, p.name + "/rows_shape",
                            Tensor::from_vector(plan.reshape_to, Shape{static_cast<int64_t>(plan.reshape_to.size())})));
        cut.attributes.clear();
      }
      cut.outputs = {narrowed_.at(p.outputs[0])};
      if (cut.origin.empty()) cut.origin = p.describe();
      nodes.push_back(std::move(cut));
      std::vector<int> gone = {i};
      if (p.outputs[0] == sel_.data) {
        gone.push_back(at_);
        // A Gather reads index 0 of the rows computed: an index out of range still fails there.
        if (sel_.gather) nodes.push_back(first_row(names, sel_node, narrowed_.at(sel_.data)));
      }
      view_.replace(gone, i, std::move(nodes));
    }
    view_.commit();
  }

 private:
  struct Reach {
    int64_t axis = 0;
    int uses = 0;
    bool conflict = false;  // readers cut it along different axes
  };

  void reach(const std::string& value, int64_t axis) {
    auto [r, first] = reached_.try_emplace(value);
    if (!first && r->second.axis != axis) r->second.conflict = true;
    r->second.axis = axis;
    ++r->second.uses;
  }

  const Dim& extent_of(const std::string& value, int64_t axis) const {
    static const Dim unknown;
    const std::vector<Dim>* d = planner_.dims(value);
    return d && axis < static_cast<int64_t>(d->size()) ? (*d)[static_cast<size_t>(axis)] : unknown;
  }

  // Node `n`'s outputs after the first are unread (an op's optional statistics): they may go.
  bool rest_unread(const Node& n) const {
    for (size_t o = 1; o < n.outputs.size(); ++o)
      if (!n.outputs[o].empty() && view_.index().use_count(n.outputs[o]) != 0) return false;
    return true;
  }

  Node first_row(NameAllocator& names, const Node& gather, const std::string& rows) {
    const Tensor index = *constant_tensor(model_.graph, gather.inputs[1]);  // add_initializer may move it
    Node first = gather;
    first.inputs = {
        rows, add_initializer(model_.graph, names, gather.inputs[1] + "/first",
                              index.dtype() == DataType::kInt32 ? Tensor::from_vector<int32_t>({0}, index.shape())
                                                                : Tensor::from_vector<int64_t>({0}, index.shape()))};
    return first;
  }

  const std::string& axis_constant(NameAllocator& names, int64_t axis) {
    std::string& name = axes_[axis];
    if (name.empty())
      name = add_initializer(model_.graph, names, sel_.data + "/rows_axis",
                             Tensor::from_vector<int64_t>({axis}, Shape{1}));
    return name;
  }

  Model& model_;
  const RowPlanner& planner_;
  FusionView& view_;
  const Selection sel_;
  const int at_;  // the selection node
  std::unordered_map<std::string, Reach> reached_;
  std::map<int, Plan> plans_;                                      // the nodes to narrow, by index
  std::unordered_map<std::string, std::string> narrowed_;          // value -> the name of its rows
  std::map<std::pair<std::string, int64_t>, std::string> slices_;  // (value, axis) -> its Slice
  std::string starts_, ends_;
  std::map<int64_t, std::string> axes_;
  int products_ = 0;
};

}  // namespace

Result<bool> narrow_selected_rows(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  // Cheap tests first: the shape facts may need inferring.
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return is_product(n); }) ||
      !has_row_wise_selection(g))
    return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  const RowPlanner planner(model, facts);
  // The selections whose input's producer is row-wise, found before any edit (by output name).
  std::vector<std::string> starts;
  {
    const GraphIndex index(g);
    for (const Node& n : g.nodes) {
      Selection sel;
      if (!selection_of(model, n, facts, &sel)) continue;
      const int p = index.producer(sel.data);
      const int64_t rows = rows_of(sel, (*facts.dims(sel.data))[static_cast<size_t>(sel.axis)]);  // a reshape's count
      Plan plan;
      if (p >= 0 && index.use_count(sel.data) == 1 &&
          planner.plan(g.nodes[static_cast<size_t>(p)], sel.axis, rows, &plan))
        starts.push_back(n.outputs[0]);
    }
  }
  int taken = 0, products = 0;
  std::optional<FusionView> view;
  for (const std::string& out : starts) {
    if (!view) view.emplace(g);
    // An earlier climb may have rewritten this selection's nodes: look again. The values it
    // made have no facts, so a climb stops where an earlier one went.
    const int at = view->index().producer(out);
    Selection sel;
    if (at < 0 || !selection_of(model, g.nodes[static_cast<size_t>(at)], facts, &sel)) continue;
    Climb climb(model, planner, *view, sel, at);
    climb.walk();
    // A climb through element-wise ops alone would only move copies around.
    if (climb.products() == 0) continue;
    climb.rewrite();
    view.reset();
    ++taken;
    products += climb.products();
  }
  if (taken == 0) return false;
  ctx.note("moved " + std::to_string(taken) + " row selections above the ops computing them (" +
           std::to_string(products) + " products and attentions compute fewer rows)");
  return true;
}

}  // namespace passes
}  // namespace xonnx
