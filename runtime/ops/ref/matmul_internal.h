// Declarations shared by the files of the matmul family (matmul.cc, matmul_einsum.cc).
#pragma once

#include "runtime/ops/registry.h"

namespace xonnx {

void register_matmul_einsum_ops(OpRegistry& registry);  // matmul_einsum.cc: Einsum, Det

}  // namespace xonnx
