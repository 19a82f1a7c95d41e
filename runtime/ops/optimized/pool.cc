// Own NHWC MaxPool (the layout pass's com.xonnx.nhwc MaxPool, 2-D), ahead of XNNPACK's: the
// 2022 XNNPACK max pooling runs 2-3x slower on the 3x3 / stride-2 pools after a CNN's stem
// (SqueezeNet, ResNet), and its NaN handling needs a finiteness scan.
// Each output pixel takes the max over its window's kh * kw input pixels, C values at a time;
// taps in the padding read a row of the type's lowest value, which never wins.
//  - float32: outputs that come out -inf (an all-NaN window, or -inf inputs) are redone with
//    the reference rule, so the result is the reference kernel's bit for bit;
//  - int8 / uint8 (the integer MaxPool of QDQ models, passes/qdq_fusion.h): an exact max.
// The Indices output, other types and (for integers) windows of padding only go to the
// reference kernel. It also runs the layout pass's ConcatMaxPool: each part of a channel
// Concat pooled into its channels of the output, the concatenation never written.
// Own NHWC AveragePool (float32, 2-D), ahead of XNNPACK's, which copies the input with its
// padding first when the padding counts (Inception's pools, count_include_pad from a folded
// Pad) and does that copy on one thread: each window's taps summed in the reference's order
// (padding taps read zeros, which leave a sum unchanged), times 1 / count. XNNPACK multiplies
// by the reciprocal as well; the reference divides (the results differ by at most an ulp).
#include <algorithm>
#include <array>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/ops/internal_ops.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/max_pool.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr size_t kMaxConcatParts = 16;  // ConcatMaxPool's inputs (the layout pass merges up to 16)

// The integer windows: out[p][j] = max over t of taps[p * ntaps + t][j]. Plain loops, which
// GCC vectorizes; on x86-64 also as AVX2 / AVX-512 clones picked at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define XONNX_POOL_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define XONNX_POOL_CLONES
#endif
template <typename T>
inline void max_pool_integer(const T* const* taps, int64_t ntaps, int64_t pixels, int64_t c, T* out,
                             int64_t out_stride) {
  for (int64_t p = 0; p < pixels; ++p, taps += ntaps, out += out_stride) {
    std::copy(taps[0], taps[0] + c, out);
    for (int64_t t = 1; t < ntaps; ++t) {
      const T* x = taps[t];
      for (int64_t j = 0; j < c; ++j) out[j] = x[j] > out[j] ? x[j] : out[j];
    }
  }
}
XONNX_POOL_CLONES void max_pool_int8(const int8_t* const* taps, int64_t ntaps, int64_t pixels, int64_t c, int8_t* out,
                                     int64_t out_stride) {
  max_pool_integer(taps, ntaps, pixels, c, out, out_stride);
}
// out[p][j] = (0 + taps[p * ntaps][j] + ... + taps[p * ntaps + ntaps - 1][j]) * scale[p].
XONNX_POOL_CLONES void average_pool_float(const float* const* taps, int64_t ntaps, int64_t pixels, int64_t c,
                                          const float* scale, float* out, int64_t out_stride) {
  for (int64_t p = 0; p < pixels; ++p, taps += ntaps, out += out_stride) {
    const float* first = taps[0];
    for (int64_t j = 0; j < c; ++j) out[j] = 0.0f + first[j];  // the reference's sum starts at +0
    for (int64_t t = 1; t < ntaps; ++t) {
      const float* x = taps[t];
      for (int64_t j = 0; j < c; ++j) out[j] += x[j];
    }
    const float s = scale[p];
    for (int64_t j = 0; j < c; ++j) out[j] *= s;
  }
}
XONNX_POOL_CLONES void max_pool_uint8(const uint8_t* const* taps, int64_t ntaps, int64_t pixels, int64_t c,
                                      uint8_t* out, int64_t out_stride) {
  max_pool_integer(taps, ntaps, pixels, c, out, out_stride);
}

}  // namespace

