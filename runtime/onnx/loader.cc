#include "runtime/onnx/loader.h"

#include <cstring>
#include <map>
#include <unordered_set>

#include "onnx_data.pb.h"
#include "platforms/posix/mapped_file.h"
#include "platforms/posix/safe_open.h"
#include "runtime/ir/opset.h"
#include "runtime/onnx/functions.h"
#include "runtime/onnx/proto_scan.h"
#include "runtime/onnx/tensor_proto.h"

namespace xonnx {
namespace {

constexpr int64_t kMaxIrVersion = 13;

// The default-domain opset of a model's or a function's imports, if any, is one we implement.
Status check_onnx_opset(const std::map<std::string, int64_t>& imports, const std::string& what) {
  auto onnx_opset = imports.find("");
  if (onnx_opset != imports.end() && (onnx_opset->second < kMinOnnxOpset || onnx_opset->second > kMaxOnnxOpset)) {
    return unsupported(what, ": default-domain opset ", onnx_opset->second, " is not supported (", kMinOnnxOpset, "..",
                       kMaxOnnxOpset, ")");
  }
  return Status::ok();
}

class Converter {
 public:
  Converter(const LoadOptions& options, ExternalDataResolver* external) : options_(options), external_(external) {}

  Result<Tensor> tensor(const onnxpb::TensorProto& proto, const std::string& what) {
    return tensor_from_proto(proto, source(), what);
  }

  TensorSource source() {
    TensorSource src;
    src.options = &options_;
    src.external = external_;
    src.allocated = &allocated_;
    return src;
  }

  Result<Tensor> sparse_to_dense(const onnxpb::SparseTensorProto& sp, const std::string& what) {
    XONNX_ASSIGN_OR_RETURN(Tensor values, tensor(sp.values(), what + " values"));
    XONNX_ASSIGN_OR_RETURN(Tensor indices, tensor(sp.indices(), what + " indices"));
    Shape dims(sp.dims().begin(), sp.dims().end());
    const int64_t dense_numel = shape_numel(dims);
    if (dense_numel < 0) {
      return invalid_model(what, ": dense shape ", shape_to_string(dims), " has a negative dimension or overflows");
    }
    // The densified tensor is allocated here: a few bytes of file can ask for gigabytes.
    XONNX_RETURN_IF_ERROR(charge_allocation(source(), dtype_storage_bytes(values.dtype(), dense_numel), what,
                                            "densified " + shape_to_string(dims) + " " + dtype_name(values.dtype())));
    XONNX_ASSIGN_OR_RETURN(Tensor dense, Tensor::allocate(values.dtype(), dims));
    const int64_t n = dense.numel();
    const int64_t nnz = values.numel();
    const size_t elem = static_cast<size_t>(dtype_bits(values.dtype()) / 8);
    if (elem == 0) return unsupported(what, ": sparse ", dtype_name(values.dtype()), " tensors");
    const bool coords = indices.rank() == 2;
    if (indices.dtype() != DataType::kInt64) return invalid_model(what, ": sparse indices must be int64");
    for (int64_t k = 0; k < nnz; ++k) {
      int64_t flat = 0;
      if (coords) {
        if (indices.dim(0) != nnz || indices.dim(1) != static_cast<int64_t>(dims.size())) {
          return invalid_model(what, ": sparse indices shape ", shape_to_string(indices.shape()), " does not match");
        }
        for (size_t d = 0; d < dims.size(); ++d) {
          const int64_t c = indices.data<int64_t>()[k * static_cast<int64_t>(dims.size()) + static_cast<int64_t>(d)];
          if (c < 0 || c >= dims[d]) return invalid_model(what, ": sparse index out of range");
          flat = flat * dims[d] + c;
        }
      } else {
        if (indices.numel() != nnz) return invalid_model(what, ": sparse indices count mismatch");
        flat = indices.data<int64_t>()[k];
      }
      if (flat < 0 || flat >= n) return invalid_model(what, ": sparse index ", flat, " out of range");
      std::memcpy(static_cast<char*>(dense.raw_data()) + flat * elem,
                  static_cast<const char*>(values.raw_data()) + k * elem, elem);
    }
    return dense;
  }

