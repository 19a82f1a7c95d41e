// Own int8 convolution for the layout pass's NHWC QLinearConv (group 1, int8 symmetric
// weights, per-tensor or per-channel scales) on the AVX512-VNNI GEMM of qgemm.h: XNNPACK
// 2022 has no VNNI kernels (measured: resnet18's int8 convolutions take about half the time
// of XNNPACK's qc8 ones). Rows of the output (pixels) are split into blocks; each block gathers its input
// windows (im2col, padding = the zero point) into a per-chunk buffer and runs the
// GEMM against the weights packed at session creation. Depthwise / grouped convolutions, other
// CPUs and anything unusual stay with XNNPACK (qlinear.cc) or the reference twin.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/conv_geometry.h"
#include "runtime/ops/common/layout_convert.h"
#include "runtime/ops/common/quant_params.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/optimized/qgemm.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
namespace {

constexpr int64_t kRowBlock = 96;  // output pixels per task: a multiple of the kernel's 12 rows

class QLinearConvNhwcKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    QgemmFn gemm = qgemm_fast();
    if (!gemm || !is_nhwc_node(init)) return unsupported("own QLinearConv: NHWC on AVX512-VNNI only");
    const Tensor* w = init.constant_input(3);
    const Tensor* ws = init.constant_input(4);
    const Tensor* wz = init.constant_input(5);
    if (!w || !ws || !wz || w->dtype() != DataType::kInt8 || w->rank() != 4 || wz->dtype() != DataType::kInt8)
      return unsupported("own QLinearConv: needs constant int8 4-D weights");
    const int64_t m = w->dim(0);
    if (ws->dtype() != DataType::kFloat || (ws->numel() != 1 && ws->numel() != m) || ws->rank() > 1)
      return unsupported("own QLinearConv: weight scale must be per tensor or per output channel");
    for (int64_t i = 0; i < wz->numel(); ++i)
      if (wz->get_as_int64(i) != 0) return unsupported("own QLinearConv: asymmetric weights");
    auto k = std::unique_ptr<QLinearConvNhwcKernel>(new QLinearConvNhwcKernel());
    XONNX_RETURN_IF_ERROR(init_own_kernel(*k, init));
    k->gemm_ = gemm;
    int64_t group = 1;
    XONNX_ASSIGN_OR_RETURN(k->geo_, ConvGeometry::parse(init, w->shape(), group, "own QLinearConv"));
    if (group != 1) return unsupported("own QLinearConv: grouped convolution (XNNPACK's)");
    XONNX_ASSIGN_OR_RETURN(const float x_scale, constant_scale(init, 1, "own QLinearConv: x_scale"));
    XONNX_ASSIGN_OR_RETURN(const float y_scale, constant_scale(init, 6, "own QLinearConv: y_scale"));
    XONNX_ASSIGN_OR_RETURN(const int32_t x_zp,
                           constant_zero_point(init, 2, "own QLinearConv: x_zero_point", &k->x_type_));
    XONNX_ASSIGN_OR_RETURN(const int32_t y_zp,
                           constant_zero_point(init, 7, "own QLinearConv: y_zero_point", &k->y_type_));
    k->in_ch_ = w->dim(1);
    const int64_t khw = k->geo_.kh * k->geo_.kw, depth = khw * k->in_ch_;
    // ONNX W [M][C][kh][kw] -> GEMM rows [M][kh][kw][C], the order of the gathered windows.
    std::vector<int8_t> rows(static_cast<size_t>(m * depth));
    weights_to_ohwi(w->data<int8_t>(), rows.data(), m, k->in_ch_, khw);
    k->w_ = pack_qgemm_weights(rows.data(), m, depth);
    // The GEMM reads int8 activations as unsigned (+128): the zero point moves with them, and
    // padding holds the zero point's own byte.
    const bool a_signed = k->x_type_ == DataType::kInt8;
    const int32_t a_zp = x_zp + (a_signed ? 128 : 0);
    k->pad_ = static_cast<uint8_t>(x_zp);
    const Tensor* bias = init.has_input(8) ? init.constant_input(8) : nullptr;
    if (init.has_input(8) && (!bias || bias->dtype() != DataType::kInt32 || bias->numel() != m))
      return unsupported("own QLinearConv: bias must be a constant int32 [M]");
    k->offset_.resize(static_cast<size_t>(m));
    k->scale_.resize(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) {
      const int64_t b = bias ? bias->data<int32_t>()[o] : 0;
      const int64_t off = b - int64_t(a_zp) * k->w_.column_sums[static_cast<size_t>(o)];
      if (off < INT32_MIN || off > INT32_MAX) return unsupported("own QLinearConv: bias out of range");
      k->offset_[static_cast<size_t>(o)] = static_cast<int32_t>(off);
      const double ws_o = ws->data<float>()[ws->numel() == 1 ? 0 : o];
      k->scale_[static_cast<size_t>(o)] = static_cast<float>(double(x_scale) * ws_o / y_scale);
    }
    k->rq_ = {k->offset_.data(),
              k->scale_.data(),
              y_zp,
              k->y_type_ == DataType::kInt8 ? -128 : 0,
              k->y_type_ == DataType::kInt8 ? 127 : 255,
              a_signed};
    init.packed_constant_input(3);  // copied into the packed panels, as is the bias
    if (init.has_input(8)) init.packed_constant_input(8);
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& x = ctx.input(0);
    if (!x.defined() || x.dtype() != x_type_ || x.rank() != 4 || x.dim(3) != in_ch_) return Status::ok();
    const int64_t n = x.dim(0), h = x.dim(1), w = x.dim(2);
    std::array<int64_t, 4> pads;
    if (n <= 0 || h <= 0 || w <= 0 || !geo_.pads_for(h, w, pads)) return Status::ok();
    const int64_t oh = geo_.out_h(h, pads), ow = geo_.out_w(w, pads);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, y_type_, {n, oh, ow, w_.n}));
    const uint8_t* in = static_cast<const uint8_t*>(x.raw_data());
    const uint8_t* in_end = in + x.nbytes();
    uint8_t* out = static_cast<uint8_t*>(y->raw_data());
    const int64_t rows = n * oh * ow, blocks = (rows + kRowBlock - 1) / kRowBlock;
    // A 1x1 stride-1 convolution whose depth is a multiple of 4 reads its rows in place.
    const bool pointwise =
        geo_.kh == 1 && geo_.kw == 1 && geo_.sh == 1 && geo_.sw == 1 && pads == std::array<int64_t, 4>{};
    const bool in_place = pointwise && w_.k4 == in_ch_;
    const size_t min_chunk = chunk_for(kRowBlock * w_.k4 * w_.n / 8);
    // + 32: the short-row gather writes whole 16-byte words past a window's end.
    if (!in_place)
      windows_.prepare(*pool_, static_cast<size_t>(blocks), min_chunk, static_cast<size_t>(kRowBlock * w_.k4 + 32));
    auto run_blocks = [&](size_t b0, size_t b1) {
      uint8_t* const windows = in_place ? nullptr : windows_.of(b0);
      for (size_t b = b0; b < b1; ++b) {
        const int64_t r0 = static_cast<int64_t>(b) * kRowBlock, r1 = std::min(rows, r0 + kRowBlock);
        uint8_t* c = out + r0 * w_.n;
        if (in_place) {
          gemm_(in + r0 * in_ch_, static_cast<size_t>(in_ch_), static_cast<size_t>(r1 - r0), w_, rq_, c,
                static_cast<size_t>(w_.n));
          continue;
        }
        // The pixel's (image, row, column), stepped instead of divided out per pixel.
        int64_t img = r0 / (oh * ow), oy = (r0 / ow) % oh, ox = r0 % ow;
        for (int64_t r = r0; r < r1; ++r) {
          uint8_t* dst = windows + (r - r0) * w_.k4;
          if (!gather_interior_short(in, in_end, h, w, pads, img, oy, ox, dst))
            gather(in, h, w, pads, img, oy, ox, dst);
          if (++ox == ow) {
            ox = 0;
            if (++oy == oh) {
              oy = 0;
              ++img;
            }
          }
        }
        gemm_(windows, static_cast<size_t>(w_.k4), static_cast<size_t>(r1 - r0), w_, rq_, c, static_cast<size_t>(w_.n));
      }
    };
    pool_->parallel_for(static_cast<size_t>(blocks), min_chunk, run_blocks);
    handled = true;
    return Status::ok();
  }

  // The common case of a few-channel stem (3x3 or 7x7 over RGB): a window inside the image
  // whose rows are at most 32 bytes, copied as one or two 16-byte words per row. The words
  // overrun the row; the next row (or window, written later) overwrites that. False: use gather().
  bool gather_interior_short(const uint8_t* in, const uint8_t* in_end, int64_t h, int64_t w,
                             const std::array<int64_t, 4>& pads, int64_t b, int64_t oy, int64_t ox,
                             uint8_t* dst) const {
    const int64_t c = in_ch_, bytes = geo_.kw * c, ix0 = ox * geo_.sw - pads[1], iy0 = oy * geo_.sh - pads[0];
    if (bytes > 32 || geo_.dw != 1 || ix0 < 0 || ix0 + geo_.kw > w || iy0 < 0 || iy0 + (geo_.kh - 1) * geo_.dh >= h)
      return false;
    const uint8_t* src = in + ((b * h + iy0) * w + ix0) * c;
    const int64_t src_step = geo_.dh * w * c;
    if (src + (geo_.kh - 1) * src_step + 32 > in_end) return false;  // the last words would read past the input
    if (bytes <= 16) {
      for (int64_t ky = 0; ky < geo_.kh; ++ky, src += src_step, dst += bytes) std::memcpy(dst, src, 16);
    } else {
      for (int64_t ky = 0; ky < geo_.kh; ++ky, src += src_step, dst += bytes) std::memcpy(dst, src, 32);
    }
    return true;
  }

  // The input window of output pixel (b, oy, ox) as one GEMM row: [kh][kw][C] (+ up to 3 bytes
  // the zero-padded weights ignore). With
  // dilation 1 a window row is one contiguous run of kw * C input bytes, clipped at the borders.
  void gather(const uint8_t* in, int64_t h, int64_t w, const std::array<int64_t, 4>& pads, int64_t b, int64_t oy,
              int64_t ox, uint8_t* dst) const {
    const int64_t c = in_ch_, ix0 = ox * geo_.sw - pads[1];
    for (int64_t ky = 0; ky < geo_.kh; ++ky, dst += geo_.kw * c) {
      const int64_t iy = oy * geo_.sh - pads[0] + ky * geo_.dh;
      if (iy < 0 || iy >= h) {
        std::memset(dst, pad_, static_cast<size_t>(geo_.kw * c));
        continue;
      }
      const uint8_t* row = in + (b * h + iy) * w * c;
      if (geo_.dw == 1) {
        const int64_t lo = std::min(geo_.kw, std::max<int64_t>(0, -ix0));
        const int64_t hi = std::max(lo, std::min(geo_.kw, w - ix0));
        if (lo > 0) std::memset(dst, pad_, static_cast<size_t>(lo * c));  // borders only: calls are dear
        copy_short(row + (ix0 + lo) * c, dst + lo * c, (hi - lo) * c);
        if (hi < geo_.kw) std::memset(dst + hi * c, pad_, static_cast<size_t>((geo_.kw - hi) * c));
      } else {
        for (int64_t kx = 0; kx < geo_.kw; ++kx) {
          const int64_t ix = ix0 + kx * geo_.dw;
          if (ix < 0 || ix >= w) {
            std::memset(dst + kx * c, pad_, static_cast<size_t>(c));
          } else {
            copy_short(row + ix * c, dst + kx * c, c);
          }
        }
      }
    }
  }

  // Short window rows (kw * C: 9 bytes for a 3-channel 3x3 stem) as 8-byte words, the last one
  // overlapping, instead of a library call or a byte loop per row.
  static void copy_short(const uint8_t* src, uint8_t* dst, int64_t bytes) {
    const size_t n = static_cast<size_t>(bytes);
    if (n >= 64) {  // a long row (3x3 over 64+ channels): the library's vector copy
      std::memcpy(dst, src, n);
      return;
    }
    if (n < 8) {
      for (size_t i = 0; i < n; ++i) dst[i] = src[i];
      return;
    }
    uint64_t v;
    for (size_t i = 0; i + 8 <= n; i += 8) {
      std::memcpy(&v, src + i, 8);
      std::memcpy(dst + i, &v, 8);
    }
    std::memcpy(&v, src + n - 8, 8);
    std::memcpy(dst + n - 8, &v, 8);
  }

  QgemmFn gemm_ = nullptr;
  ConvGeometry geo_;
  int64_t in_ch_ = 0;
  DataType x_type_ = DataType::kInt8, y_type_ = DataType::kInt8;
  uint8_t pad_ = 0;  // the input zero point's byte
  QgemmWeights w_;
  std::vector<int32_t> offset_;
  std::vector<float> scale_;
  QgemmRequant rq_;
  ChunkScratch<uint8_t> windows_;  // per chunk of blocks: the gathered input windows
};

}  // namespace

void register_opt_qlinear(OpRegistry& registry) {
  XONNX_REGISTER(registry, kNhwcDomain, "QLinearConv", 1, kLatestVersion, QLinearConvNhwcKernel::create,
                 Backend::kOptimized, kPriorityBeforeXnnpack, [] { return enabled() && qgemm_fast() != nullptr; });
}

}  // namespace opt
}  // namespace xonnx
