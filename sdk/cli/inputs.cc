#include "sdk/cli/inputs.h"

#include <limits>
#include <random>
#include <sstream>

#include "platforms/posix/safe_open.h"
#include "runtime/onnx/loader.h"
#include "sdk/cli/npy.h"

namespace xonnx {
namespace cli {

namespace {

const ValueInfo* find_input(const std::vector<ValueInfo>& inputs, const std::string& name) {
  for (const ValueInfo& info : inputs) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

// Splits "NAME=VALUE" of option `option` and checks that NAME is a model input.
Status split_spec(const std::vector<ValueInfo>& inputs, const std::string& option, const std::string& spec,
                  std::string& name, std::string& value) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return invalid_argument(option, " '", spec, "' must be NAME=", option == "--shape" ? "d0,d1,..." : "FILE");
  }
  name = spec.substr(0, eq);
  value = spec.substr(eq + 1);
  if (!find_input(inputs, name)) {
    std::string names;
    for (const ValueInfo& info : inputs) names += (names.empty() ? "" : ", ") + info.name;
    return invalid_argument(option, " '", spec, "': the model has no input named '", name, "' (inputs: ", names, ")");
  }
  return Status::ok();
}

Result<Shape> parse_dims(const std::string& spec, const std::string& dims) {
  Shape shape;
  if (dims.empty()) return shape;  // scalar
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    long long d = -1;
    try {
      d = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || d < 0) {
      return invalid_argument("--shape '", spec, "': dimension '", item, "' is not a non-negative integer");
    }
    shape.push_back(d);
  }
  if (dims.back() == ',') return invalid_argument("--shape '", spec, "': trailing ','");
  return shape;
}

// Checks a --shape against the model's rank and fixed dims.
Status check_shape(const ValueInfo& info, const Shape& shape) {
  const TypeInfo& t = info.type;
  if (!t.has_shape) return Status::ok();
  if (shape.size() != t.dims.size()) {
    return invalid_argument("--shape for input '", info.name, "' has rank ", shape.size(),
                            ", the model's input has rank ", t.dims.size());
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (t.dims[d].known() && t.dims[d].value != shape[d]) {
      return invalid_argument("--shape for input '", info.name, "': dimension ", d, " is fixed to ", t.dims[d].value,
                              " by the model, got ", shape[d]);
    }
  }
  return Status::ok();
}

// The shape to make data with: --shape if given, else the model's when it has no symbolic dims.
Result<Shape> input_shape(const ValueInfo& info, const InputSpecs& specs) {
  const TypeInfo& t = info.type;
  auto given = specs.shapes.find(info.name);
  if (given != specs.shapes.end()) return given->second;
  if (!t.has_shape) {
    return invalid_argument("input '", info.name, "' has no fixed shape: give it with --shape ", info.name,
                            "=d0,d1,... or --input ", info.name, "=FILE");
  }
  Shape shape;
  for (const Dim& d : t.dims) {
    if (!d.known()) {
      return invalid_argument("input '", info.name, "' has symbolic dimension '", d.param, "': give it with --shape ",
                              info.name, "=d0,d1,... or --input ", info.name, "=FILE");
    }
    shape.push_back(d.value);
  }
  return shape;
}

Result<Tensor> made_up_input(const ValueInfo& info, const InputSpecs& specs, std::mt19937& rng) {
  const TypeInfo& t = info.type;
  if (t.kind != TypeInfo::Kind::kTensor) {
    return invalid_argument("input '", info.name, "' is not a tensor: give it with --input ", info.name, "=FILE");
  }
  XONNX_ASSIGN_OR_RETURN(Shape shape, input_shape(info, specs));
  if (shape_numel(shape) < 0) {
    return invalid_argument("input '", info.name, "' shape ", shape_to_string(shape), " is too large");
  }
  const int64_t bytes = dtype_storage_bytes(t.elem_type, shape_numel(shape));
  if (bytes < 0 || bytes > specs.max_bytes) {
    return resource_exhausted("random input '", info.name, "' of shape ", shape_to_string(shape), " needs ",
                              describe_bytes(bytes), ", over the memory cap of ", describe_bytes(specs.max_bytes));
  }
  XONNX_ASSIGN_OR_RETURN(Tensor x, Tensor::allocate(t.elem_type, shape));
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const int64_t n = x.numel();
  switch (t.elem_type) {
    case DataType::kFloat:
      for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = uni(rng);
      break;
    case DataType::kDouble:
      for (int64_t i = 0; i < n; ++i) x.data<double>()[i] = uni(rng);
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < n; ++i) x.data<uint16_t>()[i] = float_to_half(uni(rng));
      break;
    case DataType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) x.data<uint16_t>()[i] = float_to_bfloat16(uni(rng));
      break;
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64: break;  // zeros: valid indices / ids for any vocabulary
    default:
      return unsupported("cannot make data for input '", info.name, "' of type ", dtype_name(t.elem_type),
                         ": give it with --input ", info.name, "=FILE");
  }
  return x;
}

}  // namespace

Result<InputSpecs> parse_input_specs(const std::vector<ValueInfo>& model_inputs,
                                     const std::vector<std::string>& input_files,
                                     const std::vector<std::string>& shapes) {
  InputSpecs specs;
  std::string name, value;
  for (const std::string& spec : input_files) {
    XONNX_RETURN_IF_ERROR(split_spec(model_inputs, "--input", spec, name, value));
    if (value.empty()) return invalid_argument("--input '", spec, "': missing file name");
    if (specs.files.count(name)) {
      return invalid_argument("--input '", spec, "': input '", name, "' is already given (--input ", name, "=",
                              specs.files[name], ")");
    }
    specs.files[name] = value;
  }
  for (const std::string& spec : shapes) {
    XONNX_RETURN_IF_ERROR(split_spec(model_inputs, "--shape", spec, name, value));
    if (specs.files.count(name)) {
      return invalid_argument("input '", name, "' is given both --input and --shape");
    }
    if (specs.shapes.count(name))
      return invalid_argument("--shape '", spec, "': input '", name, "' has a --shape already");
    XONNX_ASSIGN_OR_RETURN(Shape shape, parse_dims(spec, value));
    XONNX_RETURN_IF_ERROR(check_shape(*find_input(model_inputs, name), shape));
    specs.shapes[name] = std::move(shape);
  }
  return specs;
}

Result<Tensor> read_input_file(const std::string& path, int64_t max_bytes) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".pb") == 0) {
    std::string bytes, error;
    UniqueFd fd = open_regular_file(path, &error);  // a FIFO fails instead of blocking
    if (!fd.valid()) return not_found(error);
    if (!read_whole_file(fd.get(), path, std::numeric_limits<int>::max(), &bytes, &error)) {
      return invalid_argument(error);  // protobuf parses at most 2 GB
    }
    return parse_tensor_proto(bytes.data(), bytes.size(), path);
  }
  return read_npy(path, max_bytes);
}

Result<std::vector<MadeInput>> make_inputs(const std::vector<ValueInfo>& model_inputs, const InputSpecs& specs,
                                           uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<MadeInput> made;
  for (const ValueInfo& info : model_inputs) {
    auto file = specs.files.find(info.name);
    MadeInput in;
    in.from_file = file != specs.files.end();
    Result<Tensor> t = in.from_file ? read_input_file(file->second, specs.max_bytes) : made_up_input(info, specs, rng);
    if (!t.is_ok()) return t.status();
    in.tensor = std::move(t).value();
    made.push_back(std::move(in));
  }
  return made;
}

}  // namespace cli
}  // namespace xonnx
