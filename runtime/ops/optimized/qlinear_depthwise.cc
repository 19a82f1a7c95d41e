// Own int8 depthwise convolution for the layout pass's NHWC QLinearConv (group = channels,
// one output channel per input channel) on the AVX-512 rows of qdwconv.h. XNNPACK 2022's qc8
// depthwise kernels took about a quarter of int8 MobileNetV2's time (0.73 of 2.3 ms).
//
// Each task takes a run of output rows. The input rows a row needs are converted once to float,
// with padding columns holding the zero point (no bounds checks in the row kernel), into a
// ring of kh rows per parallel chunk, shared by consecutive output rows. Other CPUs, a channel
// multiplier above 1 and weights whose sums could exceed float's exact integers stay with
// XNNPACK (qlinear.cc) or the reference twin.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/common/quant_params.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/qdwconv.h"
#include "runtime/ops/optimized/row_ring.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr double kExactFloatInt = 16777216.0;  // 2^24

class QLinearDwConvNhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    const QdwRowFn row = qdw_row_fast();
    const QdwConvertFn convert = qdw_convert_fast();
    if (!row || !convert || !is_nhwc_node(init)) return unsupported("own depthwise QLinearConv: NHWC on AVX-512 only");
    const Tensor* w = init.constant_input(3);
    const Tensor* ws = init.constant_input(4);
    const Tensor* wz = init.constant_input(5);
    if (!w || !ws || !wz || !dtype_is_8bit_int(w->dtype()) || w->rank() != 4 || w->dim(1) != 1 ||
        wz->dtype() != w->dtype())
      return unsupported("own depthwise QLinearConv: needs constant 8-bit [M, 1, kh, kw] weights");
    const int64_t m = w->dim(0);
    int64_t group = 1;
    auto k = std::unique_ptr<QLinearDwConvNhwcKernel>(new QLinearDwConvNhwcKernel());
    XONNX_ASSIGN_OR_RETURN(k->geo_, ConvGeometry::parse(init, w->shape(), group, "own depthwise QLinearConv"));
    if (group != m || m < 1) return unsupported("own depthwise QLinearConv: not depthwise (group != channels)");
    if (k->geo_.kh > kMaxRingRows) return unsupported("own depthwise QLinearConv: kernel taller than 16");
    const auto per_channel = [m](const Tensor* t) { return t->rank() <= 1 && (t->numel() == 1 || t->numel() == m); };
    if (ws->dtype() != DataType::kFloat || !per_channel(ws) || !per_channel(wz))
      return unsupported("own depthwise QLinearConv: weight scale and zero point must be per tensor or per channel");
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->row_ = row;
    k->convert_ = convert;
    XONNX_ASSIGN_OR_RETURN(const float x_scale, constant_scale(init, 1, "own depthwise QLinearConv: x_scale"));
    XONNX_ASSIGN_OR_RETURN(const float y_scale, constant_scale(init, 6, "own depthwise QLinearConv: y_scale"));
    XONNX_ASSIGN_OR_RETURN(const int32_t x_zp,
                           constant_zero_point(init, 2, "own depthwise QLinearConv: x_zero_point", &k->x_type_));
    XONNX_ASSIGN_OR_RETURN(const int32_t y_zp,
                           constant_zero_point(init, 7, "own depthwise QLinearConv: y_zero_point", &k->y_type_));
    const Tensor* bias = init.has_input(8) ? init.constant_input(8) : nullptr;
    if (init.has_input(8) && (!bias || bias->dtype() != DataType::kInt32 || bias->numel() != m))
      return unsupported("own depthwise QLinearConv: bias must be a constant int32 [M]");

    k->channels_ = m;
    k->cp_ = (m + kQdwChannelBlock - 1) / kQdwChannelBlock * kQdwChannelBlock;
    const int64_t taps = k->geo_.kh * k->geo_.kw;
    k->weights_.assign(static_cast<size_t>(taps * k->cp_), 0.0f);
    k->bias_.assign(static_cast<size_t>(k->cp_), 0.0f);
    k->scale_.assign(static_cast<size_t>(k->cp_), 0.0f);
    const bool x_signed = k->x_type_ == DataType::kInt8;
    for (int64_t o = 0; o < m; ++o) {
      const int64_t zero = wz->get_as_int64(wz->numel() == 1 ? 0 : o);
      double sum = 0, abs_sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const double v = static_cast<double>(w->get_as_int64(o * taps + t) - zero);
        k->weights_[static_cast<size_t>((o / kQdwChannelBlock * taps + t) * kQdwChannelBlock + o % kQdwChannelBlock)] =
            static_cast<float>(v);
        sum += v;
        abs_sum += std::fabs(v);
      }
      // The zero point moves into the bias; every partial sum must stay an exact float integer.
      const double b = (bias ? bias->data<int32_t>()[o] : 0) - double(x_zp) * sum;
      if (std::fabs(b) + abs_sum * (x_signed ? 128.0 : 255.0) >= kExactFloatInt)
        return unsupported("own depthwise QLinearConv: sums beyond float's exact integers");
      k->bias_[static_cast<size_t>(o)] = static_cast<float>(b);
      const double ws_o = ws->data<float>()[ws->numel() == 1 ? 0 : o];
      k->scale_[static_cast<size_t>(o)] = static_cast<float>(double(x_scale) * ws_o / y_scale);
    }
    k->x_zero_point_ = static_cast<float>(x_zp);
    k->y_zero_point_ = y_zp;
    init.packed_constant_input(3);  // copied into the packed panels, as is the bias
    if (init.has_input(8)) init.packed_constant_input(8);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!x.defined() || x.dtype() != x_type_ || x.rank() != 4 || x.dim(3) != channels_) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2), c = channels_;
    std::array<int64_t, 4> pads;
    if (n <= 0 || h <= 0 || w <= 0 || !geo_.pads_for(h, w, pads)) return Status::ok();
    const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, y_type_, {n, oh, ow, c}));
    const uint8_t* in = static_cast<const uint8_t*>(x.raw_data());
    uint8_t* out = static_cast<uint8_t*>(y->raw_data());
    const int64_t kh = geo_.kh, wp = w + pads[1] + pads[3], row_floats = wp * cp_;
    const bool is_signed = x_type_ == DataType::kInt8;
    const bool y_signed = y_type_ == DataType::kInt8;

    const int64_t taps = kh * geo_.kw, blocks = cp_ / kQdwChannelBlock, block_floats = wp * kQdwChannelBlock;
    const size_t rows_total = static_cast<size_t>(n * oh),
                 min_chunk = static_cast<size_t>(chunk_for(ow * cp_ * geo_.kh * geo_.kw));
    ring_.prepare(*pool_, rows_total, min_chunk, RowRing::floats_needed(kh, row_floats));
    auto run_rows = [&](size_t r0, size_t r1) {
      RowRing ring(ring_.of(r0), kh, row_floats, x_zero_point_);  // padding rows hold the zero point
      std::array<float*, kMaxRingRows> row_of;                    // per ky: its ring row (all blocks)
      std::array<const float*, kMaxRingRows> rows;                // per ky: the current block of it
      std::array<int64_t, kMaxRingRows> input, fresh;
      QdwRow p;
      p.rows = rows.data();
      p.kh = kh;
      p.kw = geo_.kw;
      p.sw = geo_.sw;
      p.dw = geo_.dw;
      p.out_stride = c;
      p.ow = ow;
      p.zero_point = y_zero_point_;
      p.lo = y_signed ? -128 : 0;
      p.hi = y_signed ? 127 : 255;
      for (size_t r = r0; r < r1; ++r) {
        const int64_t img = static_cast<int64_t>(r) / oh, oy = static_cast<int64_t>(r) % oh;
        const int64_t n_fresh =
            ring.place(img, oy, h, geo_.sh, pads[0], geo_.dh, row_of.data(), input.data(), fresh.data());
        // Block by block: convert the new rows' block, then run it while it is in L1.
        for (int64_t b = 0; b < blocks; ++b) {
          const int64_t c0 = b * kQdwChannelBlock, valid = std::min<int64_t>(kQdwChannelBlock, c - c0);
          for (int64_t f = 0; f < n_fresh; ++f) {
            const int64_t ky = fresh[f];
            float* block = row_of[ky] + b * block_floats;
            std::fill(block, block + pads[1] * kQdwChannelBlock, x_zero_point_);
            std::fill(block + (pads[1] + w) * kQdwChannelBlock, block + block_floats, x_zero_point_);
            convert_(in + input[ky] * w * c + c0, w, c, valid, is_signed, block + pads[1] * kQdwChannelBlock);
          }
          for (int64_t ky = 0; ky < kh; ++ky) rows[ky] = row_of[ky] + b * block_floats;
          p.weights = weights_.data() + b * taps * kQdwChannelBlock;
          p.bias = bias_.data() + c0;
          p.scale = scale_.data() + c0;
          p.valid = valid;
          row_(p, out + static_cast<int64_t>(r) * ow * c + c0);
        }
      }
    };
    pool_->parallel_for(rows_total, min_chunk, run_rows);
    handled = true;
    return Status::ok();
  }

  QdwRowFn row_ = nullptr;
  QdwConvertFn convert_ = nullptr;
  ConvGeometry geo_;
  int64_t channels_ = 0, cp_ = 0;
  DataType x_type_ = DataType::kInt8, y_type_ = DataType::kInt8;
  float x_zero_point_ = 0;
  int32_t y_zero_point_ = 0;
  std::vector<float> weights_, bias_, scale_;  // [cp / 16][kh * kw][16], [cp], [cp]
  ChunkScratch<float> ring_;                   // per chunk of output rows: the converted input rows
};

}  // namespace

void register_opt_qlinear_depthwise(OpRegistry& registry) {
  XONNX_REGISTER(registry, kNhwcDomain, "QLinearConv", 1, kLatestVersion, QLinearDwConvNhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack,
                 [] { return enabled() && qdw_row_fast() != nullptr && qdw_convert_fast() != nullptr; });
}

}  // namespace opt
}  // namespace xonnx
