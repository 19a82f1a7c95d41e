// Element copies between tensors of one dtype that work for every element type: strings,
// whole-byte types (memcpy of runs) and packed sub-byte types (int4/uint4/float4/int2).
// Data-movement kernels (Transpose, Concat, Slice, Gather, Pad ...) use these.
#pragma once

#include <cstring>
#include <vector>

#include "runtime/core/tensor.h"

namespace xonnx {
namespace ref {

// Copies single elements or runs of elements between two tensors of the same dtype.
class ElemCopy {
 public:
  ElemCopy(const Tensor& src, Tensor* dst) : dtype_(src.dtype()) {
    if (dtype_ == DataType::kString) {
      kind_ = kStr;
      ss_ = src.string_data();
      ds_ = dst->string_data();
    } else {
      const int bits = dtype_bits(dtype_);
      kind_ = bits < 8 ? kSub : kBytes;
      esize_ = static_cast<size_t>(bits / 8);
      s_ = static_cast<const uint8_t*>(src.raw_data());
      d_ = static_cast<uint8_t*>(dst->raw_data());
    }
  }
  void one(int64_t di, int64_t si) const {
    switch (kind_) {
      case kStr: ds_[di] = ss_[si]; break;
      case kBytes:  // constant sizes become single moves
        switch (esize_) {
          case 4: std::memcpy(d_ + di * 4, s_ + si * 4, 4); break;
          case 8: std::memcpy(d_ + di * 8, s_ + si * 8, 8); break;
          case 2: std::memcpy(d_ + di * 2, s_ + si * 2, 2); break;
          default: std::memcpy(d_ + di * esize_, s_ + si * esize_, esize_); break;
        }
        break;
      case kSub: subbyte_set(d_, dtype_, di, subbyte_get(s_, dtype_, si)); break;
    }
  }
  void run(int64_t di, int64_t si, int64_t n) const {
    if (n <= 0) return;
    if (kind_ == kBytes) {
      std::memcpy(d_ + di * esize_, s_ + si * esize_, static_cast<size_t>(n) * esize_);
      return;
    }
    for (int64_t k = 0; k < n; ++k) one(di + k, si + k);
  }

 private:
  enum Kind { kStr, kBytes, kSub };
  DataType dtype_;
  Kind kind_ = kBytes;
  size_t esize_ = 0;
  const uint8_t* s_ = nullptr;
  uint8_t* d_ = nullptr;
  const std::string* ss_ = nullptr;
  std::string* ds_ = nullptr;
};

// Fills the output (row-major over out_shape) from input element base + sum(idx[d]*strides[d]).
inline void strided_copy(const ElemCopy& cp, const Shape& out_shape, const Shape& strides, int64_t base) {
  const int64_t total = shape_numel(out_shape);
  if (total <= 0) return;
  const size_t rank = out_shape.size();
  if (rank == 0) {
    cp.one(0, base);
    return;
  }
  const int64_t inner = out_shape.back();
  const int64_t inner_stride = strides.back();
  const int64_t outer = total / inner;
  Shape idx(rank - 1, 0);
  int64_t off = base;
  for (int64_t o = 0; o < outer; ++o) {
    if (inner_stride == 1) {
      cp.run(o * inner, off, inner);
    } else {
      for (int64_t k = 0; k < inner; ++k) cp.one(o * inner + k, off + k * inner_stride);
    }
    for (size_t d = rank - 1; d-- > 0;) {
      ++idx[d];
      off += strides[d];
      if (idx[d] < out_shape[d]) break;
      off -= strides[d] * out_shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace ref
}  // namespace xonnx
