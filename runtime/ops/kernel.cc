#include "runtime/ops/kernel.h"

namespace xonnx {

Result<const Attribute*> KernelInit::typed(const std::string& name, AttrType type, bool required) const {
  const Attribute* a = node().find_attr(name);
  if (!a) {
    if (required) return invalid_model("required attribute '", name, "' is missing");
    return static_cast<const Attribute*>(nullptr);
  }
  if (a->type != type) {
    return invalid_model("attribute '", name, "' must be ", attr_type_name(type), ", got ", attr_type_name(a->type));
  }
  return a;
}

Result<int64_t> KernelInit::get_int(const std::string& name, int64_t def) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kInt, false));
  return a ? a->i : def;
}
Result<int64_t> KernelInit::require_int(const std::string& name) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kInt, true));
  return a->i;
}
Result<float> KernelInit::get_float(const std::string& name, float def) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kFloat, false));
  return a ? a->f : def;
}
Result<float> KernelInit::require_float(const std::string& name) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kFloat, true));
  return a->f;
}
Result<std::string> KernelInit::get_string(const std::string& name, const std::string& def) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kString, false));
  return a ? a->s : def;
}
Result<std::string> KernelInit::require_string(const std::string& name) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kString, true));
  return a->s;
}
Result<std::vector<int64_t>> KernelInit::get_ints(const std::string& name, std::vector<int64_t> def) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kInts, false));
  return a ? a->ints : def;
}
Result<std::vector<float>> KernelInit::get_floats(const std::string& name, std::vector<float> def) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kFloats, false));
  return a ? a->floats : def;
}
Result<std::vector<std::string>> KernelInit::get_strings(const std::string& name, std::vector<std::string> def) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kStrings, false));
  return a ? a->strings : def;
}
Result<Tensor> KernelInit::require_tensor(const std::string& name) const {
  XONNX_ASSIGN_OR_RETURN(const Attribute* a, typed(name, AttrType::kTensor, true));
  return a->t;
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank) {
    return invalid_argument(what, " ", axis, " is out of range for rank ", rank);
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace xonnx
