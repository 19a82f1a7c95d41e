// Optimized com.microsoft QGemm and MatMulIntegerToFloat, ONNX QLinearMatMul and MatMulInteger on
// the AVX512-VNNI int8 GEMM of qgemm.h, which sums A'[m][k] * W[n][k] in int32 and then
//   Y[m][n] = float(sum + C[n] - a_zero_point * sum_k W[n][k]) * alpha * a_scale * b_scale[n]
// (QGemm's float output, MatMulIntegerToFloat's), that requantized to y_scale / y_zero_point
// (QGemm, QLinearMatMul), or the int32 sum itself (MatMulInteger). The QDQ pass turns a classifier
// head (DQ(x) -> Gemm with DQ'd int8 weights) into QGemm, a transformer's projection (DQ(x) ->
// MatMul -> Q) into QLinearMatMul and one whose output stays float (an LM head) into
// MatMulIntegerToFloat; the converter's int8 dynamic quantization writes MatMulInteger, and the
// same pass makes MatMulInteger -> Cast -> Mul(scales) [-> Add(bias)] MatMulIntegerToFloat. The
// matmuls take A [..., K] of any rank as rows (Y [..., N]). Weights are read as 1 byte where the
// folded float Gemm read 4. Covers: A with per-tensor parameters (constant, or given per run as
// DynamicQuantizeLinear computes them: MatMulInteger's zero point, MatMulIntegerToFloat's scale
// and zero point), constant symmetric int8 B (either orientation for QGemm, per-tensor or
// per-column scales), QGemm's optional constant int32 bias of N (or 1) elements,
// MatMulIntegerToFloat's constant float one of N. Anything else, or a CPU without VNNI, runs the
// reference kernels (ref/qgemm.cc, ref/qlinear.cc).
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

// Where an op keeps its inputs (-1: it has none such): QGemm (A, a_scale, a_zp, B, b_scale, b_zp,
// C, y_scale, y_zp), QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp),
// MatMulInteger (A, B, a_zero_point, b_zero_point).
struct QgemmOperands {
  const char* op;
  int a_scale, a_zero_point, b, b_scale, b_zero_point, c, y_scale, y_zero_point;
  bool matmul;     // B is [K, N] and A of any rank >= 2
  bool integer;    // int32 output; a_zero_point may change from run to run
  bool float_out;  // always a float output (MatMulIntegerToFloat; QGemm's is float without y_scale)
  int float_bias;  // a float bias of N added after the scale (MatMulIntegerToFloat's), or -1
};
constexpr QgemmOperands kQGemm{"own QGemm", 1, 2, 3, 4, 5, 6, 7, 8, false, false, false, -1};
constexpr QgemmOperands kQLinearMatMul{"own QLinearMatMul", 1, 2, 3, 4, 5, -1, 6, 7, true, false, false, -1};
constexpr QgemmOperands kMatMulInteger{"own MatMulInteger", -1, 2, 1, -1, 3, -1, -1, -1, true, true, false, -1};
constexpr QgemmOperands kMatMulIntegerToFloat{
    "own MatMulIntegerToFloat", 2, 4, 1, 3, 5, -1, -1, -1, true, false, true, 6};

bool has(const KernelInit& init, int i) { return i >= 0 && init.has_input(static_cast<size_t>(i)); }

class QGemmKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create_qgemm(const KernelInit& init) { return create(init, kQGemm); }
  static Result<std::unique_ptr<Kernel>> create_qlinear_matmul(const KernelInit& init) {
    return create(init, kQLinearMatMul);
  }
  static Result<std::unique_ptr<Kernel>> create_matmul_integer(const KernelInit& init) {
    return create(init, kMatMulInteger);
  }
  static Result<std::unique_ptr<Kernel>> create_matmul_integer_to_float(const KernelInit& init) {
    return create(init, kMatMulIntegerToFloat);
  }

 private:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const QgemmOperands& io) {
    const char* op = io.op;
    const QgemmFn gemm = qgemm_fast();
    if (!gemm) return unsupported(op, ": AVX512-VNNI only");
    int64_t trans_b = 0;
    float alpha = 1.0f;
    if (!io.matmul) {
      XONNX_ASSIGN_OR_RETURN(const int64_t trans_a, init.get_int("transA", 0));
      XONNX_ASSIGN_OR_RETURN(trans_b, init.get_int("transB", 0));
      XONNX_ASSIGN_OR_RETURN(alpha, init.get_float("alpha", 1.0f));
      if (trans_a != 0) return unsupported(op, ": transA");
    }
    const Tensor* b = init.constant_input(static_cast<size_t>(io.b));
    const Tensor* bs = io.b_scale >= 0 ? init.constant_input(static_cast<size_t>(io.b_scale)) : nullptr;
    const Tensor* bz = has(init, io.b_zero_point) ? init.constant_input(static_cast<size_t>(io.b_zero_point)) : nullptr;
    if (!b || b->dtype() != DataType::kInt8 || b->rank() != 2 || (has(init, io.b_zero_point) && !bz) ||
        (io.b_scale >= 0 && (!bs || bs->dtype() != DataType::kFloat)))
      return unsupported(op, ": needs a constant int8 2-D B with constant parameters");
    const int64_t k = trans_b ? b->dim(1) : b->dim(0), n = trans_b ? b->dim(0) : b->dim(1);
    if (k <= 0 || n <= 0) return unsupported(op, ": empty B");
    if (bs && (bs->rank() > 1 || (bs->numel() != 1 && bs->numel() != n))) return unsupported(op, ": b_scale shape");
    for (int64_t i = 0; bz && i < bz->numel(); ++i)
      if (bz->get_as_int64(i) != 0) return unsupported(op, ": asymmetric B");
    auto kern = std::unique_ptr<QGemmKernel>(new QGemmKernel());
    kern->io_ = io;
    float a_scale = 1.0f;
    int32_t a_zp = 0;
    // A's parameters come with each run where DynamicQuantizeLinear computes them: MatMulInteger's
    // zero point, MatMulIntegerToFloat's scale and zero point when either is not constant.
    kern->a_per_run_ =
        io.integer ||
        (io.float_out && (!init.constant_input(static_cast<size_t>(io.a_scale)) ||
                          (has(init, io.a_zero_point) && !init.constant_input(static_cast<size_t>(io.a_zero_point)))));
    if (!kern->a_per_run_) {
      if (!has(init, io.a_zero_point) && !io.float_out) return unsupported(op, ": no a_zero_point");
      XONNX_ASSIGN_OR_RETURN(a_scale, constant_scale(init, static_cast<size_t>(io.a_scale), op));
      if (has(init, io.a_zero_point)) {
        XONNX_ASSIGN_OR_RETURN(a_zp,
                               constant_zero_point(init, static_cast<size_t>(io.a_zero_point), op, &kern->a_type_));
      }
    }
    double out_scale = 1.0;  // y_scale, when the output is quantized
    int32_t y_zp = 0;
    kern->float_out_ = io.float_out || (!io.integer && !has(init, io.y_scale));
    if (kern->float_out_ && !io.float_out && io.matmul) return unsupported(op, ": no y_scale");
    if (!io.integer && !kern->float_out_) {
      XONNX_ASSIGN_OR_RETURN(const float y_scale, constant_scale(init, static_cast<size_t>(io.y_scale), op));
      if (!has(init, io.y_zero_point)) return unsupported(op, ": no y_zero_point");
      XONNX_ASSIGN_OR_RETURN(y_zp, constant_zero_point(init, static_cast<size_t>(io.y_zero_point), op, &kern->y_type_));
      out_scale = y_scale;
    }
    const bool has_c = has(init, io.c);
    const Tensor* c = has_c ? init.constant_input(static_cast<size_t>(io.c)) : nullptr;
    if (has_c && (!c || c->dtype() != DataType::kInt32 || (c->numel() != n && c->numel() != 1) ||
                  (c->rank() == 2 && c->dim(0) != 1) || c->rank() > 2))
      return unsupported(op, ": C must be a constant int32 of N or 1 elements");
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
    kern->bias_.assign(static_cast<size_t>(n), 0);
    kern->scale_.resize(static_cast<size_t>(n));
    kern->b_scale_.resize(static_cast<size_t>(n));
    for (int64_t col = 0; col < n; ++col) {
      kern->bias_[static_cast<size_t>(col)] = c ? c->data<int32_t>()[c->numel() == 1 ? 0 : col] : 0;
      const float b_scale = bs ? bs->data<float>()[bs->numel() == 1 ? 0 : col] : 1.0f;
      kern->b_scale_[static_cast<size_t>(col)] = b_scale;
      kern->scale_[static_cast<size_t>(col)] = static_cast<float>(double(alpha) * a_scale * b_scale / out_scale);
    }
    if (has(init, io.float_bias)) {
      const Tensor* fb = init.constant_input(static_cast<size_t>(io.float_bias));
      if (!fb || fb->dtype() != DataType::kFloat || fb->rank() != 1 || fb->numel() != n)
        return unsupported(op, ": the bias must be a constant float vector of N values");
      kern->float_bias_.assign(fb->data<float>(), fb->data<float>() + n);
    }
    const bool y_signed = kern->y_type_ == DataType::kInt8;
    kern->rq_ = {nullptr,
                 kern->scale_.data(),
                 y_zp,
                 y_signed ? -128 : 0,
                 y_signed ? 127 : 255,
                 false,
                 kern->float_out_,
                 io.integer,
                 kern->float_bias_.empty() ? nullptr : kern->float_bias_.data()};
    if (!kern->a_per_run_) XONNX_RETURN_IF_ERROR(kern->set_a_zero_point(kern->a_type_, a_zp));
    init.packed_constant_input(static_cast<size_t>(io.b));  // copied into the packed panels, as is the bias
    if (has_c) init.packed_constant_input(static_cast<size_t>(io.c));
    if (!kern->float_bias_.empty()) init.packed_constant_input(static_cast<size_t>(io.float_bias));
    return std::unique_ptr<Kernel>(std::move(kern));
  }

  // offset[n] = bias[n] - a_zero_point * sum_k W[n][k], with int8 A read as A + 128. Nothing
  // changes when an offset does not fit int32.
  Status set_a_zero_point(DataType a_type, int32_t a_zp) {
    if (!offset_.empty() && a_type == a_type_ && a_zp == a_zp_) return Status::ok();
    const bool a_signed = a_type == DataType::kInt8;
    const int64_t a_zp_unsigned = a_zp + (a_signed ? 128 : 0);
    std::vector<int32_t> offset(static_cast<size_t>(w_.n));
    for (int64_t col = 0; col < w_.n; ++col) {
      const int64_t off = bias_[static_cast<size_t>(col)] - a_zp_unsigned * w_.column_sums[static_cast<size_t>(col)];
      if (off < INT32_MIN || off > INT32_MAX) return unsupported("own int8 GEMM: bias out of range");
      offset[static_cast<size_t>(col)] = static_cast<int32_t>(off);
    }
    offset_ = std::move(offset);
    a_type_ = a_type;
    a_zp_ = a_zp;
    rq_.offset = offset_.data();
    rq_.a_signed = a_signed;
    return Status::ok();
  }

  // scale[n] = a_scale * b_scale[n], rounded once as the float Mul of the two does (the product of
  // two floats is exact in double).
  void set_a_scale(float a_scale) {
    if (a_scale == a_scale_) return;
    for (size_t col = 0; col < scale_.size(); ++col) scale_[col] = static_cast<float>(double(a_scale) * b_scale_[col]);
    a_scale_ = a_scale;
  }

  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& a = ctx.input(0);
    if (!a.defined() || !dtype_is_8bit_int(a.dtype()) || a.rank() < 2 || (!io_.matmul && a.rank() != 2) ||
        a.dim(a.rank() - 1) != k_) {
      return Status::ok();
    }
    if (a_per_run_) {  // A's type, zero point (absent: 0) and scale come with the run
      int32_t a_zp = 0;
      if (ctx.has_input(static_cast<size_t>(io_.a_zero_point))) {
        const Tensor& z = ctx.input(static_cast<size_t>(io_.a_zero_point));
        if (z.numel() != 1 || z.rank() > 1 || z.dtype() != a.dtype()) return Status::ok();
        a_zp = static_cast<int32_t>(z.get_as_int64(0));
      }
      if (!io_.integer) {  // the reference names a bad scale
        const Tensor& s = ctx.input(static_cast<size_t>(io_.a_scale));
        if (s.dtype() != DataType::kFloat || s.numel() != 1 || s.rank() > 1) return Status::ok();
        const float a_scale = s.data<float>()[0];
        if (!(a_scale > 0.0f) || std::isinf(a_scale)) return Status::ok();
        set_a_scale(a_scale);
      }
      if (!set_a_zero_point(a.dtype(), a_zp).is_ok()) return Status::ok();
    } else if (a.dtype() != a_type_) {
      return Status::ok();
    }
    const int64_t m = a.numel() / k_, n = w_.n;
    Shape y_shape = a.shape();  // [..., K] -> [..., N]
    y_shape.back() = n;
    const DataType y_type = io_.integer ? DataType::kInt32 : float_out_ ? DataType::kFloat : y_type_;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, y_type, y_shape));
    const uint8_t* in = static_cast<const uint8_t*>(a.raw_data());
    uint8_t* out = static_cast<uint8_t*>(y->raw_data());
    const size_t out_row = static_cast<size_t>(n) * static_cast<size_t>(dtype_bits(y_type) / 8);
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
  QgemmOperands io_ = kQGemm;  // which op this kernel runs
  int64_t k_ = 0;
  bool float_out_ = true;
  bool a_per_run_ = false;  // A's zero point (and a float output's scale) are read from each run
  float a_scale_ = 0.0f;    // the per-run scale that scale_ holds (0: none yet)
  DataType a_type_ = DataType::kInt8, y_type_ = DataType::kUint8;
  int32_t a_zp_ = 0;
  QgemmWeights w_;
  std::vector<int32_t> bias_, offset_;  // offset = bias - a_zero_point * column sums
  std::vector<float> scale_, b_scale_;
  std::vector<float> float_bias_;  // MatMulIntegerToFloat's bias, or empty
  QgemmRequant rq_;
  ChunkScratch<uint8_t> padded_;  // per chunk of row blocks, when k is not a multiple of 4
};

}  // namespace

void register_opt_qgemm(OpRegistry& registry) {
  XONNX_REGISTER(registry, "com.microsoft", "QGemm", 1, kLatestVersion, QGemmKernel::create_qgemm, Backend::kOptimized,
                 kBackendPriority, [] { return enabled() && qgemm_fast() != nullptr; });
  XONNX_REGISTER(registry, "", "QLinearMatMul", 10, kLatestVersion, QGemmKernel::create_qlinear_matmul,
                 Backend::kOptimized, kBackendPriority, [] { return enabled() && qgemm_fast() != nullptr; });
  XONNX_REGISTER(registry, "", "MatMulInteger", 10, kLatestVersion, QGemmKernel::create_matmul_integer,
                 Backend::kOptimized, kBackendPriority, [] { return enabled() && qgemm_fast() != nullptr; });
  XONNX_REGISTER(registry, "com.microsoft", "MatMulIntegerToFloat", 1, kLatestVersion,
                 QGemmKernel::create_matmul_integer_to_float, Backend::kOptimized, kBackendPriority,
                 [] { return enabled() && qgemm_fast() != nullptr; });
}

}  // namespace opt
}  // namespace xonnx
