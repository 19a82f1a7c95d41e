#include "runtime/ops/xnnpack/xnnpack_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>

#include <pthreadpool.h>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/registry.h"

#if defined(__SSE__) || defined(_M_X64)
#include <xmmintrin.h>
#define XONNX_XNN_SSE 1
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace xonnx {
namespace xnn {

namespace {
std::atomic<uint64_t> g_runs{0};

const char* status_name(xnn_status s) {
  switch (s) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "XNNPACK is not initialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}
}  // namespace

Status initialize() {
  static std::once_flag once;
  static xnn_status result = xnn_status_uninitialized;
  std::call_once(once, [] { result = xnn_initialize(nullptr); });
  return check(result, "xnn_initialize");
}

Status check(xnn_status s, const char* what) {
  switch (s) {
    case xnn_status_success:
      return Status::ok();
    case xnn_status_out_of_memory:
      return resource_exhausted(what, ": ", status_name(s));
    case xnn_status_invalid_parameter:
    case xnn_status_unsupported_parameter:
    case xnn_status_unsupported_hardware:
      return unsupported(what, ": ", status_name(s));
    default:
      return internal_error(what, ": ", status_name(s));
  }
}

void Operator::reset() {
  if (op_) xnn_delete_operator(op_);
  op_ = nullptr;
}

namespace {
constexpr uint32_t kFirstProbe = 8, kMaxProbeInterval = 1024;
std::atomic<uint32_t> g_probe_stagger{0};  // operators re-time on different runs
}  // namespace

bool ThreadChoice::threaded() {
  ++runs_;
  if (threaded_us_ < 0) return true;
  if (single_us_ < 0) return false;
  const bool faster_threaded = threaded_us_ <= single_us_;
  if (interval_ == 0) {
    interval_ = kFirstProbe;
    next_probe_ = runs_ + kFirstProbe + g_probe_stagger.fetch_add(1, std::memory_order_relaxed) % kFirstProbe;
  }
  if (runs_ < next_probe_) return faster_threaded;
  return !faster_threaded;  // re-time the other way
}

void ThreadChoice::record(bool threaded, double us) {
  const bool was_faster_threaded = threaded_us_ <= single_us_;
  double& average = threaded ? threaded_us_ : single_us_;
  average = average < 0 ? us : 0.5 * (average + us);
  if (interval_ == 0 || runs_ < next_probe_) return;
  // A re-time that lost again waits twice as long for the next; one that won starts over.
  const bool flipped = (threaded_us_ <= single_us_) != was_faster_threaded;
  interval_ = flipped ? kFirstProbe : std::min(kMaxProbeInterval, interval_ * 2);
  next_probe_ = runs_ + interval_;
}

Status Operator::run(pthreadpool_t pool) const {
  if (!op_) return internal_error("running an XNNPACK operator that was not created");
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (!pool) return check(xnn_run_operator(op_, nullptr), "xnn_run_operator");
  const bool threaded = choice_.threaded();
  const auto start = std::chrono::steady_clock::now();
  const Status status = check(xnn_run_operator(op_, threaded ? pool : nullptr), "xnn_run_operator");
  if (threaded) {
    // pthreadpool's workers would spin for 1M pause instructions (~300 ms on an AMD EPYC)
    // after the operator, holding cores the next ops and other processes need: an empty
    // region with PTHREADPOOL_FLAG_YIELD_WORKERS sends them to sleep at once (the next threaded
    // operator wakes them, which costs little next to work of kMinParallelWork).
    pthreadpool_parallelize_1d(
        pool, [](void*, size_t) {}, nullptr, pthreadpool_get_threads_count(pool), PTHREADPOOL_FLAG_YIELD_WORKERS);
  }
  choice_.record(threaded, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  return status;
}

pthreadpool_t pool_for(const ThreadPool& pool, double work) {
  constexpr double kMinParallelWork = 1 << 20;
  return work >= kMinParallelWork ? pool.handle() : nullptr;
}

uint64_t run_count() { return g_runs.load(std::memory_order_relaxed); }

bool over_read_safe(const void* p, size_t bytes) {
  if (bytes == 0) return false;
  constexpr uintptr_t kPage = 4096;
  const uintptr_t last = reinterpret_cast<uintptr_t>(p) + bytes - 1;
  return last / kPage == (last + XNN_EXTRA_BYTES) / kPage;
}

Buffer& thread_scratch(int which) {
  thread_local Buffer buffers[2];
  return buffers[which & 1];
}

const float* readable_input(const Tensor& t, Buffer& scratch) {
  const float* data = t.data<float>();
  const size_t n = static_cast<size_t>(t.numel());
  if (over_read_safe(data, n * sizeof(float))) return data;
  float* copy = scratch.resize(n);
  std::memcpy(copy, data, n * sizeof(float));
  return copy;
}

const uint8_t* readable_bytes(const Tensor& t, Buffer& scratch) {
  const uint8_t* data = static_cast<const uint8_t*>(t.raw_data());
  const size_t n = static_cast<size_t>(t.numel());
  if (over_read_safe(data, n)) return data;
  uint8_t* copy = reinterpret_cast<uint8_t*>(scratch.resize((n + sizeof(float) - 1) / sizeof(float)));
  std::memcpy(copy, data, n);
  return copy;
}

Result<float> constant_scale(const KernelInit& init, size_t i, const char* what) {
  const Tensor* t = init.constant_input(i);
  if (!t || t->dtype() != DataType::kFloat || t->numel() != 1)
    return unsupported(what, " must be a constant float scalar");
  const float s = t->data<float>()[0];
  if (!(s > 0.0f) || !std::isnormal(s)) return unsupported(what, " is not a normal positive float");
  return s;
}

Result<int32_t> constant_zero_point(const KernelInit& init, size_t i, const char* what, DataType* type) {
  const Tensor* t = init.constant_input(i);
  if (!t || !dtype_is_8bit_int(t->dtype()) || t->numel() != 1) return unsupported(what, " must be a constant 8-bit scalar");
  *type = t->dtype();
  return static_cast<int32_t>(t->get_as_int64(0));
}

namespace {
// OR over n floats of pred(bits), in blocks so the compiler vectorizes and large inputs exit
// early.
template <typename Pred>
inline bool any_bits(const float* p, size_t n, Pred pred) {
  constexpr size_t kBlock = 256;
  for (size_t i = 0; i < n; i += kBlock) {
    const size_t e = std::min(n, i + kBlock);
    uint32_t hit = 0;
    for (size_t j = i; j < e; ++j) {
      uint32_t b;
      std::memcpy(&b, p + j, sizeof(b));
      hit |= pred(b) ? 1u : 0u;
    }
    if (hit) return true;
  }
  return false;
}

// The scans follow every XNNPACK run that can make a non-finite value: GCC also compiles AVX2
// and AVX-512 clones of them and picks one at load time (this file is built for the baseline).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define XONNX_SCAN_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define XONNX_SCAN_CLONES
#endif
}  // namespace

XONNX_SCAN_CLONES bool all_finite(const float* p, size_t n) {
  return !any_bits(p, n, [](uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u; });
}

XONNX_SCAN_CLONES bool has_nan(const float* p, size_t n) {
  return any_bits(p, n, [](uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; });
}

// ---- transposes ----------------------------------------------------------------------------

namespace {

// dst[c * dst_ld + r] = src[r * src_ld + c] for r < rows, c < cols.
void transpose_tile(const float* src, size_t src_ld, float* dst, size_t dst_ld, size_t rows,
                    size_t cols) {
  size_t r = 0;
#ifdef XONNX_XNN_SSE
  for (; r + 4 <= rows; r += 4) {
    size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      __m128 a = _mm_loadu_ps(src + (r + 0) * src_ld + c);
      __m128 b = _mm_loadu_ps(src + (r + 1) * src_ld + c);
      __m128 d = _mm_loadu_ps(src + (r + 2) * src_ld + c);
      __m128 e = _mm_loadu_ps(src + (r + 3) * src_ld + c);
      _MM_TRANSPOSE4_PS(a, b, d, e);
      _mm_storeu_ps(dst + (c + 0) * dst_ld + r, a);
      _mm_storeu_ps(dst + (c + 1) * dst_ld + r, b);
      _mm_storeu_ps(dst + (c + 2) * dst_ld + r, d);
      _mm_storeu_ps(dst + (c + 3) * dst_ld + r, e);
    }
    for (; c < cols; ++c) {
      for (size_t i = 0; i < 4; ++i) dst[c * dst_ld + r + i] = src[(r + i) * src_ld + c];
    }
  }
#endif
  for (; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) dst[c * dst_ld + r] = src[r * src_ld + c];
  }
}

// Transposes `batches` matrices [rows][cols] (src row stride src_ld, batch stride src_bs)
// into [cols][rows] (dst row stride dst_ld, batch stride dst_bs), in 32x32 tiles.
void transpose_batched(const float* src, size_t src_ld, size_t src_bs, float* dst, size_t dst_ld,
                       size_t dst_bs, size_t batches, size_t rows, size_t cols,
                       const ThreadPool& pool) {
  constexpr size_t kTile = 32;
  const size_t rt = (rows + kTile - 1) / kTile, ct = (cols + kTile - 1) / kTile;
  const size_t tiles = batches * rt * ct;
  if (tiles == 0) return;
  // Below ~1 MB a transpose is cheaper than waking the workers.
  const size_t total = batches * rows * cols;
  const size_t min_chunk = total < (size_t{1} << 18) ? tiles : 8;
  pool.parallel_for(tiles, min_chunk, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const size_t b = t / (rt * ct), rem = t % (rt * ct);
      const size_t r0 = (rem / ct) * kTile, c0 = (rem % ct) * kTile;
      transpose_tile(src + b * src_bs + r0 * src_ld + c0, src_ld, dst + b * dst_bs + c0 * dst_ld + r0,
                     dst_ld, std::min(kTile, rows - r0), std::min(kTile, cols - c0));
    }
  });
}

// Four pixels of C = 3 or 4 planes into [4][C] at dst (a 32x32 tile has only C rows here).
template <size_t C>
inline size_t interleave_four(const float* src, size_t hw, float* dst, size_t p0, size_t p1) {
  size_t p = p0;
#if defined(XONNX_XNN_SSE)
  for (; p + 4 <= p1; p += 4) {
    const __m128 r = _mm_loadu_ps(src + p), g = _mm_loadu_ps(src + hw + p), b = _mm_loadu_ps(src + 2 * hw + p);
    float* d = dst + p * C;
    if (C == 3) {  // r0 g0 b0 r1 | g1 b1 r2 g2 | b2 r3 g3 b3
      const __m128 rg_lo = _mm_unpacklo_ps(r, g), rg_hi = _mm_unpackhi_ps(r, g);
      const __m128 br_lo = _mm_unpacklo_ps(b, r), br_hi = _mm_unpackhi_ps(b, r);
      const __m128 gb_lo = _mm_unpacklo_ps(g, b), gb_hi = _mm_unpackhi_ps(g, b);
      _mm_storeu_ps(d, _mm_shuffle_ps(rg_lo, br_lo, _MM_SHUFFLE(3, 0, 1, 0)));
      _mm_storeu_ps(d + 4, _mm_shuffle_ps(gb_lo, rg_hi, _MM_SHUFFLE(1, 0, 3, 2)));
      _mm_storeu_ps(d + 8, _mm_shuffle_ps(br_hi, gb_hi, _MM_SHUFFLE(3, 2, 3, 0)));
    } else {
      __m128 r4 = r, g4 = g, b4 = b, a4 = _mm_loadu_ps(src + 3 * hw + p);
      _MM_TRANSPOSE4_PS(r4, g4, b4, a4);
      _mm_storeu_ps(d, r4);
      _mm_storeu_ps(d + 4, g4);
      _mm_storeu_ps(d + 8, b4);
      _mm_storeu_ps(d + 12, a4);
    }
  }
#elif defined(__ARM_NEON)
  for (; p + 4 <= p1; p += 4) {
    if (C == 3) {
      float32x4x3_t v{{vld1q_f32(src + p), vld1q_f32(src + hw + p), vld1q_f32(src + 2 * hw + p)}};
      vst3q_f32(dst + p * C, v);
    } else {
      float32x4x4_t v{{vld1q_f32(src + p), vld1q_f32(src + hw + p), vld1q_f32(src + 2 * hw + p),
                       vld1q_f32(src + 3 * hw + p)}};
      vst4q_f32(dst + p * C, v);
    }
  }
#endif
  return p;
}

// An image's few planes ([C][hw], C a constant) into pixels [hw][C], pixels p0..p1: one pass,
// four whole pixels at a time (the scalar loop ran a model's RGB input at 0.5 ns per value).
template <size_t C>
void interleave_planes(const float* src, size_t hw, float* dst, size_t p0, size_t p1) {
  for (size_t p = interleave_four<C>(src, hw, dst, p0, p1); p < p1; ++p)
    for (size_t c = 0; c < C; ++c) dst[p * C + c] = src[c * hw + p];
}

template <size_t C>
void interleave_images(const float* src, float* dst, size_t n, size_t hw, const ThreadPool& pool) {
  // Split even a 224 x 224 image (0.02 ms): as a run's first parallel region, this is where
  // the sleeping workers wake up, while the caller already copies (work stealing), instead of
  // at the stem convolution after it.
  constexpr size_t kPixelsPerChunk = 8192;
  const size_t chunks_per_image = (hw + kPixelsPerChunk - 1) / kPixelsPerChunk;
  pool.parallel_for(n * chunks_per_image, 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const size_t b = t / chunks_per_image, p0 = (t % chunks_per_image) * kPixelsPerChunk;
      interleave_planes<C>(src + b * C * hw, hw, dst + b * C * hw, p0, std::min(hw, p0 + kPixelsPerChunk));
    }
  });
}

}  // namespace