  Result<Attribute> attribute(const onnxpb::AttributeProto& a, const std::string& where) {
    Attribute out;
    out.name = a.name();
    out.ref_attr_name = a.ref_attr_name();
    const std::string what = "attribute '" + a.name() + "' of " + where;
    AttrType type = static_cast<AttrType>(a.type());
    if (!a.has_type()) {
      // IR < 2 files may omit the type: infer it from the populated field.
      if (a.has_f())
        type = AttrType::kFloat;
      else if (a.has_i())
        type = AttrType::kInt;
      else if (a.has_s())
        type = AttrType::kString;
      else if (a.has_t())
        type = AttrType::kTensor;
      else if (a.has_g())
        type = AttrType::kGraph;
      else if (a.floats_size())
        type = AttrType::kFloats;
      else if (a.ints_size())
        type = AttrType::kInts;
      else if (a.strings_size())
        type = AttrType::kStrings;
      else if (a.tensors_size())
        type = AttrType::kTensors;
      else if (a.graphs_size())
        type = AttrType::kGraphs;
    }
    out.type = type;
    XONNX_RETURN_IF_ERROR(check_attribute_size(a, what));
    switch (type) {
      case AttrType::kFloat: out.f = a.f(); break;
      case AttrType::kInt: out.i = a.i(); break;
      case AttrType::kString: out.s = a.s(); break;
      case AttrType::kTensor: {
        XONNX_ASSIGN_OR_RETURN(out.t, tensor(a.t(), what));
        break;
      }
      case AttrType::kSparseTensor: {
        XONNX_ASSIGN_OR_RETURN(out.t, sparse_to_dense(a.sparse_tensor(), what));
        break;
      }
      case AttrType::kGraph: {
        XONNX_ASSIGN_OR_RETURN(Graph g, graph(a.g(), depth_ + 1));
        out.g = std::make_shared<Graph>(std::move(g));
        break;
      }
      case AttrType::kFloats: out.floats.assign(a.floats().begin(), a.floats().end()); break;
      case AttrType::kInts: out.ints.assign(a.ints().begin(), a.ints().end()); break;
      case AttrType::kStrings: out.strings.assign(a.strings().begin(), a.strings().end()); break;
      case AttrType::kTensors:
        for (const auto& t : a.tensors()) {
          XONNX_ASSIGN_OR_RETURN(Tensor x, tensor(t, what));
          out.tensors.push_back(std::move(x));
        }
        break;
      case AttrType::kGraphs:
        for (const auto& g : a.graphs()) {
          XONNX_ASSIGN_OR_RETURN(Graph x, graph(g, depth_ + 1));
          out.graphs.push_back(std::make_shared<Graph>(std::move(x)));
        }
        break;
      case AttrType::kTypeProto: {
        XONNX_ASSIGN_OR_RETURN(out.tp, type_from_proto(a.tp()));
        break;
      }
      case AttrType::kTypeProtos:
        for (const auto& tp : a.type_protos()) {
          XONNX_ASSIGN_OR_RETURN(TypeInfo x, type_from_proto(tp));
          out.type_protos.push_back(std::move(x));
        }
        break;
      case AttrType::kUndefined:
        if (out.ref_attr_name.empty()) return invalid_model(what, " has no type");
        break;
      default: return invalid_model(what, " has unknown type ", static_cast<int>(type));
    }
    return out;
  }

  // The payload of a non-tensor attribute, checked before it is copied into the IR.
  Status check_attribute_size(const onnxpb::AttributeProto& a, const std::string& what) {
    int64_t bytes = static_cast<int64_t>(a.s().size());
    bytes += static_cast<int64_t>(a.ints_size()) * 8 + static_cast<int64_t>(a.floats_size()) * 4;
    for (const std::string& str : a.strings()) bytes += static_cast<int64_t>(str.size() + sizeof(std::string));
    if (bytes > options_.max_attribute_bytes) {
      return resource_exhausted(what, " holds ", describe_bytes(bytes), ", over the limit of ",
                                describe_bytes(options_.max_attribute_bytes), " per attribute (max_attribute_bytes)");
    }
    return Status::ok();
  }

