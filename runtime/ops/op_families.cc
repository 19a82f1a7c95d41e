// Every op family of ops.def: what a program registers unless a selective build links
// its own linked_op_families() (runtime/ops/op_families.h).
#include "runtime/ops/op_families.h"

#include "runtime/ops/registry.h"

namespace xonnx {

const OpFamily* linked_op_families(size_t* count) {
  static const OpFamily kAll[] = {
#define XONNX_OP_FAMILY(family) {"register_" #family "_ops", register_##family##_ops},
#include "runtime/ops/ops.def"
#undef XONNX_OP_FAMILY
  };
  *count = sizeof(kAll) / sizeof(kAll[0]);
  return kAll;
}

}  // namespace xonnx
