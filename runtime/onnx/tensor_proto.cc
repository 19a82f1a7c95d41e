#include "runtime/onnx/tensor_proto.h"

#include <stdlib.h>

#include <cstring>

#include "runtime/core/checked.h"

namespace xonnx {

namespace {

// Copies typed repeated fields into `out` (already allocated with the right shape).
template <typename Src, typename Fn>
Status copy_field(const Src& field, int64_t expected, const std::string& what, const char* name, Fn&& store) {
  if (static_cast<int64_t>(field.size()) != expected) {
    return invalid_model(what, ": ", name, " has ", field.size(), " values but the dims need ", expected);
  }
  for (int64_t i = 0; i < expected; ++i) store(i, field.Get(static_cast<int>(i)));
  return Status::ok();
}

// Storage for tensor bytes inside memory that `keepalive` holds (the model's mapping): a view
// when aligned for the element type, else a copy made when a kernel first reads it.
std::shared_ptr<Storage> model_bytes(const void* p, size_t bytes, DataType dtype, std::shared_ptr<const void> keepalive,
                                     bool file_backed) {
  const size_t align = static_cast<size_t>(std::max(1, dtype_bits(dtype) / 8));
  if (reinterpret_cast<uintptr_t>(p) % align == 0) {
    return Storage::view(p, bytes, std::move(keepalive), file_backed);
  }
  return Storage::copy_on_access(p, bytes, std::move(keepalive), file_backed);
}

// Raw BOOL bytes other than 0 and 1 would make Not/And/Xor compute on the byte; ONNX means
// any non-zero byte as true. Returns a 0/1 copy, or null when the bytes are already 0/1.
Result<std::shared_ptr<Storage>> normalized_bools(const uint8_t* p, size_t n, const std::string& what) {
  size_t i = 0;
  while (i < n && p[i] <= 1) ++i;
  if (i == n) return std::shared_ptr<Storage>();
  auto storage = Storage::allocate(n);
  if (!storage) return resource_exhausted(what, ": out of memory normalizing ", n, " BOOL bytes");
  auto* out = static_cast<uint8_t*>(storage->data());
  for (size_t k = 0; k < n; ++k) out[k] = p[k] != 0;
  return storage;
}

}  // namespace

Status charge_allocation(const TensorSource& source, int64_t bytes, const std::string& what,
                         const std::string& detail) {
  const LoadOptions defaults;
  const LoadOptions& options = source.options ? *source.options : defaults;
  const int64_t cap = options.tensor_cap();
  if (bytes < 0 || bytes > cap) {
    return resource_exhausted(what, ": ", detail, " needs ", describe_bytes(bytes), ", over the memory cap of ",
                              describe_bytes(cap), " (", options.tensor_cap_name(), ")");
  }
  if (!source.allocated) return Status::ok();
  const int64_t total = checked_add(*source.allocated, bytes);
  if (total < 0 || total > options.max_memory_bytes) {
    return resource_exhausted(what, ": ", detail, " needs ", describe_bytes(bytes),
                              " more, and the tensors loaded so far hold ", describe_bytes(*source.allocated),
                              ": over the memory cap of ", describe_bytes(options.max_memory_bytes),
                              " (max_memory_bytes)");
  }
  *source.allocated = total;
  return Status::ok();
}

namespace {

// The typed field `dtype` is stored in (as the switch in tensor_from_proto reads it) must have
// exactly the entries the dims need: numel values, or `bytes` packed bytes for sub-byte types.
Status check_typed_field_size(const onnxpb::TensorProto& proto, DataType dtype, int64_t numel, int64_t bytes,
                              const std::string& what) {
  const char* name = "int32_data";
  int64_t have = proto.int32_data_size();
  int64_t expected = numel;
  switch (dtype) {
    case DataType::kFloat:
      name = "float_data";
      have = proto.float_data_size();
      break;
    case DataType::kDouble:
      name = "double_data";
      have = proto.double_data_size();
      break;
    case DataType::kInt64:
      name = "int64_data";
      have = proto.int64_data_size();
      break;
    case DataType::kUint32:
    case DataType::kUint64:
      name = "uint64_data";
      have = proto.uint64_data_size();
      break;
    case DataType::kString:
      name = "string_data";
      have = proto.string_data_size();
      break;
    case DataType::kInt4:
    case DataType::kUint4:
    case DataType::kFloat4E2M1:
    case DataType::kInt2:
    case DataType::kUint2: expected = bytes; break;
    default: break;
  }
  if (have != expected) {
    return invalid_model(what, ": ", name, " has ", have, " values but the dims need ", expected);
  }
  return Status::ok();
}

}  // namespace

Result<Tensor> tensor_from_proto(const onnxpb::TensorProto& proto, const TensorSource& source,
                                 const std::string& what) {
  if (!proto.has_data_type() || !dtype_is_known(proto.data_type())) {
    return invalid_model(what, ": unknown element type ", proto.data_type());
  }
  const auto dtype = static_cast<DataType>(proto.data_type());
  if (dtype == DataType::kComplex64 || dtype == DataType::kComplex128) {
    return unsupported(what, ": element type ", dtype_name(dtype), " is not supported");
  }
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) return invalid_model(what, ": negative dimension ", d);
    shape.push_back(d);
  }
  const int64_t numel = shape_numel(shape);
  if (numel < 0) {
    return invalid_model(what, ": element count of shape ", shape_to_string(shape), " overflows");
  }
  const int64_t bytes = dtype_storage_bytes(dtype, numel);
  const std::string detail = shape_to_string(shape) + " " + dtype_name(dtype);
  // String tensors hold one std::string per element before any data is checked.
  const int64_t held =
      dtype == DataType::kString ? checked_mul(numel, static_cast<int64_t>(sizeof(std::string))) : bytes;
  const bool allocates = proto.data_location() != onnxpb::TensorProto::EXTERNAL && !(source.raw && source.keepalive);
  if (allocates) {
    XONNX_RETURN_IF_ERROR(charge_allocation(source, held, what, detail));
  } else {
    TensorSource no_total = source;  // a view into the file: counts against the per-tensor cap only
    no_total.allocated = nullptr;
    XONNX_RETURN_IF_ERROR(charge_allocation(no_total, held, what, detail));
  }

  // External data: a view into the mapped data file.
  if (proto.data_location() == onnxpb::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0;
    int64_t length = -1;
    for (const auto& kv : proto.external_data()) {
      char* endp = nullptr;
      if (kv.key() == "location") {
        location = kv.value();
      } else if (kv.key() == "offset" || kv.key() == "length") {
        const long long v = std::strtoll(kv.value().c_str(), &endp, 10);
        if (kv.value().empty() || *endp != '\0' || v < 0) {
          return invalid_model(what, ": external data ", kv.key(), " '", kv.value(), "' is not a non-negative integer");
        }
        (kv.key() == "offset" ? offset : length) = v;
      }
    }
    if (!source.external) return invalid_model(what, ": external data is not allowed here");
    auto file = source.external->open(location);
    if (!file.is_ok()) return file.status().with_context(what + ": ");
    const int64_t file_size = static_cast<int64_t>((*file)->size());
    if (length < 0) length = file_size - offset;
    if (offset > file_size || length > file_size - offset) {
      return invalid_model(what, ": external data at offset ", offset, " with length ", length, " is outside '",
                           location, "' (", file_size, " bytes)");
    }
    if (length != bytes) {
      return invalid_model(what, ": external data has ", length, " bytes but ", shape_to_string(shape), " ",
                           dtype_name(dtype), " needs ", bytes);
    }
    const auto* p = static_cast<const uint8_t*>((*file)->data()) + offset;
    std::shared_ptr<const void> keep = *file;
    if (dtype == DataType::kBool) {
      XONNX_ASSIGN_OR_RETURN(auto fixed, normalized_bools(p, static_cast<size_t>(bytes), what));
      if (fixed) return Tensor(dtype, shape, std::move(fixed));
    }
    return Tensor(dtype, shape, model_bytes(p, static_cast<size_t>(bytes), dtype, keep, true));
  }

  // raw_data: scanned (zero-copy) or inside the proto.
  const uint8_t* raw = source.raw;
  size_t raw_size = source.raw_size;
  if (!raw && proto.has_raw_data()) {
    raw = reinterpret_cast<const uint8_t*>(proto.raw_data().data());
    raw_size = proto.raw_data().size();
  }
  if (raw) {
    if (dtype == DataType::kString) return invalid_model(what, ": string tensors cannot use raw_data");
    if (static_cast<int64_t>(raw_size) != bytes) {
      return invalid_model(what, ": raw_data has ", raw_size, " bytes but ", shape_to_string(shape), " ",
                           dtype_name(dtype), " needs ", bytes);
    }
    if (dtype == DataType::kBool) {
      XONNX_ASSIGN_OR_RETURN(auto fixed, normalized_bools(raw, raw_size, what));
      if (fixed) return Tensor(dtype, shape, std::move(fixed));
    }
    if (source.raw && source.keepalive) {  // the bytes outlive us: no copy now
      return Tensor(dtype, shape, model_bytes(raw, raw_size, dtype, source.keepalive, source.file_backed));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, shape));
    if (raw_size) std::memcpy(t.raw_data(), raw, raw_size);
    return t;
  }

  // Typed fields. The field must hold what the dims need before the tensor is allocated: a
  // few bytes of proto may claim gigabytes (fuzz tensor_readers: 9 GB for an empty field).
  XONNX_RETURN_IF_ERROR(check_typed_field_size(proto, dtype, numel, bytes, what));
  XONNX_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, shape));
  void* out = t.raw_data();
  switch (dtype) {
    case DataType::kFloat:
      XONNX_RETURN_IF_ERROR(copy_field(proto.float_data(), numel, what, "float_data",
                                       [&](int64_t i, float v) { static_cast<float*>(out)[i] = v; }));
      break;
    case DataType::kDouble:
      XONNX_RETURN_IF_ERROR(copy_field(proto.double_data(), numel, what, "double_data",
                                       [&](int64_t i, double v) { static_cast<double*>(out)[i] = v; }));
      break;
    case DataType::kInt64:
      XONNX_RETURN_IF_ERROR(copy_field(proto.int64_data(), numel, what, "int64_data",
                                       [&](int64_t i, int64_t v) { static_cast<int64_t*>(out)[i] = v; }));
      break;
    case DataType::kUint32:
    case DataType::kUint64:
      XONNX_RETURN_IF_ERROR(copy_field(proto.uint64_data(), numel, what, "uint64_data", [&](int64_t i, uint64_t v) {
        if (dtype == DataType::kUint32)
          static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(v);
        else
          static_cast<uint64_t*>(out)[i] = v;
      }));
      break;
    case DataType::kString:
      XONNX_RETURN_IF_ERROR(copy_field(proto.string_data(), numel, what, "string_data",
                                       [&](int64_t i, const std::string& v) { t.string_data()[i] = v; }));
      break;
    case DataType::kInt4:
    case DataType::kUint4:
    case DataType::kFloat4E2M1:
    case DataType::kInt2:
    case DataType::kUint2: {
      // int32_data holds the packed bytes, one byte per value.
      XONNX_RETURN_IF_ERROR(copy_field(proto.int32_data(), bytes, what, "int32_data", [&](int64_t i, int32_t v) {
        static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v);
      }));
      break;
    }
    default: {
      // int32_data carries int32, int16, int8, uint16, uint8, bool, and the bit patterns of
      // float16, bfloat16 and float8 values.
      const int bits = dtype_bits(dtype);
      XONNX_RETURN_IF_ERROR(copy_field(proto.int32_data(), numel, what, "int32_data", [&](int64_t i, int32_t v) {
        if (bits == 8)
          static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v);
        else if (bits == 16)
          static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(v);
        else
          static_cast<int32_t*>(out)[i] = v;
      }));
      if (dtype == DataType::kBool) {
        for (int64_t i = 0; i < numel; ++i) static_cast<uint8_t*>(out)[i] = static_cast<uint8_t*>(out)[i] ? 1 : 0;
      }
      break;
    }
  }
  return t;
}

