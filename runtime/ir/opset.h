// The range of default-domain (ONNX) opsets this build understands: the loader refuses models
// outside it, and the registry's kernels cover it.
#pragma once

#include <cstdint>

namespace xonnx {

// Highest default-domain opset the loader accepts (the ONNX 1.22 test suite uses up to 27).
constexpr int64_t kMaxOnnxOpset = 27;
constexpr int64_t kMinOnnxOpset = 1;

}  // namespace xonnx
