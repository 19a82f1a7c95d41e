// Float16 models computed in float32 at session creation, as ONNX Runtime's CPU provider does.
// A torch `.half()` export or onnxconverter-common's float16 conversion (float inputs and outputs
// cast at the graph's edges, everything between in float16) otherwise runs every node on the
// reference kernels, the only ones with float16 arithmetic: an fp16 IS-Net at 1024 x 1024 took
// 65 s a run. Every float16 value inside the main graph becomes float32:
//  - float16 graph inputs and initializers are read through a Cast to float (constant folding
//    converts the weights once, up to the load's tensor limit);
//  - nodes that make float16 from an attribute (Cast, ConstantOfShape, Constant, EyeLike,
//    DequantizeLinear's output_dtype, the Random ops) make float32;
//  - float16 graph outputs are cast back after their producer, so callers get the declared types.
// Results are the float32 computation's: nearer the exact values than float16 arithmetic, and
// nearer ORT's (IS-Net's outputs: 3.3e-3 from ORT's, float16 arithmetic 1.0e-2); `--optimize
// none` keeps float16 arithmetic. Graphs with subgraphs (If, Loop, Scan) are
// left alone: their bodies' float16 values would need the same rewrite.
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

constexpr int64_t kFloat16 = static_cast<int64_t>(DataType::kFloat16);
constexpr int64_t kFloat = static_cast<int64_t>(DataType::kFloat);

// Ops whose `dtype` attribute names their output type.
const std::set<std::string> kDtypeOps = {"EyeLike",   "RandomNormal",     "RandomUniform",
                                         "Bernoulli", "RandomNormalLike", "RandomUniformLike"};

const Attribute* find_attribute(const Node& n, const char* name) {
  for (const Attribute& a : n.attributes)
    if (a.name == name) return &a;
  return nullptr;
}

// Cast to float16: `to` = 10, or "FLOAT16" in opset 1's string form.
bool casts_to_float16(const Node& n) {
  if (!is_default(n, "Cast")) return false;
  const Attribute* to = find_attribute(n, "to");
  return to && (to->type == AttrType::kString ? to->s == "FLOAT16" : to->i == kFloat16);
}

bool casts_to_float(const Node& n) {
  if (!is_default(n, "Cast")) return false;
  const Attribute* to = find_attribute(n, "to");
  return to && (to->type == AttrType::kString ? to->s == "FLOAT" : to->i == kFloat);
}

// The attribute through which the node makes float16 values (Cast's `to`, a Constant's or
// ConstantOfShape's `value`, the `dtype` of EyeLike and the Random ops, DequantizeLinear's
// `output_dtype`), or nullptr.
const Attribute* float16_attribute(const Node& n) {
  if (!n.domain.empty()) return nullptr;
  if (n.op_type == "Cast") return casts_to_float16(n) ? find_attribute(n, "to") : nullptr;
  if (n.op_type == "Constant" || n.op_type == "ConstantOfShape") {
    const Attribute* value = find_attribute(n, "value");
    return value && value->type == AttrType::kTensor && value->t.dtype() == DataType::kFloat16 ? value : nullptr;
  }
  const char* type_attr = kDtypeOps.count(n.op_type)        ? "dtype"
                          : n.op_type == "DequantizeLinear" ? "output_dtype"
                                                            : nullptr;
  const Attribute* dtype = type_attr ? find_attribute(n, type_attr) : nullptr;
  return dtype && dtype->type == AttrType::kInt && dtype->i == kFloat16 ? dtype : nullptr;
}

// Makes the node's float16_attribute make float32 instead; true when it had one.
Result<bool> retype_attribute(Node& n) {
  Attribute* a = const_cast<Attribute*>(float16_attribute(n));
  if (!a) return false;
  if (a->type == AttrType::kString) {
    a->s = "FLOAT";
  } else if (a->type == AttrType::kTensor) {
    XONNX_ASSIGN_OR_RETURN(Tensor f, Tensor::allocate(DataType::kFloat, a->t.shape()));
    const Float16* in = a->t.data<Float16>();
    for (int64_t i = 0; i < f.numel(); ++i) f.data<float>()[i] = half_to_float(in[i].bits);
    a->t = std::move(f);
  } else {
    a->i = kFloat;
  }
  return true;
}