Result<TypeInfo> type_from_proto(const onnxpb::TypeProto& proto) {
  TypeInfo info;
  auto read_shape = [&info](const onnxpb::TensorShapeProto& shape) {
    info.has_shape = true;
    for (const auto& d : shape.dim()) {
      Dim dim;
      if (d.has_dim_value()) dim.value = d.dim_value();
      if (d.has_dim_param()) dim.param = d.dim_param();
      info.dims.push_back(dim);
    }
  };
  switch (proto.value_case()) {
    case onnxpb::TypeProto::kTensorType:
      info.kind = TypeInfo::Kind::kTensor;
      info.elem_type = static_cast<DataType>(proto.tensor_type().elem_type());
      if (proto.tensor_type().has_shape()) read_shape(proto.tensor_type().shape());
      break;
    case onnxpb::TypeProto::kSparseTensorType:
      info.kind = TypeInfo::Kind::kSparseTensor;
      info.elem_type = static_cast<DataType>(proto.sparse_tensor_type().elem_type());
      if (proto.sparse_tensor_type().has_shape()) read_shape(proto.sparse_tensor_type().shape());
      break;
    case onnxpb::TypeProto::kSequenceType: {
      info.kind = TypeInfo::Kind::kSequence;
      XONNX_ASSIGN_OR_RETURN(TypeInfo elem, type_from_proto(proto.sequence_type().elem_type()));
      info.elem = std::make_shared<TypeInfo>(std::move(elem));
      break;
    }
    case onnxpb::TypeProto::kOptionalType: {
      info.kind = TypeInfo::Kind::kOptional;
      XONNX_ASSIGN_OR_RETURN(TypeInfo elem, type_from_proto(proto.optional_type().elem_type()));
      info.elem = std::make_shared<TypeInfo>(std::move(elem));
      break;
    }
    case onnxpb::TypeProto::kMapType: info.kind = TypeInfo::Kind::kMap; break;
    default: break;
  }
  if (info.elem_type != DataType::kUndefined && !dtype_is_known(static_cast<int32_t>(info.elem_type))) {
    return invalid_model("unknown element type ", static_cast<int32_t>(info.elem_type));
  }
  return info;
}

}  // namespace xonnx