void interleave_pixels(const float* src, size_t plane_stride, size_t c, size_t count, float* dst) {
  if (c == 3) return interleave_planes<3>(src, plane_stride, dst, 0, count);
  if (c == 4) return interleave_planes<4>(src, plane_stride, dst, 0, count);
  for (size_t p = 0; p < count; ++p)
    for (size_t k = 0; k < c; ++k) dst[p * c + k] = src[k * plane_stride + p];
}

void nchw_to_nhwc(const float* src, float* dst, size_t n, size_t c, size_t hw,
                  const ThreadPool& pool) {
  if (c == 1 || hw == 1) {
    std::memcpy(dst, src, n * c * hw * sizeof(float));
    return;
  }
  if (c == 3) return interleave_images<3>(src, dst, n, hw, pool);  // RGB model inputs
  if (c == 4) return interleave_images<4>(src, dst, n, hw, pool);
  transpose_batched(src, hw, c * hw, dst, c, c * hw, n, c, hw, pool);
}

void nhwc_to_nchw(const float* src, float* dst, size_t n, size_t c, size_t hw,
                  const ThreadPool& pool) {
  if (c == 1 || hw == 1) {
    std::memcpy(dst, src, n * c * hw * sizeof(float));
    return;
  }
  transpose_batched(src, c, c * hw, dst, hw, c * hw, n, hw, c, pool);
}

