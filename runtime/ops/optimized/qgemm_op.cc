// Optimized com.microsoft QGemm on the AVX512-VNNI int8 GEMM of qgemm.h: the QDQ pass turns a
// classifier head (DQ(x) -> Gemm with DQ'd int8 weights) into QGemm, whose float output then
// comes straight from the int32 sums:
//   Y[m][n] = float(sum_k A'[m][k] * W[n][k] + C[n] - a_zero_point * sum_k W[n][k]) * alpha * a_scale * b_scale[n]
// (or requantized to y_scale / y_zero_point). It reads 1 byte per weight where the folded float
// Gemm read 4 (MobileNetV2's 1280x1000 head: 1.3 MB instead of 5 MB per run). Covers what the
// pass emits: 2-D A [M, K] with per-tensor constant parameters, constant symmetric int8 B (either
// orientation, per-tensor or per-column scales), an optional constant int32 bias of N (or 1)
// elements. Anything else, or a CPU without VNNI, runs the reference kernel (ref/qgemm.cc).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/quant_params.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/qgemm.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kRowBlock = 96;  // rows of A per task: a multiple of the kernel's 12

class QGemmKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const QgemmFn gemm = qgemm_fast();
    if (!gemm) return unsupported("own QGemm: AVX512-VNNI only");
    XONNX_ASSIGN_OR_RETURN(const int64_t trans_a, init.get_int("transA", 0));
    XONNX_ASSIGN_OR_RETURN(const int64_t trans_b, init.get_int("transB", 0));
    XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
    if (trans_a != 0) return unsupported("own QGemm: transA");
    const Tensor* b = init.constant_input(3);
    const Tensor* bs = init.constant_input(4);
    const Tensor* bz = init.has_input(5) ? init.constant_input(5) : nullptr;
    if (!b || b->dtype() != DataType::kInt8 || b->rank() != 2 || !bs || bs->dtype() != DataType::kFloat ||
        (init.has_input(5) && !bz))
      return unsupported("own QGemm: needs a constant int8 2-D B with constant parameters");
    const int64_t k = trans_b ? b->dim(1) : b->dim(0), n = trans_b ? b->dim(0) : b->dim(1);
    if (bs->rank() > 1 || (bs->numel() != 1 && bs->numel() != n)) return unsupported("own QGemm: b_scale shape");
    for (int64_t i = 0; bz && i < bz->numel(); ++i)
      if (bz->get_as_int64(i) != 0) return unsupported("own QGemm: asymmetric B");
    if (!init.has_input(2)) return unsupported("own QGemm: no a_zero_point");
    auto kern = std::unique_ptr<QGemmKernel>(new QGemmKernel());
    XONNX_ASSIGN_OR_RETURN(const float a_scale, constant_scale(init, 1, "own QGemm: a_scale"));
    XONNX_ASSIGN_OR_RETURN(const int32_t a_zp, constant_zero_point(init, 2, "own QGemm: a_zero_point", &kern->a_type_));
    double out_scale = 1.0;  // y_scale, when the output is quantized
    int32_t y_zp = 0;
    kern->float_out_ = !init.has_input(7);
    if (!kern->float_out_) {
      XONNX_ASSIGN_OR_RETURN(const float y_scale, constant_scale(init, 7, "own QGemm: y_scale"));
      if (!init.has_input(8)) return unsupported("own QGemm: no y_zero_point");
      XONNX_ASSIGN_OR_RETURN(y_zp, constant_zero_point(init, 8, "own QGemm: y_zero_point", &kern->y_type_));
      out_scale = y_scale;
    }
    const Tensor* c = init.has_input(6) ? init.constant_input(6) : nullptr;
    if (init.has_input(6) && (!c || c->dtype() != DataType::kInt32 || (c->numel() != n && c->numel() != 1) ||
                              (c->rank() == 2 && c->dim(0) != 1) || c->rank() > 2))
      return unsupported("own QGemm: C must be a constant int32 of N or 1 elements");
    XONNX_RETURN_IF_ERROR(init_own_kernel(*kern, init));
    kern->gemm_ = gemm;
    kern->k_ = k;
    // W rows [n][k]: B^T as stored when transB, else transposed once here.
    std::vector<int8_t> rows(static_cast<size_t>(n * k));
    const int8_t* bd = b->data<int8_t>();
    for (int64_t col = 0; col < n; ++col)
      for (int64_t kk = 0; kk < k; ++kk)
        rows[static_cast<size_t>(col * k + kk)] = trans_b ? bd[col * k + kk] : bd[kk * n + col];
    kern->w_ = pack_qgemm_weights(rows.data(), n, k);
    const bool a_signed = kern->a_type_ == DataType::kInt8;
    const int64_t a_zp_unsigned = a_zp + (a_signed ? 128 : 0);
    kern->offset_.resize(static_cast<size_t>(n));
    kern->scale_.resize(static_cast<size_t>(n));
    for (int64_t col = 0; col < n; ++col) {
      const int64_t bias = c ? c->data<int32_t>()[c->numel() == 1 ? 0 : col] : 0;
      const int64_t off = bias - a_zp_unsigned * kern->w_.column_sums[static_cast<size_t>(col)];
      if (off < INT32_MIN || off > INT32_MAX) return unsupported("own QGemm: bias out of range");
      kern->offset_[static_cast<size_t>(col)] = static_cast<int32_t>(off);
      const double b_scale = bs->data<float>()[bs->numel() == 1 ? 0 : col];
      kern->scale_[static_cast<size_t>(col)] = static_cast<float>(double(alpha) * a_scale * b_scale / out_scale);
    }
    const bool y_signed = kern->y_type_ == DataType::kInt8;
    kern->rq_ = {kern->offset_.data(), kern->scale_.data(), y_zp, y_signed ? -128 : 0, y_signed ? 127 : 255, a_signed,
                 kern->float_out_};
    init.packed_constant_input(3);  // copied into the packed panels, as is the bias
    if (init.has_input(6)) init.packed_constant_input(6);
    return std::unique_ptr<Kernel>(std::move(kern));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& a = ctx.input(0);
    if (!a.defined() || a.dtype() != a_type_ || a.rank() != 2 || a.dim(1) != k_) return Status::ok();
    const int64_t m = a.dim(0), n = w_.n;
    XONNX_ASSIGN_OR_RETURN(Tensor * y,
                           ctx.allocate_output_uninitialized(0, float_out_ ? DataType::kFloat : y_type_, {m, n}));
    const uint8_t* in = static_cast<const uint8_t*>(a.raw_data());
    uint8_t* out = static_cast<uint8_t*>(y->raw_data());
    const size_t out_row = static_cast<size_t>(n) * (float_out_ ? sizeof(float) : 1);
    const int64_t blocks = (m + kRowBlock - 1) / kRowBlock;
    const size_t min_chunk = chunk_for(kRowBlock * w_.k4 * n / 8);
    const bool pad_rows = w_.k4 != k_;  // the kernel reads k4 bytes per row: the last row would overrun A
    if (pad_rows)
      padded_.prepare(*pool_, static_cast<size_t>(blocks), min_chunk, static_cast<size_t>(kRowBlock * w_.k4));
    auto run_blocks = [&](size_t b0, size_t b1) {
      uint8_t* const padded = pad_rows ? padded_.of(b0) : nullptr;  // rows padded to k4
      for (size_t blk = b0; blk < b1; ++blk) {
        const int64_t r0 = static_cast<int64_t>(blk) * kRowBlock, rows = std::min(m, r0 + kRowBlock) - r0;
        const uint8_t* src = in + r0 * k_;
        size_t lda = static_cast<size_t>(k_);
        if (pad_rows) {
          for (int64_t r = 0; r < rows; ++r) std::memcpy(padded + r * w_.k4, src + r * k_, static_cast<size_t>(k_));
          src = padded;
          lda = static_cast<size_t>(w_.k4);
        }
        gemm_(src, lda, static_cast<size_t>(rows), w_, rq_, out + static_cast<size_t>(r0) * out_row,
              static_cast<size_t>(n));
      }
    };
    pool_->parallel_for(static_cast<size_t>(blocks), min_chunk, run_blocks);
    handled = true;
    return Status::ok();
  }

  QgemmFn gemm_ = nullptr;
  int64_t k_ = 0;
  bool float_out_ = true;
  DataType a_type_ = DataType::kInt8, y_type_ = DataType::kUint8;
  QgemmWeights w_;
  std::vector<int32_t> offset_;
  std::vector<float> scale_;
  QgemmRequant rq_;
  ChunkScratch<uint8_t> padded_;  // per chunk of row blocks, when k is not a multiple of 4
};

}  // namespace

void register_opt_qgemm(OpRegistry& registry) {
  XONNX_REGISTER(registry, "com.microsoft", "QGemm", 1, kLatestVersion, QGemmKernel::create, Backend::kOptimized,
                 kBackendPriority, [] { return enabled() && qgemm_fast() != nullptr; });
}

}  // namespace opt
}  // namespace xonnx