  Result<Node> node(const onnxpb::NodeProto& n, size_t index) {
    if (++nodes_ > options_.max_nodes) {
      return resource_exhausted("node #", index, " '", n.name(), "' (", n.op_type(), "): the model has more than ",
                                options_.max_nodes, " nodes in its graphs and functions (max_nodes)");
    }
    Node out;
    out.name = n.name();
    out.op_type = n.op_type();
    out.domain = normalize_domain(n.domain());
    out.overload = n.overload();
    out.inputs.assign(n.input().begin(), n.input().end());
    out.outputs.assign(n.output().begin(), n.output().end());
    if (out.op_type.empty()) return invalid_model("node #", index, " has no op_type");
    const std::string where = out.describe();
    if (is_internal_domain(out.domain) && !options_.allow_internal_ops) {
      return invalid_model(where, ": not a registered op: domain '", out.domain,
                           "' is internal to xonnx's session-time rewrites and cannot appear in a model file");
    }
    for (const auto& a : n.attribute()) {
      XONNX_ASSIGN_OR_RETURN(Attribute attr, attribute(a, where));
      for (const Attribute& prev : out.attributes) {
        if (prev.name == attr.name) return invalid_model(where, ": duplicate attribute '", attr.name, "'");
      }
      out.attributes.push_back(std::move(attr));
    }
    return out;
  }

  Result<ValueInfo> value_info(const onnxpb::ValueInfoProto& v) {
    ValueInfo out;
    out.name = v.name();
    if (v.has_type()) {
      auto t = type_from_proto(v.type());
      if (!t.is_ok()) return t.status().with_context("value '" + v.name() + "': ");
      out.type = std::move(t).value();
    }
    return out;
  }

  // `scanned` holds the zero-copy initializers of the top-level graph.
  Result<Graph> graph(const onnxpb::GraphProto& g, int depth, std::vector<ScannedInitializer>* scanned = nullptr,
                      std::shared_ptr<const void> keepalive = nullptr, bool file_backed = false) {
    if (depth > options_.max_nesting_depth) {
      return invalid_model("graph '", g.name(), "': subgraphs nested more than ", options_.max_nesting_depth,
                           " deep (max_nesting_depth)");
    }
    const int saved_depth = depth_;
    depth_ = depth;
    Graph out;
    out.name = g.name();
    for (int i = 0; i < g.node_size(); ++i) {
      XONNX_ASSIGN_OR_RETURN(Node n, node(g.node(i), static_cast<size_t>(i)));
      out.nodes.push_back(std::move(n));
    }
    for (const auto& v : g.input()) {
      XONNX_ASSIGN_OR_RETURN(ValueInfo vi, value_info(v));
      out.inputs.push_back(std::move(vi));
    }
    for (const auto& v : g.output()) {
      XONNX_ASSIGN_OR_RETURN(ValueInfo vi, value_info(v));
      out.outputs.push_back(std::move(vi));
    }
    for (const auto& v : g.value_info()) {
      XONNX_ASSIGN_OR_RETURN(ValueInfo vi, value_info(v));
      out.value_info.push_back(std::move(vi));
    }
    std::unordered_set<std::string> init_names;  // a linear find per initializer is quadratic
    auto add_init = [&out, &init_names](std::string name, Tensor t) -> Status {
      if (name.empty()) return invalid_model("an initializer has no name");
      if (!init_names.insert(name).second) return invalid_model("duplicate initializer '", name, "'");
      out.initializers.push_back({std::move(name), std::move(t)});
      return Status::ok();
    };
    for (const auto& t : g.initializer()) {
      XONNX_ASSIGN_OR_RETURN(Tensor x, tensor(t, "initializer '" + t.name() + "'"));
      XONNX_RETURN_IF_ERROR(add_init(t.name(), std::move(x)));
    }
    if (scanned) {
      for (ScannedInitializer& s : *scanned) {
        TensorSource src = source();
        src.raw = s.raw;
        src.raw_size = s.raw_size;
        src.keepalive = keepalive;
        src.file_backed = file_backed;
        XONNX_ASSIGN_OR_RETURN(Tensor x, tensor_from_proto(s.proto, src, "initializer '" + s.proto.name() + "'"));
        XONNX_RETURN_IF_ERROR(add_init(s.proto.name(), std::move(x)));
      }
    }
    for (const auto& sp : g.sparse_initializer()) {
      const std::string name = sp.values().name();
      XONNX_ASSIGN_OR_RETURN(Tensor x, sparse_to_dense(sp, "sparse initializer '" + name + "'"));
      XONNX_RETURN_IF_ERROR(add_init(name, std::move(x)));
    }
    depth_ = saved_depth;
    return out;
  }

