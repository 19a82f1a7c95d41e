// Quantization parameters that a fast integer kernel bakes in at session creation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/dtype.h"
#include "runtime/core/status.h"
#include "runtime/ops/kernel.h"

namespace xonnx {

// Input i as a constant 1-element float scale that is a normal positive number, and as a
// constant 1-element 8-bit zero point (its value; `type` gets its type). Anything else declines
// (`what` names kernel and input).
Result<float> constant_scale(const KernelInit& init, size_t i, const char* what);
Result<int32_t> constant_zero_point(const KernelInit& init, size_t i, const char* what, DataType* type);

}  // namespace xonnx
