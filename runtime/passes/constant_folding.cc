// Constant folding: a node whose inputs are all constants is evaluated with the runtime's
// reference kernels (node_eval.h: never a fast kernel) and its outputs become initializers of the same
// names. Shape/Size of statically shaped values, and Gather/Slice picking static dims out of a
// partly symbolic Shape, fold from shape inference; the rest of a Shape chain then folds as
// ordinary constants on the next nodes. Subgraph bodies fold over their own initializers.
#include <cstdio>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/node_eval.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

bool never_folded(const Node& n) {
  static const std::set<std::string> kNondeterministic = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                          "RandomUniformLike", "Bernoulli",     "Multinomial"};
  if (n.domain.empty() && (n.op_type == "Constant" || kNondeterministic.count(n.op_type))) {
    return true;
  }
  // A quantized weight stays int8 behind its DequantizeLinear: folding it to float would break
  // the QDQ group the session's QDQ fusion turns into an integer kernel (as ORT keeps it).
  if (n.op_type == "DequantizeLinear" && (n.domain.empty() || n.domain == "com.microsoft")) return true;
  for (const Attribute& a : n.attributes) {
    if (a.g || !a.graphs.empty()) return true;  // If/Loop/Scan: bodies are not evaluated here
  }
  return n.inputs.empty();
}

// A float16 weight cast to float once (float16-in-float's Cast of each weight of a float16
// model): the floats are made when read (Storage::derived_floats), a piece at a time, so the kernels
// pack them from the model's halves and no float copy is allocated and faulted in. Empty when
// the Cast is not that.
std::optional<Tensor> half_weight_as_float(const Node& cast, const Tensor& w) {
  if (w.dtype() != DataType::kFloat16 || !w.storage() || w.numel() <= 0 ||
      attr_int_or(cast, "to", 0) != static_cast<int64_t>(DataType::kFloat))
    return std::nullopt;
  auto fill = [w](size_t first, size_t n, float* out) {
    uint16_t halves[Storage::kDerivedFloatsPiece];
    w.read_bytes(first * sizeof(uint16_t), n * sizeof(uint16_t), halves);
    for (size_t i = 0; i < n; ++i) out[i] = half_to_float(halves[i]);
  };
  return Tensor(DataType::kFloat, w.shape(),
                Storage::derived_floats(static_cast<size_t>(w.numel()), std::move(fill), w.storage()));
}

std::string mb(int64_t bytes) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

// Bytes of an output when its shape is fully known, else -1.
int64_t predicted_bytes(const ShapeFacts* facts, const std::string& name) {
  if (!facts) return -1;
  const TypeInfo* t = facts->type(name);
  std::vector<int64_t> dims;
  if (!t || !t->has_shape || !all_known(t->dims, &dims) || dtype_bits(t->elem_type) == 0) {
    return -1;
  }
  return dtype_storage_bytes(t->elem_type, shape_numel(dims));
}

// Shape, Size, or a Gather/Slice of a Shape's elements whose result inference knows fully.
bool fold_from_shapes(const Node& n, const ShapeFacts* facts, const TensorsByName& constants, Tensor* out) {
  if (!facts || !n.domain.empty() || n.outputs.size() != 1) return false;
  const bool shape_op = n.op_type == "Shape" || n.op_type == "Size";
  const bool pick_op = n.op_type == "Gather" || n.op_type == "Slice";
  if (!shape_op && !pick_op) return false;
  if (pick_op) {
    // Only the data may be non-constant, and it must be a propagated shape value.
    if (n.inputs.empty() || constants.count(n.inputs[0]) || !facts->elements(n.inputs[0])) {
      return false;  // constant data folds through the kernel instead
    }
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      if (!n.inputs[i].empty() && !constants.count(n.inputs[i])) return false;
    }
  }
  const std::vector<Dim>* elems = facts->elements(n.outputs[0]);
  const TypeInfo* type = facts->type(n.outputs[0]);
  std::vector<int64_t> values, dims;
  if (!elems || !type || !type->has_shape || !all_known(*elems, &values) || !all_known(type->dims, &dims) ||
      shape_numel(dims) != static_cast<int64_t>(values.size())) {
    return false;
  }
  if (type->elem_type == DataType::kInt64) {
    *out = Tensor::from_vector<int64_t>(values, dims);
  } else if (type->elem_type == DataType::kInt32) {
    *out = Tensor::from_vector<int32_t>(std::vector<int32_t>(values.begin(), values.end()), dims);
  } else {
    return false;
  }
  return true;
}

// Folding copies a large constant that other nodes still read (a tied weight behind a
// Transpose): the model would grow, so the node stays computed. A result smaller than the shared
// input folds (Slice / Gather cutting a weight into its parts, as torch exports LSTM gates):
// once every part is folded the whole is no longer read and goes.
constexpr int64_t kSharedConstantBytes = 4096;
bool duplicates_shared_constant(const Node& n, const std::vector<const Tensor*>& args,
                                const std::unordered_map<std::string, int>& uses, const std::vector<Value>& results) {
  int64_t result_bytes = 0;
  for (const Value& v : results) result_bytes += v.is_tensor() ? static_cast<int64_t>(v.tensor().nbytes()) : 0;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (!args[k] || static_cast<int64_t>(args[k]->nbytes()) <= kSharedConstantBytes) continue;
    if (result_bytes < static_cast<int64_t>(args[k]->nbytes())) continue;
    int own = 0;
    for (const std::string& in : n.inputs) own += in == n.inputs[k];
    auto it = uses.find(n.inputs[k]);
    if (it != uses.end() && it->second > own) return true;
  }
  return false;
}

