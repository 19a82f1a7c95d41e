#include "converter/proto_builder.h"

#include <set>

namespace xonnx {
namespace convert {

Status tensor_to_proto(const Tensor& t, const std::string& name, bool with_data, onnxpb::TensorProto* out) {
  if (!t.defined()) return invalid_argument("tensor '", name, "' is undefined");
  out->set_name(name);
  out->set_data_type(static_cast<int32_t>(t.dtype()));
  for (int64_t d : t.shape()) out->add_dims(d);
  if (!with_data) return Status::ok();
  const int64_t n = t.numel();
  if (t.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) out->add_string_data(t.string_data()[i]);
    return Status::ok();
  }
  const size_t bytes = t.nbytes();
  if (bytes && !t.raw_data()) return internal_error("tensor '", name, "' has no storage");
  // The IR keeps tensors little-endian, which is what raw_data wants.
  out->set_raw_data(static_cast<const char*>(t.raw_data()), bytes);
  return Status::ok();
}

namespace {

// Subgraphs never list their initializers as inputs, whatever the model's IR version.
constexpr int64_t kSubgraphIrVersion = 4;

// Node names must be unique within a graph or function body (ONNX Runtime refuses a model with
// "two nodes with same node name"), and passes derive new nodes' names from value names, which
// can collide. The first node keeps a repeated name, later ones get the first free "_N" suffix.
// Empty names stay empty (they are allowed and never collide).
template <typename Nodes>
void make_node_names_unique(Nodes* nodes) {
  std::set<std::string> taken;
  bool repeated = false;
  for (const auto& n : *nodes) {
    if (!n.name().empty()) repeated |= !taken.insert(n.name()).second;
  }
  if (!repeated) return;
  std::set<std::string> seen;
  for (auto& n : *nodes) {
    if (n.name().empty() || seen.insert(n.name()).second) continue;
    std::string name;
    for (int k = 1;; ++k) {
      name = n.name() + "_" + std::to_string(k);
      if (!taken.count(name) && !seen.count(name)) break;
    }
    n.set_name(name);
    seen.insert(name);
  }
}

void shape_to_proto(const TypeInfo& type, onnxpb::TensorShapeProto* out) {
  for (const Dim& d : type.dims) {
    auto* dim = out->add_dim();
    if (d.known())
      dim->set_dim_value(d.value);
    else if (!d.param.empty())
      dim->set_dim_param(d.param);
  }
}

// A dense tensor as a SparseTensorProto whose indices list every element (linear form).
Status dense_to_sparse(const Tensor& t, const std::string& name, onnxpb::SparseTensorProto* out) {
  for (int64_t d : t.shape()) out->add_dims(d);
  const int64_t n = t.numel();
  XONNX_RETURN_IF_ERROR(tensor_to_proto(t.reshaped({n}), name, true, out->mutable_values()));
  auto* idx = out->mutable_indices();
  idx->set_data_type(static_cast<int32_t>(DataType::kInt64));
  idx->add_dims(n);
  for (int64_t i = 0; i < n; ++i) idx->add_int64_data(i);
  return Status::ok();
}

}  // namespace

void type_to_proto(const TypeInfo& type, onnxpb::TypeProto* out) {
  switch (type.kind) {
    case TypeInfo::Kind::kTensor: {
      auto* tt = out->mutable_tensor_type();
      tt->set_elem_type(static_cast<int32_t>(type.elem_type));
      if (type.has_shape) shape_to_proto(type, tt->mutable_shape());
      break;
    }
    case TypeInfo::Kind::kSparseTensor: {
      auto* st = out->mutable_sparse_tensor_type();
      st->set_elem_type(static_cast<int32_t>(type.elem_type));
      if (type.has_shape) shape_to_proto(type, st->mutable_shape());
      break;
    }
    case TypeInfo::Kind::kSequence: {
      auto* elem = out->mutable_sequence_type()->mutable_elem_type();
      if (type.elem) type_to_proto(*type.elem, elem);
      break;
    }
    case TypeInfo::Kind::kOptional: {
      auto* elem = out->mutable_optional_type()->mutable_elem_type();
      if (type.elem) type_to_proto(*type.elem, elem);
      break;
    }
    case TypeInfo::Kind::kMap:
      out->mutable_map_type();  // the IR does not keep key/value types
      break;
    case TypeInfo::Kind::kUnknown: break;
  }
}

void value_info_to_proto(const ValueInfo& v, onnxpb::ValueInfoProto* out) {
  out->set_name(v.name);
  if (v.type.kind != TypeInfo::Kind::kUnknown) type_to_proto(v.type, out->mutable_type());
}

Status attribute_to_proto(const Attribute& a, onnxpb::AttributeProto* out) {
  out->set_name(a.name);
  if (!a.ref_attr_name.empty()) out->set_ref_attr_name(a.ref_attr_name);
  if (a.type != AttrType::kUndefined) {
    out->set_type(static_cast<onnxpb::AttributeProto::AttributeType>(a.type));
  }
  const std::string what = "attribute '" + a.name + "'";
  switch (a.type) {
    case AttrType::kFloat: out->set_f(a.f); break;
    case AttrType::kInt: out->set_i(a.i); break;
    case AttrType::kString: out->set_s(a.s); break;
    case AttrType::kTensor:
      if (!a.ref_attr_name.empty() && !a.t.defined()) break;
      XONNX_RETURN_IF_ERROR(tensor_to_proto(a.t, "", true, out->mutable_t()).with_context(what + ": "));
      break;
    case AttrType::kSparseTensor:
      if (!a.ref_attr_name.empty() && !a.t.defined()) break;
      XONNX_RETURN_IF_ERROR(dense_to_sparse(a.t, "", out->mutable_sparse_tensor()));
      break;
    case AttrType::kGraph:
      if (!a.g) {
        if (!a.ref_attr_name.empty()) break;
        return invalid_argument(what, " of type GRAPH has no graph");
      }
      XONNX_RETURN_IF_ERROR(graph_to_proto(*a.g, true, kSubgraphIrVersion, out->mutable_g()));
      break;
    case AttrType::kFloats:
      for (float f : a.floats) out->add_floats(f);
      break;
    case AttrType::kInts:
      for (int64_t i : a.ints) out->add_ints(i);
      break;
    case AttrType::kStrings:
      for (const std::string& s : a.strings) out->add_strings(s);
      break;
    case AttrType::kTensors:
      for (const Tensor& t : a.tensors) {
        XONNX_RETURN_IF_ERROR(tensor_to_proto(t, "", true, out->add_tensors()));
      }
      break;
    case AttrType::kGraphs:
      for (const auto& g : a.graphs) {
        if (!g) return invalid_argument(what, " holds a null graph");
        XONNX_RETURN_IF_ERROR(graph_to_proto(*g, true, kSubgraphIrVersion, out->add_graphs()));
      }
      break;
    case AttrType::kSparseTensors:
      // The loader rejects these; nothing in the IR can hold them.
      return unsupported(what, ": SPARSE_TENSORS attributes are not supported");
    case AttrType::kTypeProto: type_to_proto(a.tp, out->mutable_tp()); break;
    case AttrType::kTypeProtos:
      for (const TypeInfo& tp : a.type_protos) type_to_proto(tp, out->add_type_protos());
      break;
    case AttrType::kUndefined: break;
  }
  return Status::ok();
}

Status node_to_proto(const Node& n, onnxpb::NodeProto* out) {
  for (const std::string& i : n.inputs) out->add_input(i);
  for (const std::string& o : n.outputs) out->add_output(o);
  if (!n.name.empty()) out->set_name(n.name);
  out->set_op_type(n.op_type);
  if (!n.domain.empty()) out->set_domain(n.domain);
  if (!n.overload.empty()) out->set_overload(n.overload);
  for (const Attribute& a : n.attributes) {
    Status s = attribute_to_proto(a, out->add_attribute());
    if (!s.is_ok()) return s.with_context(n.describe() + ": ");
  }
  return Status::ok();
}

Status graph_to_proto(const Graph& g, bool with_initializers, int64_t ir_version, onnxpb::GraphProto* out) {
  out->set_name(g.name.empty() ? "graph" : g.name);
  for (const Node& n : g.nodes) XONNX_RETURN_IF_ERROR(node_to_proto(n, out->add_node()));
  make_node_names_unique(out->mutable_node());
  std::set<std::string> input_names;
  for (const ValueInfo& v : g.inputs) {
    value_info_to_proto(v, out->add_input());
    input_names.insert(v.name);
  }
  if (ir_version < 4) {
    // IR < 4: every initializer must also be a graph input.
    for (const NamedTensor& t : g.initializers) {
      if (input_names.count(t.name)) continue;
      ValueInfo v{t.name, {}};
      v.type.kind = TypeInfo::Kind::kTensor;
      v.type.elem_type = t.tensor.dtype();
      v.type.has_shape = true;
      for (int64_t d : t.tensor.shape()) v.type.dims.push_back(Dim{d, ""});
      value_info_to_proto(v, out->add_input());
    }
  }
  for (const ValueInfo& v : g.outputs) value_info_to_proto(v, out->add_output());
  for (const ValueInfo& v : g.value_info) value_info_to_proto(v, out->add_value_info());
  if (with_initializers) {
    for (const NamedTensor& t : g.initializers) {
      Status s = tensor_to_proto(t.tensor, t.name, true, out->add_initializer());
      if (!s.is_ok()) return s.with_context("initializer '" + t.name + "': ");
    }
  }
  return Status::ok();
}

Status function_to_proto(const FunctionDef& f, onnxpb::FunctionProto* out) {
  out->set_name(f.name);
  out->set_domain(f.domain);
  if (!f.overload.empty()) out->set_overload(f.overload);
  for (const std::string& i : f.inputs) out->add_input(i);
  for (const std::string& o : f.outputs) out->add_output(o);
  for (const std::string& a : f.attribute_names) out->add_attribute(a);
  for (const Attribute& a : f.attribute_defaults) {
    XONNX_RETURN_IF_ERROR(attribute_to_proto(a, out->add_attribute_proto()));
  }
  for (const Node& n : f.nodes) {
    Status s = node_to_proto(n, out->add_node());
    if (!s.is_ok()) return s.with_context("function '" + f.domain + "::" + f.name + "': ");
  }
  make_node_names_unique(out->mutable_node());
  for (const auto& [domain, version] : f.opset_imports) {
    auto* o = out->add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  for (const ValueInfo& v : f.value_info) value_info_to_proto(v, out->add_value_info());
  return Status::ok();
}

Status model_header_to_proto(const Model& m, onnxpb::ModelProto* out) {
  out->set_ir_version(m.ir_version);
  for (const auto& [domain, version] : m.opset_imports) {
    auto* o = out->add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  if (!m.producer_name.empty()) out->set_producer_name(m.producer_name);
  if (!m.producer_version.empty()) out->set_producer_version(m.producer_version);
  if (!m.domain.empty()) out->set_domain(m.domain);
  if (m.model_version) out->set_model_version(m.model_version);
  if (!m.doc_string.empty()) out->set_doc_string(m.doc_string);
  for (const auto& [k, v] : m.metadata_props) {
    auto* e = out->add_metadata_props();
    e->set_key(k);
    e->set_value(v);
  }
  for (const FunctionDef& f : m.functions) {
    XONNX_RETURN_IF_ERROR(function_to_proto(f, out->add_functions()));
  }
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