void nchw_to_nhwc_padded(const float* src, float* dst, size_t n, size_t c, size_t h, size_t w,
                         size_t pt, size_t pl, size_t pb, size_t pr, const ThreadPool& pool) {
  const size_t ph = h + pt + pb, pw = w + pl + pr;
  std::memset(dst, 0, n * ph * pw * c * sizeof(float));
  // One [c][w] -> [w][c] transpose per input row (n * h of them).
  for (size_t b = 0; b < n; ++b) {
    transpose_batched(src + b * c * h * w, h * w, w, dst + (b * ph + pt) * pw * c + pl * c, c,
                      pw * c, h, c, w, pool);
  }
}

bool ConvGeometry::pads_for(int64_t h, int64_t w, std::array<int64_t, 4>& pads) const {
  const int64_t in[2] = {h, w}, k[2] = {kh, kw}, s[2] = {sh, sw}, d[2] = {dh, dw};
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  for (int i = 0; i < 2; ++i) {
    const int64_t ek = (k[i] - 1) * d[i] + 1;
    if (same) {
      const int64_t out = (in[i] + s[i] - 1) / s[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + ek - in[i]);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
    } else {
      pads[i] = explicit_pads[i];
      pads[i + 2] = explicit_pads[i + 2];
    }
    if (in[i] + pads[i] + pads[i + 2] < ek) return false;
  }
  return true;
}