struct FoldCounts {
  int evaluated = 0;
  int from_shapes = 0;
  int merged = 0;
  std::set<std::string> warned;  // each warning once over the main graph and its bodies
};

void warn_once(PassContext& ctx, FoldCounts& counts, const std::string& warning) {
  if (counts.warned.insert(warning).second) ctx.warn(warning);
}

// A key for a shape value whose every element is a known number or a named symbolic dim (and at
// least one is symbolic): two such values with the same key are equal at run time, because
// a dim_param names one size for the whole run. Empty when the value does not qualify.
std::string symbolic_value_key(const ShapeFacts* facts, const Node& n) {
  if (!facts || !n.domain.empty() || n.outputs.size() != 1 || n.outputs[0].empty()) return "";
  const std::vector<Dim>* elems = facts->elements(n.outputs[0]);
  const TypeInfo* type = facts->type(n.outputs[0]);
  if (!elems || !type || !type->has_shape || type->dims.size() > 1) return "";
  std::string key = std::to_string(static_cast<int>(type->elem_type)) + "|" + std::to_string(type->dims.size()) + "|";
  bool symbolic = false;
  for (const Dim& d : *elems) {
    if (d.known()) {
      key += "=" + std::to_string(d.value) + ",";
    } else if (!d.param.empty()) {
      key += "$" + d.param + ",";
      symbolic = true;
    } else {
      return "";
    }
  }
  return symbolic ? key : "";
}

