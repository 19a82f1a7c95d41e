// A Gemm that is a fully-connected layer (XNNPACK's, and the own one in optimized/matmul.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ops/kernel.h"

namespace xonnx {

// transA 0, a constant 2-D float B (either transB), C absent or a constant bias that
// broadcasts along N. parse() declines (unsupported, naming `what`) anything else.
struct FullyConnectedGemm {
  bool trans_b = false;
  float alpha = 1.0f;
  int64_t n = 0, k = 0;
  std::vector<float> bias;  // [n]: beta * C, empty without C
  static Result<FullyConnectedGemm> parse(const KernelInit& init, const char* what);
};

}  // namespace xonnx
