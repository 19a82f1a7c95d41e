// NumPy .npy read/write (format 1.0/2.0, little-endian, C order) for CLI inputs/outputs.
#pragma once

#include <string>

#include "runtime/core/tensor.h"

namespace xonnx {
namespace cli {

Result<Tensor> read_npy(const std::string& path);
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace cli
}  // namespace xonnx
