// NumPy .npy read/write (format 1.0/2.0, little-endian, C order) for CLI inputs/outputs.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/tensor.h"

namespace xonnx {
namespace cli {

// Opens `path` without blocking (a FIFO or device is refused) and parses it. Fails (before
// allocating) when the header's shape does not match the data the file holds, or needs more
// than max_bytes.
Result<Tensor> read_npy(const std::string& path, int64_t max_bytes = INT64_MAX);
// Parses .npy bytes; `path` names them in errors.
Result<Tensor> parse_npy(const void* data, size_t size, const std::string& path, int64_t max_bytes = INT64_MAX);
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace cli
}  // namespace xonnx
