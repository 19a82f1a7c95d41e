// NumPy .npy read/write (format 1.0/2.0, little-endian, C order) for CLI inputs/outputs.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/tensor.h"

namespace xonnx {
namespace cli {

// Fails (before allocating) when the header's shape does not match the data the file holds,
// or needs more than max_bytes.
Result<Tensor> read_npy(const std::string& path, int64_t max_bytes = INT64_MAX);
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace cli
}  // namespace xonnx