bool broadcast_dims(const Tensor& a, const Tensor& b, BroadcastDims& d) {
  if (a.rank() > XNN_MAX_TENSOR_DIMS || b.rank() > XNN_MAX_TENSOR_DIMS || a.numel() <= 0 || b.numel() <= 0)
    return false;
  const size_t rank = std::max(a.rank(), b.rank());
  d.out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.rank() ? 1 : a.dim(i - (rank - a.rank()));
    const int64_t db = i < rank - b.rank() ? 1 : b.dim(i - (rank - b.rank()));
    if (da != db && da != 1 && db != 1) return false;
    d.out[i] = da == 1 ? db : da;
  }
  d.a[0] = d.b[0] = 1;
  for (size_t i = 0; i < a.rank(); ++i) d.a[i] = static_cast<size_t>(a.dim(i));
  for (size_t i = 0; i < b.rank(); ++i) d.b[i] = static_cast<size_t>(b.dim(i));
  d.rank_a = std::max<size_t>(a.rank(), 1);
  d.rank_b = std::max<size_t>(b.rank(), 1);
  return true;
}

Result<ConvGeometry> ConvGeometry::parse(const KernelInit& init, const Shape& ws, int64_t& group, const char* what) {
  ConvGeometry geo;
  XONNX_ASSIGN_OR_RETURN(geo.auto_pad, init.get_string("auto_pad", "NOTSET"));
  XONNX_ASSIGN_OR_RETURN(group, init.get_int("group", 1));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> ks, init.get_ints("kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> strides, init.get_ints("strides", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> dil, init.get_ints("dilations", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, init.get_ints("pads", {0, 0, 0, 0}));
  if (ws.size() != 4) return unsupported(what, ": only 2-D");
  if (group < 1 || ws[0] % group != 0) return unsupported(what, ": bad group");
  if (!ks.empty() && (ks.size() != 2 || ks[0] != ws[2] || ks[1] != ws[3]))
    return unsupported(what, ": kernel_shape does not match W");
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return unsupported(what, ": only 2-D");
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max() / 4;
  for (int64_t v : {strides[0], strides[1], dil[0], dil[1], ws[0], ws[1], ws[2], ws[3]})
    if (v < 1 || v > kMax) return unsupported(what, ": attribute out of range");
  for (int64_t v : pads)
    if (v < 0 || v > kMax) return unsupported(what, ": pads out of range");
  const std::string& ap = geo.auto_pad;
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER")
    return unsupported(what, ": auto_pad ", ap);
  geo.kh = ws[2];
  geo.kw = ws[3];
  geo.sh = strides[0];
  geo.sw = strides[1];
  geo.dh = dil[0];
  geo.dw = dil[1];
  if (ap == "NOTSET") geo.explicit_pads = {pads[0], pads[1], pads[2], pads[3]};
  return geo;
}

bool ConvGeometry::fixed_pads(std::array<int64_t, 4>& pads) const {
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (same && (sh != 1 || sw != 1)) return false;
  pads = explicit_pads;
  if (same) {  // stride 1: the total padding is the dilated kernel extent - 1
    const int64_t th = (kh - 1) * dh, tw = (kw - 1) * dw;
    const bool upper = auto_pad == "SAME_UPPER";
    pads = {upper ? th / 2 : th - th / 2, upper ? tw / 2 : tw - tw / 2, 0, 0};
    pads[2] = th - pads[0];
    pads[3] = tw - pads[1];
  }
  return true;
}

}  // namespace xnn

void register_xnnpack_ops(OpRegistry& registry) {
  xnn::register_xnnpack_conv(registry);
  xnn::register_xnnpack_fully_connected(registry);
  xnn::register_xnnpack_pooling(registry);
  xnn::register_xnnpack_elementwise(registry);
  xnn::register_xnnpack_qlinear(registry);
  xnn::register_xnnpack_qlinear_binary(registry);
  xnn::register_nhwc_reference(registry);
}

}  // namespace xonnx