// `outer`: the constants of the enclosing graphs a subgraph may read (nullptr for the main
// graph), so that a body's Slice / Concat / Transpose of an outer weight folds too (silero VAD's
// LSTM weights are cut from one tensor inside an If branch at every run otherwise).
// `shapes`: the main graph's inference, fed each node before it is judged and each folded value
// after (nullptr in subgraph bodies, which fold without shape facts).
Status fold_graph(const Model& model, Graph& graph, NodeShapeInference* shapes, PassContext& ctx, FoldCounts& counts,
                  const TensorsByName* outer = nullptr) {
  const int64_t limit = ctx.options.fold_size_limit_bytes;
  std::unordered_set<std::string> inputs, outputs;
  for (const ValueInfo& vi : graph.inputs) inputs.insert(vi.name);
  for (const ValueInfo& vi : graph.outputs) outputs.insert(vi.name);
  TensorsByName constants;
  if (outer) {
    constants = *outer;
    // A name this graph defines hides the enclosing graph's value.
    for (const std::string& name : inputs) constants.erase(name);
    for (const Node& n : graph.nodes) {
      for (const std::string& o : n.outputs) constants.erase(o);
    }
  }
  std::unordered_set<std::string> own_initializers;
  for (const NamedTensor& t : graph.initializers) {
    if (inputs.count(t.name)) continue;
    constants[t.name] = &t.tensor;
    own_initializers.insert(t.name);
  }
  // Folded values live here until the loop ends: a deque keeps `constants` pointers valid.
  std::deque<NamedTensor> folded;
  std::vector<bool> dead(graph.nodes.size(), false);
  std::unordered_map<std::string, std::string> symbolic_values;  // key -> first value with it
  std::unordered_map<std::string, std::string> merged;           // a merged value -> the first one
  // Reads of each constant still in the graph (node inputs, subgraph captures, outputs).
  const GraphIndex index(graph);  // the nodes do not change until the walk ends
  std::unordered_map<std::string, int> uses;
  for (const auto& [name, tensor] : constants) uses[name] = index.use_count(name);
  std::unordered_map<std::string, int> folded_uses;  // the same for folded values
  std::unordered_set<std::string> consumed;          // constants read by folded nodes
  // `name` is now the constant `value`, for the rest of the walk and as an initializer after.
  auto add_folded = [&](const std::string& name, Tensor value) {
    folded.push_back({name, std::move(value)});
    constants[name] = &folded.back().tensor;
    folded_uses[name] = index.use_count(name);
    if (shapes) shapes->set_constant(name, folded.back().tensor);
  };

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& n = graph.nodes[i];
    for_each_subgraph(n, [&](Graph& sub) {
      Status s = fold_graph(model, sub, nullptr, ctx, counts, &constants);
      if (!s.is_ok()) warn_once(ctx, counts, n.describe() + " body: " + s.message());
    });
    if (shapes) shapes->infer(n);
    const ShapeFacts* facts = shapes ? &shapes->facts() : nullptr;
    if (never_folded(n)) continue;
    bool graph_output = false;
    for (const std::string& o : n.outputs) graph_output |= outputs.count(o) > 0;
    if (graph_output) continue;  // keeps graph outputs computed by nodes, as the model had them

    Tensor shape_value;
    if (fold_from_shapes(n, facts, constants, &shape_value)) {
      add_folded(n.outputs[0], std::move(shape_value));
      dead[i] = true;
      ++counts.from_shapes;
      continue;
    }

    if (std::string key = symbolic_value_key(facts, n); !key.empty()) {
      auto [first, inserted] = symbolic_values.emplace(key, n.outputs[0]);
      if (!inserted) {
        merged[n.outputs[0]] = first->second;  // renamed in one sweep below
        dead[i] = true;
        ++counts.merged;
        continue;
      }
    }

    std::vector<const Tensor*> args;
    bool all_constant = true;
    for (const std::string& in : n.inputs) {
      auto it = in.empty() ? constants.end() : constants.find(in);
      if (!in.empty() && it == constants.end()) all_constant = false;
      args.push_back(in.empty() ? nullptr : all_constant ? it->second : nullptr);
    }
    if (!all_constant) continue;
    // A weight stored in another type (float16) and cast once: see cast_fold_limit_bytes.
    const bool weight_cast = n.op_type == "Cast" && n.domain.empty() && n.inputs.size() == 1 &&
                             uses[n.inputs[0]] == 1 && own_initializers.count(n.inputs[0]);
    const int64_t node_limit = weight_cast ? std::max(limit, ctx.options.cast_fold_limit_bytes) : limit;
    bool too_big = false;
    for (const std::string& o : n.outputs) {
      const int64_t bytes = o.empty() ? -1 : predicted_bytes(facts, o);
      if (bytes > node_limit) {
        warn_once(ctx, counts,
                  "not folded: " + n.describe() + " output '" + o + "' is " + mb(bytes) + " > limit " + mb(node_limit));
        too_big = true;
        break;
      }
    }
    if (too_big) continue;
    std::optional<Tensor> derived = weight_cast ? half_weight_as_float(n, *args[0]) : std::nullopt;
    auto result = derived ? Result<std::vector<Value>>(std::vector<Value>{Value(std::move(*derived))})
                          : evaluate_node(model, n, args, node_limit);
    if (!result.is_ok()) {
      const StatusCode code = result.status().code();
      if (code == StatusCode::kResourceExhausted) {
        warn_once(ctx, counts, "not folded: " + n.describe() + ": an output is over the limit " + mb(node_limit));
      } else if (code != StatusCode::kUnsupported) {
        // The model fails the same way at run time; leave it for the runtime to report.
        warn_once(ctx, counts, "not folded: " + n.describe() + ": " + result.status().message());
      }
      continue;
    }
    bool all_tensors = true;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (!n.outputs[k].empty() && !(*result)[k].is_tensor()) all_tensors = false;
    }
    if (!all_tensors) continue;  // sequences / optionals stay computed
    if (duplicates_shared_constant(n, args, uses, *result)) continue;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (!n.outputs[k].empty()) add_folded(n.outputs[k], (*result)[k].tensor());
    }
    for (const std::string& in : n.inputs) {
      if (in.empty()) continue;
      auto f = folded_uses.find(in);
      --(f != folded_uses.end() ? f->second : uses[in]);
      consumed.insert(in);
    }
    dead[i] = true;
    ++counts.evaluated;
  }
  // Initializers and folded values only the folded nodes read go with them (so no later pass
  // sees a stale copy, nor the thousands of steps of a folded shape computation).
  std::vector<NamedTensor> kept;
  for (NamedTensor& t : graph.initializers) {
    if (!consumed.count(t.name) || inputs.count(t.name) || uses[t.name] > 0) kept.push_back(std::move(t));
  }
  for (NamedTensor& t : folded) {
    if (!consumed.count(t.name) || folded_uses[t.name] > 0) kept.push_back(std::move(t));
  }
  graph.initializers = std::move(kept);
  replace_uses(graph, merged);
  erase_nodes(graph, dead);
  return Status::ok();
}

}  // namespace

Result<bool> constant_folding(Model& model, PassContext& ctx) {
  // Folding a shape computation gives shape inference new static shapes, whose Shape nodes fold
  // in turn: inference runs node by node inside the walk, so that one walk folds a whole chain
  // (swin_t took five walks, each after inference over the whole graph, when facts came first).
  FoldCounts counts;
  {
    NodeShapeInference shapes(model);  // points into tensors the fold moves: not used after it
    XONNX_RETURN_IF_ERROR(fold_graph(model, model.graph, &shapes, ctx, counts));
  }
  const int total = counts.evaluated + counts.from_shapes + counts.merged;
  if (counts.evaluated + counts.from_shapes > 0) {
    ctx.note("folded " + std::to_string(counts.evaluated + counts.from_shapes) + " nodes (" +
             std::to_string(counts.from_shapes) + " from static shapes)");
  }
  if (counts.merged > 0) {
    ctx.note("merged " + std::to_string(counts.merged) +
             " shape values equal by their symbolic dims into earlier ones");
  }
  return total > 0;
}

}  // namespace passes
}  // namespace xonnx
