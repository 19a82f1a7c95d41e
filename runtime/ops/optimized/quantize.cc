// Optimized per-tensor QuantizeLinear (float32 -> int8 / uint8) and DequantizeLinear
// (int8 / uint8 -> float32) with constant scalar scale and zero point: the edges of int8 models
// (the input's quantization, the classifier head's dequantization); and DynamicQuantizeLinear,
// which int8 dynamic models run before every MatMulInteger. Same arithmetic as the reference
// (ref/quantize.cc): x / scale in float, round half to even, NaN -> 0, saturation;
// (x - zero_point) * scale in float; DynamicQuantizeLinear's scale and zero point from the
// range as the reference computes them. Blocked, axis-wise or other types stay with the reference.
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/kernels.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kChunk = 16384;  // elements per parallel chunk

// The loops below are plain C++; on x86-64 GCC also compiles AVX2 and AVX-512 clones and picks
// one at load time (the file itself is built for the baseline ISA).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define XONNX_ISA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define XONNX_ISA_CLONES
#endif

// An int accumulator vectorizes (a bool one did not: 1 element per cycle).
XONNX_ISA_CLONES bool any_nan(const float* x, size_t n) {
  int nan = 0;
  for (size_t i = 0; i < n; ++i) nan |= static_cast<int>(x[i] != x[i]);
  return nan != 0;
}

// q = clamp(x / s, lo, hi) rounded half to even, + zp. Clamping to the integer bounds first
// changes nothing and keeps |q| small, where adding and subtracting 1.5 * 2^23 rounds half to
// even (the reference's nearbyint) in a form the compiler vectorizes. No NaN here.
template <typename T>
inline void quantize_loop(const float* x, T* y, size_t n, float s, float lo, float hi, int32_t zp) {
  for (size_t i = 0; i < n; ++i) {
    float q = x[i] / s;
    q = q > lo ? q : lo;
    q = q < hi ? q : hi;
    q = (q + 12582912.0f) - 12582912.0f;
    y[i] = static_cast<T>(static_cast<int32_t>(q) + zp);
  }
}
XONNX_ISA_CLONES void quantize_int8(const float* x, int8_t* y, size_t n, float s, float lo, float hi, int32_t zp) {
  quantize_loop(x, y, n, s, lo, hi, zp);
}
XONNX_ISA_CLONES void quantize_uint8(const float* x, uint8_t* y, size_t n, float s, float lo, float hi, int32_t zp) {
  quantize_loop(x, y, n, s, lo, hi, zp);
}

// y = QuantizeLinear(x, scale, zero_point) into int8 or uint8, over the pool in chunks.
void quantize_chunks(const ThreadPool& pool, const float* in, void* out, size_t n, float scale, int32_t zp,
                     bool is_signed) {
  const float lo = static_cast<float>((is_signed ? -128 : 0) - zp),
              hi = static_cast<float>((is_signed ? 127 : 255) - zp);
  pool.parallel_for(n, kChunk, [&](size_t b, size_t e) {
    if (is_signed) {
      quantize_int8(in + b, static_cast<int8_t*>(out) + b, e - b, scale, lo, hi, zp);
    } else {
      quantize_uint8(in + b, static_cast<uint8_t*>(out) + b, e - b, scale, lo, hi, zp);
    }
  });
}

// The plain per-tensor form: none of opset 21+'s blocked scales, output types or precisions.
Status plain_form(const KernelInit& init) {
  for (const char* attr : {"block_size", "output_dtype", "precision"}) {
    XONNX_ASSIGN_OR_RETURN(int64_t v, init.get_int(attr, 0));
    if (v != 0) return unsupported("optimized Q/DQ: attribute ", attr);
  }
  return Status::ok();
}

// Declines what the per-tensor kernels do not cover: non-constant or non-scalar parameters and
// what plain_form declines.
Status per_tensor_params(const KernelInit& init, float& scale, int32_t& zero_point, DataType& zp_type) {
  XONNX_RETURN_IF_ERROR(plain_form(init));
  const Tensor* s = init.constant_input(1);
  if (!s || s->dtype() != DataType::kFloat || s->numel() != 1) return unsupported("optimized Q/DQ: scale");
  scale = s->data<float>()[0];
  if (!(scale > 0) || !std::isfinite(scale)) return unsupported("optimized Q/DQ: scale value");  // reference reports it
  zero_point = 0;
  zp_type = DataType::kUndefined;
  if (init.has_input(2)) {
    const Tensor* z = init.constant_input(2);
    if (!z || z->numel() != 1 || !dtype_is_8bit_int(z->dtype())) return unsupported("optimized Q/DQ: zero point");
    zero_point = static_cast<int32_t>(z->get_as_int64(0));
    zp_type = z->dtype();
  }
  return Status::ok();
}

class QuantizeKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<QuantizeKernel>(new QuantizeKernel());
    XONNX_RETURN_IF_ERROR(per_tensor_params(init, k->scale_, k->zp_, k->type_));
    if (k->type_ == DataType::kUndefined) k->type_ = DataType::kUint8;  // ONNX's default
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x)) return Status::ok();
    const float* in = x.data<float>();
    const size_t n = static_cast<size_t>(x.numel());
    if (!keep_if_finite(!any_nan(in, n)))
      return Status::ok();  // NaN quantizes to the zero point: the reference's business
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, type_, x.shape()));
    quantize_chunks(*pool_, in, y->raw_data(), n, scale_, zp_, type_ == DataType::kInt8);
    handled = true;
    return Status::ok();
  }

  float scale_ = 1;
  int32_t zp_ = 0;
  DataType type_ = DataType::kUint8;
};

class DequantizeKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<DequantizeKernel>(new DequantizeKernel());
    if (!init.constant_input(1)) {
      // A scale computed at run time (a DynamicQuantizeLinear's, in the QDQ pass's rewrite of
      // ConvInteger): scale and zero point read per run, as scalars.
      XONNX_RETURN_IF_ERROR(plain_form(init));
      k->runtime_params_ = true;
    } else {
      XONNX_RETURN_IF_ERROR(per_tensor_params(init, k->scale_, k->zp_, k->type_));
    }
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  // Scalar scale (positive, finite) and zero point of x's type from the node's inputs; false
  // leaves the node to the reference, which reports bad ones.
  bool read_params(KernelContext& ctx, DataType x_type, float& scale, int32_t& zp) const {
    const Tensor& s = ctx.input(1);
    if (!is_f32(s) || s.numel() != 1) return false;
    scale = s.data<float>()[0];
    if (!(scale > 0) || !std::isfinite(scale)) return false;
    zp = 0;
    if (ctx.num_inputs() < 3 || !ctx.has_input(2)) return true;
    const Tensor& z = ctx.input(2);
    if (!z.defined() || z.numel() != 1 || z.dtype() != x_type) return false;
    zp = static_cast<int32_t>(z.get_as_int64(0));
    return true;
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!x.defined() || !dtype_is_8bit_int(x.dtype()) || (type_ != DataType::kUndefined && x.dtype() != type_))
      return Status::ok();
    float s = scale_;
    int32_t zp = zp_;
    if (runtime_params_ && !read_params(ctx, x.dtype(), s, zp)) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    float* out = y->data<float>();
    auto body = [&](const auto* in) {
      pool_->parallel_for(static_cast<size_t>(x.numel()), kChunk, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) out[i] = static_cast<float>(static_cast<int32_t>(in[i]) - zp) * s;
      });
    };
    if (x.dtype() == DataType::kInt8) {
      body(x.data<int8_t>());
    } else {
      body(x.data<uint8_t>());
    }
    handled = true;
    return Status::ok();
  }

  float scale_ = 1;
  int32_t zp_ = 0;
  DataType type_ = DataType::kUndefined;  // kUndefined: no zero point, any 8-bit x
  bool runtime_params_ = false;           // scale and zero point are inputs read per run
};

// y, y_scale, y_zero_point = DynamicQuantizeLinear(x): uint8 over x's range widened to hold 0.
class DynamicQuantizeKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::unique_ptr<DynamicQuantizeKernel>(new DynamicQuantizeKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!is_f32(x)) return Status::ok();
    const float* in = x.data<float>();
    const size_t n = static_cast<size_t>(x.numel());
    if (n == 0) return Status::ok();
    const size_t chunk = pool_->chunk_size(n, kChunk), chunks = (n + chunk - 1) / chunk + 1;
    ranges_.assign(2 * chunks, 0.0f);  // per chunk: min, max (both start at 0)
    finite_.assign(chunks, 1);
    pool_->parallel_for(n, kChunk, [&](size_t b, size_t e) {
      const size_t c = b / chunk;
      finite_[c] = row_range_(in + b, static_cast<int64_t>(e - b), &ranges_[2 * c], &ranges_[2 * c + 1]);
    });
    float mn = 0.0f, mx = 0.0f;
    bool finite = true;
    for (size_t c = 0; c < chunks; ++c) {
      mn = std::min(mn, ranges_[2 * c]);
      mx = std::max(mx, ranges_[2 * c + 1]);
      finite = finite && finite_[c] != 0;
    }
    if (!keep_if_finite(finite)) return Status::ok();  // the reference reports NaN or an infinite range
    const float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    if (!std::isfinite(scale)) return Status::ok();  // an infinite range: the reference reports it
    const float zp = std::nearbyint(std::min(std::max(0.0f - mn / scale, 0.0f), 255.0f));
    const int32_t z = static_cast<int32_t>(zp);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kUint8, x.shape()));
    quantize_chunks(*pool_, in, y->raw_data(), n, scale, z, false);
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output_uninitialized(1, DataType::kFloat, {}));
      s->data<float>()[0] = scale;
    }
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * zt, ctx.allocate_output_uninitialized(2, DataType::kUint8, {}));
      zt->data<uint8_t>()[0] = static_cast<uint8_t>(z);
    }
    handled = true;
    return Status::ok();
  }

  bool (*row_range_)(const float*, int64_t, float*, float*) = kernels().row_range;
  std::vector<float> ranges_;
  std::vector<char> finite_;  // per chunk: no NaN or infinity in it
};

}  // namespace

void register_opt_quantize(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "QuantizeLinear", 10, kLatestVersion, QuantizeKernel::create, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "DequantizeLinear", 10, kLatestVersion, DequantizeKernel::create, Backend::kOptimized);
  XONNX_REGISTER(registry, "", "DynamicQuantizeLinear", 11, kLatestVersion, DynamicQuantizeKernel::create,
                 Backend::kOptimized);
}

}  // namespace opt
}  // namespace xonnx