  Result<FunctionDef> function(const onnxpb::FunctionProto& f) {
    FunctionDef out;
    out.name = f.name();
    out.domain = normalize_domain(f.domain());
    out.overload = f.overload();
    out.inputs.assign(f.input().begin(), f.input().end());
    out.outputs.assign(f.output().begin(), f.output().end());
    out.attribute_names.assign(f.attribute().begin(), f.attribute().end());
    const std::string where = "function '" + f.domain() + "::" + f.name() + "'";
    for (const auto& a : f.attribute_proto()) {
      XONNX_ASSIGN_OR_RETURN(Attribute attr, attribute(a, where));
      out.attribute_defaults.push_back(std::move(attr));
    }
    for (int i = 0; i < f.node_size(); ++i) {
      auto n = node(f.node(i), static_cast<size_t>(i));
      if (!n.is_ok()) return n.status().with_context(where + ": ");
      out.nodes.push_back(std::move(n).value());
    }
    for (const auto& o : f.opset_import()) out.opset_imports[normalize_domain(o.domain())] = o.version();
    // Inlining moves these into the model (functions.cc): the model's range holds for them too.
    XONNX_RETURN_IF_ERROR(check_onnx_opset(out.opset_imports, where));
    for (const auto& v : f.value_info()) {
      XONNX_ASSIGN_OR_RETURN(ValueInfo vi, value_info(v));
      out.value_info.push_back(std::move(vi));
    }
    return out;
  }

 private:
  const LoadOptions& options_;
  ExternalDataResolver* external_;
  int depth_ = 0;
  int64_t allocated_ = 0;  // bytes of tensors the loader allocated (max_memory_bytes)
  int64_t nodes_ = 0;      // nodes read so far (max_nodes)
};

std::string dir_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Result<Model> load_impl(const void* data, size_t size, const std::string& what, const std::string& base_dir,
                        const LoadOptions& options, std::shared_ptr<const void> keepalive, bool file_backed,
                        std::vector<FileIdentity>* files_read = nullptr) {
  XONNX_ASSIGN_OR_RETURN(ScannedModel scanned, scan_model(data, size, what, options.max_nesting_depth));
  const onnxpb::ModelProto& proto = scanned.model;
  if (!proto.has_graph()) return invalid_model(what, ": the model has no graph");
  Model model;
  model.ir_version = proto.ir_version();
  if (model.ir_version < 1 || model.ir_version > kMaxIrVersion) {
    return unsupported(what, ": IR version ", model.ir_version, " is not supported (1..", kMaxIrVersion, ")");
  }
  for (const auto& o : proto.opset_import()) {
    const std::string domain = normalize_domain(o.domain());
    if (model.opset_imports.count(domain)) {
      return invalid_model(what, ": opset for domain '", o.domain(), "' is imported twice");
    }
    model.opset_imports[domain] = o.version();
  }
  if (proto.opset_import_size() == 0) model.opset_imports[""] = 1;  // IR < 3 implies opset 1
  XONNX_RETURN_IF_ERROR(check_onnx_opset(model.opset_imports, what));
  model.producer_name = proto.producer_name();
  model.producer_version = proto.producer_version();
  model.domain = proto.domain();
  model.model_version = proto.model_version();
  model.doc_string = proto.doc_string();
  for (const auto& kv : proto.metadata_props()) model.metadata_props.emplace_back(kv.key(), kv.value());

  ExternalDataResolver external(base_dir);
  Converter conv(options, &external);
  auto graph = conv.graph(proto.graph(), 0, &scanned.initializers, keepalive, file_backed);
  if (!graph.is_ok()) return graph.status().with_context(what + ": ");
  model.graph = std::move(graph).value();
  for (const auto& f : proto.functions()) {
    auto fn = conv.function(f);
    if (!fn.is_ok()) return fn.status().with_context(what + ": ");
    model.functions.push_back(std::move(fn).value());
  }
  if (files_read) *files_read = external.files();
  Status calls = options.inline_functions ? inline_functions(model, options) : check_function_calls(model, options);
  if (!calls.is_ok()) return calls.with_context(what + ": ");
  return model;
}

}  // namespace

Result<Model> load_model(const std::string& path, const LoadOptions& options) {
  return load_model_listing_files(path, options, nullptr);
}

Result<Model> load_model_listing_files(const std::string& path, const LoadOptions& options,
                                       std::vector<FileIdentity>* files_read) {
  std::string error;
  auto file = MappedFile::open(path, &error);
  if (!file) return not_found(error);
  auto model = load_impl(file->data(), file->size(), path, dir_of(path), options, file, true, files_read);
  if (files_read) files_read->insert(files_read->begin(), {path, file->device(), file->inode()});
  return model;
}

Result<Model> load_model_from_memory(const void* data, size_t size, const std::string& base_dir,
                                     const LoadOptions& options, std::shared_ptr<const void> keepalive) {
  return load_impl(data, size, "<memory>", base_dir, options, std::move(keepalive), false);
}

Result<Tensor> parse_tensor_proto(const void* data, size_t size, const std::string& what) {
  onnxpb::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) {
    return invalid_argument(what, ": not a valid serialized TensorProto");
  }
  LoadOptions options;
  TensorSource src;
  src.options = &options;
  return tensor_from_proto(proto, src, what);
}

