// Declarations shared by the files of the cast family (cast.cc, cast_string.cc).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace xonnx {
namespace cast_detail {

// Element i of a non-string tensor as text, like numpy's str() (cast_string.cc).
std::string format_number(const Tensor& x, int64_t i);

// Parses s for target type `to`. *kind: 0 float (*f), 1 double (*d), 2 int64 (*i), 3 uint64 (*u).
Status parse_string(const std::string& s, DataType to, int* kind, float* f, double* d, int64_t* i, uint64_t* u);

}  // namespace cast_detail
}  // namespace xonnx