Node cast_node(const std::string& name, const std::string& in, const std::string& out, int64_t to) {
  Node n;
  n.name = name;
  n.op_type = "Cast";
  n.inputs = {in};
  n.outputs = {out};
  n.attributes = {int_attribute("to", to)};
  return n;
}

}  // namespace

Result<bool> compute_float16_in_float(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  const ShapeFacts& facts = ctx.shape_facts(model);
  const auto is_half = [&](const std::string& name) {
    if (const ValueInfo* vi = find_value_info(g, name); vi && vi->type.elem_type != DataType::kUndefined)
      return vi->type.kind == TypeInfo::Kind::kTensor && vi->type.elem_type == DataType::kFloat16;
    const TypeInfo* t = facts.type(name);
    return t && t->kind == TypeInfo::Kind::kTensor && t->elem_type == DataType::kFloat16;
  };
  std::unordered_map<std::string, std::vector<const Node*>> readers;
  std::unordered_map<std::string, const Node*> producer;
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs)
      if (!in.empty()) readers[in].push_back(&n);
    for (const std::string& out : n.outputs)
      if (!out.empty()) producer[out] = &n;
  }
  std::set<std::string> graph_outputs;
  for (const ValueInfo& vi : g.outputs) graph_outputs.insert(vi.name);

  // Inputs and initializers read as float16 by a node other than a Cast to float (what this pass
  // leaves them after a first run).
  std::vector<std::string> sources;
  std::set<std::string> seen;
  const auto add_source = [&](const std::string& name) {
    if (!seen.insert(name).second || !is_half(name)) return;
    for (const Node* r : readers[name]) {
      if (!casts_to_float(*r)) {
        sources.push_back(name);
        return;
      }
    }
  };
  for (const ValueInfo& vi : g.inputs) add_source(vi.name);
  for (const NamedTensor& t : g.initializers)
    if (t.tensor.dtype() == DataType::kFloat16) add_source(t.name);
  // Float16 graph outputs computed inside the graph, unless by a final Cast nothing else reads.
  std::vector<std::string> outputs;
  for (const ValueInfo& vi : g.outputs) {
    auto p = producer.find(vi.name);
    if (p == producer.end() || !is_half(vi.name)) continue;
    if (casts_to_float16(*p->second) && readers[vi.name].empty()) continue;
    outputs.push_back(vi.name);
  }
  bool attributes = false;
  for (const Node& n : g.nodes) {
    const bool final_cast = n.outputs.size() == 1 && graph_outputs.count(n.outputs[0]) && readers[n.outputs[0]].empty();
    attributes = attributes || (!final_cast && float16_attribute(n));
  }
  if (sources.empty() && outputs.empty() && !attributes) return false;
  if (has_subgraphs(g)) {
    ctx.diagnose("float16 values computed in float16 (reference kernels): the graph has subgraphs");
    return false;
  }

  NameAllocator names(g);
  std::unordered_map<std::string, std::string> renames;
  std::vector<Node> head;
  for (const std::string& s : sources) {
    const std::string f = names.fresh(s + "/float");
    head.push_back(cast_node(names.fresh(s + "/to_float"), s, f, kFloat));
    renames[s] = f;
  }
  replace_uses(g, renames);
  std::vector<Node> tail;
  for (const std::string& y : outputs) {
    const std::string f = names.fresh(y + "/float");
    for (Node& n : g.nodes)
      for (std::string& out : n.outputs)
        if (out == y) out = f;
    replace_uses(g, y, f);
    tail.push_back(cast_node(names.fresh(y + "/to_float16"), f, y, kFloat16));
  }
  int retyped = 0;
  for (Node& n : g.nodes) {
    // What still writes a graph output writes its declared type (the renames above moved the rest).
    if (n.outputs.size() == 1 && graph_outputs.count(n.outputs[0])) continue;
    XONNX_ASSIGN_OR_RETURN(const bool changed, retype_attribute(n));
    retyped += changed;
  }
  g.nodes.insert(g.nodes.begin(), head.begin(), head.end());
  g.nodes.insert(g.nodes.end(), tail.begin(), tail.end());
  for (ValueInfo& vi : g.value_info)
    if (vi.type.elem_type == DataType::kFloat16) vi.type.elem_type = DataType::kFloat;
  ctx.note("float16 computed in float32: " + std::to_string(sources.size()) + " inputs and weights cast to float, " +
           std::to_string(retyped) + " nodes retyped, " + std::to_string(outputs.size()) + " outputs cast back");
  return true;
}

}  // namespace passes
}  // namespace xonnx