namespace {

Result<Value> value_from_sequence(const onnxpb::SequenceProto& seq, const std::string& what);

Result<Value> value_from_optional(const onnxpb::OptionalProto& opt, const std::string& what) {
  LoadOptions options;
  TensorSource src;
  src.options = &options;
  if (opt.has_tensor_value()) {
    XONNX_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(opt.tensor_value(), src, what));
    return Value(std::move(t));
  }
  if (opt.has_sequence_value()) return value_from_sequence(opt.sequence_value(), what);
  return Value::none();
}

Result<Value> value_from_sequence(const onnxpb::SequenceProto& seq, const std::string& what) {
  LoadOptions options;
  TensorSource src;
  src.options = &options;
  auto s = std::make_shared<Sequence>();
  for (const auto& t : seq.tensor_values()) {
    XONNX_ASSIGN_OR_RETURN(Tensor x, tensor_from_proto(t, src, what));
    if (s->elem_type == DataType::kUndefined) s->elem_type = x.dtype();
    s->items.push_back(std::move(x));
  }
  if (seq.sequence_values_size() || seq.map_values_size() || seq.optional_values_size()) {
    return unsupported(what, ": sequences of non-tensors are not supported");
  }
  return Value::sequence(std::move(s));
}

}  // namespace

Result<Value> load_value_file(const std::string& path, const TypeInfo& type) {
  std::string bytes, error;
  UniqueFd fd = open_regular_file(path, &error);
  if (!fd.valid()) return not_found(error);
  if (!read_whole_file(fd.get(), path, std::numeric_limits<int>::max(), &bytes, &error)) {
    return invalid_argument(error);  // protobuf parses at most 2 GB
  }
  switch (type.kind) {
    case TypeInfo::Kind::kSequence: {
      onnxpb::SequenceProto seq;
      if (!seq.ParseFromString(bytes)) return invalid_argument(path, ": not a valid SequenceProto");
      return value_from_sequence(seq, path);
    }
    case TypeInfo::Kind::kOptional: {
      onnxpb::OptionalProto opt;
      if (!opt.ParseFromString(bytes)) return invalid_argument(path, ": not a valid OptionalProto");
      return value_from_optional(opt, path);
    }
    default: {
      XONNX_ASSIGN_OR_RETURN(Tensor t, parse_tensor_proto(bytes.data(), bytes.size(), path));
      return Value(std::move(t));
    }
  }
}

}  // namespace xonnx
