// Op families: the registration functions of ops.def (XONNX_OP_FAMILY), and which of them a program
// links. A selective build (cmake/xonnx_select_ops.cmake) links its own generated
// linked_op_families() naming only the families its models need; the linker then takes neither
// ops/op_families.cc nor the families left out from the static library.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace xonnx {

class OpRegistry;

// The generated list of a selective build repeats this definition (it cannot include this
// header): change both together.
struct OpFamily {
  const char* function;  // "register_conv_ops"
  void (*register_ops)(OpRegistry& registry);
};

// The families this program registers, in ops.def order; *count receives how many.
const OpFamily* linked_op_families(size_t* count);
// How many families ops.def lists (more than are linked in a selective build).
size_t op_family_count();
// The linked families that register domain::op (any backend or version), in registration order,
// by short name ("conv" for register_conv_ops).
std::vector<std::string> families_of_op(const std::string& domain, const std::string& op);

}  // namespace xonnx