Result<MaxPoolWindows> MaxPoolWindows::parse(const KernelInit& init, const std::string& prefix) {
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> ks, init.get_ints(prefix + "kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> strides, init.get_ints(prefix + "strides", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> dil, init.get_ints(prefix + "dilations", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, init.get_ints(prefix + "pads", {0, 0, 0, 0}));
  XONNX_ASSIGN_OR_RETURN(const int64_t ceil_mode, init.get_int(prefix + "ceil_mode", 0));
  XONNX_ASSIGN_OR_RETURN(const std::string auto_pad, ref::get_auto_pad(init, prefix + "auto_pad"));
  if (ks.size() != 2 || strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return unsupported("own pool: only 2-D");
  constexpr int64_t kMax = 1 << 16;
  for (int i = 0; i < 2; ++i) {
    if (ks[i] < 1 || ks[i] > kMax || strides[i] < 1 || strides[i] > kMax || dil[i] < 1 || dil[i] > kMax)
      return unsupported("own pool: attribute out of range");
  }
  for (int64_t p : pads)
    if (p < 0 || p > kMax) return unsupported("own pool: pads out of range");
  MaxPoolWindows w;
  for (int i = 0; i < 2; ++i) {
    w.kernel_[i] = ks[i];
    w.s_[i] = strides[i];
    w.d_[i] = dil[i];
    if (auto_pad == "NOTSET") {
      w.pads_[i] = pads[static_cast<size_t>(i)];
      w.pads_[i + 2] = pads[static_cast<size_t>(i + 2)];
    }
  }
  w.same_ = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  w.same_upper_ = auto_pad == "SAME_UPPER";
  w.ceil_ = ceil_mode != 0;
  return w;
}

bool MaxPoolWindows::dim(int i, int64_t in, PoolDim* d) const {
  const int64_t ek = (kernel_[i] - 1) * d_[i] + 1, s = s_[i];
  if (same_) {
    const ref::SamePadding p = ref::same_padding(in, s, ek, same_upper_);
    d->out = p.out;
    d->pad_begin = p.pad_begin;
    d->pad_end = p.pad_end;
  } else {
    d->pad_begin = pads_[i];
    d->pad_end = pads_[i + 2];
    d->out = ref::pool_output_size(in, pads_[i], pads_[i + 2], ek, s, ceil_);
  }
  // A row's window pointers (out x taps) are held per chunk: windows of 2^32 taps, nearly all
  // padding, asked for 550 GB; those go to XNNPACK or the reference.
  constexpr int64_t kMaxRowTaps = int64_t{1} << 20;
  return d->out >= 0 && (i == 0 || d->out <= kMaxRowTaps / taps());
}

bool MaxPoolWindows::padding_only_window(int i, int64_t in, const PoolDim& d) const {
  const auto empty = [&](int64_t o) {
    for (int64_t k = 0; k < kernel_[i]; ++k) {
      const int64_t pos = o * s_[i] - d.pad_begin + k * d_[i];
      if (pos >= 0 && pos < in) return false;
    }
    return true;
  };
  return empty(0) || empty(d.out - 1);
}

namespace {

// The reference rule for the outputs that came out -inf: NaN when every value in the window
// is NaN (the first of them), the lowest float for a window without input values.
void redo_low_outputs(const float* const* taps, const float* pad, int64_t ntaps, int64_t pixels, int64_t c, float* out,
                      int64_t out_stride) {
  for (int64_t p = 0; p < pixels; ++p, taps += ntaps, out += out_stride) {
    for (int64_t j = 0; j < c; ++j) {
      if (out[j] != kNegInf) continue;
      float best = std::numeric_limits<float>::lowest();
      bool found = false, any = false;
      for (int64_t t = 0; t < ntaps; ++t) {
        if (taps[t] == pad) continue;
        const float v = taps[t][j];
        if (!any) best = v;  // an all-NaN window keeps its first NaN
        any = true;
        if (found ? v > best : v == v) {
          best = v;
          found = true;
        }
      }
      out[j] = best;
    }
  }
}

}  // namespace

void max_pool_float(const KernelTable& k, const float* const* taps, const float* pad, int64_t ntaps, int64_t pixels,
                    int64_t c, float* out, int64_t out_stride) {
  if (k.max_pool_pixels(taps, ntaps, pixels, c, out, out_stride))
    redo_low_outputs(taps, pad, ntaps, pixels, c, out, out_stride);
}

namespace {

class MaxPoolNhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    if (init.num_outputs() > 1 && !init.node().outputs[1].empty()) return unsupported("own MaxPool: Indices output");
    auto k = std::unique_ptr<MaxPoolNhwcKernel>(new MaxPoolNhwcKernel());
    XONNX_ASSIGN_OR_RETURN(k->windows_, MaxPoolWindows::parse(init, ""));
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!x.defined() || x.rank() != 4) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
    PoolDim dy, dx;
    if (!windows_.dim(0, h, &dy) || !windows_.dim(1, w, &dx) || n * h * w * c == 0) return Status::ok();
    switch (x.dtype()) {
      case DataType::kFloat: return pool<float>(ctx, x, dy, dx, handled);
      case DataType::kInt8: return pool<int8_t>(ctx, x, dy, dx, handled);
      case DataType::kUint8: return pool<uint8_t>(ctx, x, dy, dx, handled);
      default: return Status::ok();
    }
  }

  template <typename T>
  Status pool(KernelContext& ctx, const Tensor& x, const PoolDim& dy, const PoolDim& dx, bool& handled) {
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2);
    constexpr bool is_float = std::is_same<T, float>::value;
    if (!is_float && (windows_.padding_only_window(0, h, dy) || windows_.padding_only_window(1, w, dx)))
      return Status::ok();
    // The parts pooled side by side on the channel axis: the input, or ConcatMaxPool's inputs.
    std::array<const T*, kMaxConcatParts> part_data{};
    std::array<int64_t, kMaxConcatParts> part_channels{};
    const size_t parts = ctx.num_inputs();
    if (parts > kMaxConcatParts) return Status::ok();
    int64_t c = 0, widest = 0;
    for (size_t k = 0; k < parts; ++k) {
      const Tensor& part = ctx.input(k);
      if (!part.defined() || part.dtype() != x.dtype() || part.rank() != 4 || part.dim(0) != n || part.dim(1) != h ||
          part.dim(2) != w)
        return Status::ok();  // the reference reports it
      part_data[k] = part.data<T>();
      part_channels[k] = part.dim(3);
      c += part.dim(3);
      widest = std::max(widest, part.dim(3));
    }
    const int64_t oh = dy.out, ow = dx.out, ntaps = windows_.taps();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x.dtype(), {n, oh, ow, c}));
    std::vector<T>& pad_row = pad_of(part_data[0]);
    if (static_cast<int64_t>(pad_row.size()) != widest)
      pad_row.assign(static_cast<size_t>(widest),
                     is_float ? static_cast<T>(kNegInf) : std::numeric_limits<T>::lowest());
    const T* pad = pad_row.data();
    T* out = y->data<T>();
    const int64_t rows = n * oh, row_taps = ow * ntaps;
    const size_t min_chunk = chunk_for(row_taps * c * static_cast<int64_t>(sizeof(T)) / 4);
    ChunkScratch<const T*>& scratch = taps_of(part_data[0]);
    // Per chunk: one output row's window pointers, then its window rows.
    scratch.prepare(*pool_, static_cast<size_t>(rows), min_chunk, static_cast<size_t>(row_taps + windows_.kernel(0)));
    pool_->parallel_for(static_cast<size_t>(rows), min_chunk, [&](size_t r0, size_t r1) {
      const T** taps = scratch.of(r0);
      const T** window_rows = taps + row_taps;
      for (size_t r = r0; r < r1; ++r) {
        const int64_t b = static_cast<int64_t>(r) / oh, oy = static_cast<int64_t>(r) % oh;
        for (size_t k = 0, offset = 0; k < parts; offset += static_cast<size_t>(part_channels[k++])) {
          T* const row_out = out + static_cast<int64_t>(r) * ow * c + static_cast<int64_t>(offset);
          const int64_t pc = part_channels[k];
          windows_.window_rows(part_data[k] + b * h * w * pc, oy, h, w * pc, dy, window_rows);
          windows_.row_taps(window_rows, w, pc, dx, pad, taps);
          pool_row(taps, pad, ntaps, ow, pc, row_out, c);
        }
      }
    });
    handled = true;
    return Status::ok();
  }

  // The row padding taps read (C lowest values), and the per-chunk pointers, for each element
  // type.
  std::vector<float>& pad_of(const float*) { return float_pad_; }
  std::vector<int8_t>& pad_of(const int8_t*) { return int8_pad_; }
  std::vector<uint8_t>& pad_of(const uint8_t*) { return uint8_pad_; }
  ChunkScratch<const float*>& taps_of(const float*) { return float_taps_; }
  ChunkScratch<const int8_t*>& taps_of(const int8_t*) { return int8_taps_; }
  ChunkScratch<const uint8_t*>& taps_of(const uint8_t*) { return uint8_taps_; }

  // ow pixels of c channels, out_stride apart.
  void pool_row(const float* const* taps, const float* pad, int64_t ntaps, int64_t ow, int64_t c, float* out,
                int64_t out_stride) const {
    max_pool_float(*k_, taps, pad, ntaps, ow, c, out, out_stride);
  }
  void pool_row(const int8_t* const* taps, const int8_t*, int64_t ntaps, int64_t ow, int64_t c, int8_t* out,
                int64_t out_stride) const {
    max_pool_int8(taps, ntaps, ow, c, out, out_stride);
  }
  void pool_row(const uint8_t* const* taps, const uint8_t*, int64_t ntaps, int64_t ow, int64_t c, uint8_t* out,
                int64_t out_stride) const {
    max_pool_uint8(taps, ntaps, ow, c, out, out_stride);
  }

  MaxPoolWindows windows_;
  std::vector<float> float_pad_;
  std::vector<int8_t> int8_pad_;
  std::vector<uint8_t> uint8_pad_;
  ChunkScratch<const float*> float_taps_;
  ChunkScratch<const int8_t*> int8_taps_;
  ChunkScratch<const uint8_t*> uint8_taps_;
  const KernelTable* k_ = &kernels();
};

class AveragePoolNhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<AveragePoolNhwcKernel>(new AveragePoolNhwcKernel());
    XONNX_ASSIGN_OR_RETURN(k->windows_, MaxPoolWindows::parse(init, ""));
    XONNX_ASSIGN_OR_RETURN(const int64_t include_pad, init.get_int("count_include_pad", 0));
    k->count_include_pad_ = include_pad != 0;
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x) || x.rank() != 4) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = x.dim(3);
    PoolDim dy, dx;
    if (!windows_.dim(0, h, &dy) || !windows_.dim(1, w, &dx) || n * h * w * c == 0) return Status::ok();
    const int64_t oh = dy.out, ow = dx.out, ntaps = windows_.taps();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, {n, oh, ow, c}));
    counts(0, h, dy, row_counts_);
    counts(1, w, dx, column_counts_);
    if (static_cast<int64_t>(zeros_.size()) < c) zeros_.assign(static_cast<size_t>(c), 0.0f);
    const float* in = x.data<float>();
    float* out = y->data<float>();
    const int64_t rows = n * oh, row_taps = ow * ntaps;
    const size_t min_chunk = chunk_for(row_taps * c / 4);
    // Per chunk: an output row's window pointers, its window rows, and its pixels' 1 / count.
    taps_.prepare(*pool_, static_cast<size_t>(rows), min_chunk, static_cast<size_t>(row_taps + windows_.kernel(0)));
    scales_.prepare(*pool_, static_cast<size_t>(rows), min_chunk, static_cast<size_t>(ow));
    pool_->parallel_for(static_cast<size_t>(rows), min_chunk, [&](size_t r0, size_t r1) {
      const float** taps = taps_.of(r0);
      const float** window_rows = taps + row_taps;
      float* scale = scales_.of(r0);
      for (size_t r = r0; r < r1; ++r) {
        const int64_t b = static_cast<int64_t>(r) / oh, oy = static_cast<int64_t>(r) % oh;
        windows_.window_rows(in + b * h * w * c, oy, h, w * c, dy, window_rows);
        windows_.row_taps(window_rows, w, c, dx, zeros_.data(), taps);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t count = row_counts_[static_cast<size_t>(oy)] * column_counts_[static_cast<size_t>(ox)];
          scale[ox] = count > 0 ? 1.0f / static_cast<float>(count) : 0.0f;  // no input: 0, as the reference
        }
        average_pool_float(taps, ntaps, ow, c, scale, out + static_cast<int64_t>(r) * ow * c, c);
      }
    });
    handled = true;
    return Status::ok();
  }

  // Per output coordinate of dim i, the taps its divisor counts: those inside the input, or
  // inside the input and its padding (count_include_pad), as the reference counts them.
  void counts(int i, int64_t in, const PoolDim& d, std::vector<int64_t>& out) const {
    out.assign(static_cast<size_t>(d.out), 0);
    const int64_t lo = count_include_pad_ ? -d.pad_begin : 0, hi = count_include_pad_ ? in + d.pad_end : in;
    for (int64_t o = 0; o < d.out; ++o) {
      for (int64_t k = 0; k < windows_.kernel(i); ++k) {
        const int64_t pos = o * windows_.stride(i) - d.pad_begin + k * windows_.dilation(i);
        out[static_cast<size_t>(o)] += pos >= lo && pos < hi;
      }
    }
  }

  MaxPoolWindows windows_;
  bool count_include_pad_ = false;
  std::vector<int64_t> row_counts_, column_counts_;
  std::vector<float> zeros_;  // what padding taps read
  ChunkScratch<const float*> taps_;
  ChunkScratch<float> scales_;
};

}  // namespace

void register_opt_pool(OpRegistry& registry) {
  XONNX_REGISTER(registry, kNhwcDomain, "AveragePool", 1, kLatestVersion, AveragePoolNhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack, enabled);
  XONNX_REGISTER(registry, kNhwcDomain, "MaxPool", 1, kLatestVersion, MaxPoolNhwcKernel::create, Backend::kOptimized,
                 kPriorityBeforeXnnpack, enabled);
  // The layout pass's MaxPool of a channel Concat's parts (runtime/passes/layout_nhwc.h).
  XONNX_REGISTER(registry, kNhwcDomain, kConcatMaxPoolOp, 1, kLatestVersion, MaxPoolNhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack, enabled);
}

}  // namespace opt
}  // namespace xonnx
