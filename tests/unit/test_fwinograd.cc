// The Winograd F(2x2, 3x3) and F(4x4, 3x3) paths of the own fp32 Conv (runtime/ops/optimized/fwinograd.h,
// conv_winograd.h): the AVX-512 transforms are bit-identical to their scalar twins, the
// input transform reports inf / NaN, and whole convolutions match a double-precision direct
// sum over odd shapes, pads, batches, block splits and thread counts.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/optimized/conv_winograd.h"
#include "runtime/ops/optimized/fwinograd.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using opttest::same_bits;

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_values(size_t n, uint32_t seed, float range = 2.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-range, range);
  std::vector<float> v(n);
  for (float& f : v) f = u(gen);
  return v;
}

// F(2x2, 3x3) and F(4x4, 3x3): their transforms, fast and reference.
struct Variant {
  int64_t tile, positions;
  opt::WinoInputFn fast_in, ref_in;
  opt::WinoOutputFn fast_out, ref_out;
};

std::vector<Variant> variants() {
  return {{2, opt::kWinoPositions, opt::wino_input_fast(), opt::wino_input_reference, opt::wino_output_fast(),
           opt::wino_output_reference},
          {4, opt::kWino4Positions, opt::wino4_input_fast(), opt::wino4_input_reference, opt::wino4_output_fast(),
           opt::wino4_output_reference}};
}

TEST(WinogradTransforms, FastAreBitIdenticalToReference) {
  if (!opt::wino_input_fast()) GTEST_SKIP() << "no AVX-512 on this CPU (or XONNX_OPT_ISA below avx512)";
  uint32_t seed = 1;
  for (const Variant& var : variants()) {
    ASSERT_TRUE(var.fast_in && var.fast_out);
    const int64_t px = var.tile * var.tile, positions = var.positions;
    for (int64_t c : {1, 3, 15, 16, 17, 40}) {
      SCOPED_TRACE("F(" + std::to_string(var.tile) + "), c = " + std::to_string(c));
      const std::vector<float> data = random_values(static_cast<size_t>(positions * c), seed++);
      const std::vector<float> zeros(static_cast<size_t>(c), 0.0f);
      std::vector<const float*> patch(static_cast<size_t>(positions));
      for (int64_t q = 0; q < positions; ++q)
        patch[q] = q % 5 == 4 ? zeros.data() : data.data() + q * c;  // some padding
      const int64_t ldv = c + 3;
      std::vector<float> v_fast(static_cast<size_t>(positions * ldv), -99.0f), v_ref = v_fast;
      EXPECT_TRUE(var.fast_in(patch.data(), c, v_fast.data(), ldv));
      EXPECT_TRUE(var.ref_in(patch.data(), c, v_ref.data(), ldv));
      EXPECT_TRUE(same_bits(v_fast, v_ref)) << "input transform";

      // The output transform, with one pixel outside the image and a Relu6 range, NaN included.
      std::vector<float> m = random_values(static_cast<size_t>(positions * ldv), seed++, 4.0f);
      const int64_t center = var.tile + 3;  // position (1, 1): every output pixel sums it
      m[static_cast<size_t>(center * ldv)] = std::numeric_limits<float>::quiet_NaN();
      const std::vector<float> bias = random_values(static_cast<size_t>(c), seed++);
      const int64_t outside = 2;  // this pixel has no output row
      for (const std::array<float, 2> range : {std::array<float, 2>{-kInf, kInf}, std::array<float, 2>{0.0f, 6.0f}}) {
        std::vector<float> y_fast(static_cast<size_t>(px * c), -99.0f), y_ref = y_fast;
        std::vector<float*> px_fast(static_cast<size_t>(px)), px_ref(static_cast<size_t>(px));
        for (int64_t k = 0; k < px; ++k) {
          px_fast[k] = k == outside ? nullptr : y_fast.data() + k * c;
          px_ref[k] = k == outside ? nullptr : y_ref.data() + k * c;
        }
        var.fast_out(m.data(), ldv, c, bias.data(), range[0], range[1], px_fast.data(), nullptr);
        var.ref_out(m.data(), ldv, c, bias.data(), range[0], range[1], px_ref.data(), nullptr);
        EXPECT_TRUE(same_bits(y_fast, y_ref)) << "output transform, range " << range[0] << ".." << range[1];
        EXPECT_EQ(y_fast[static_cast<size_t>(outside * c)], -99.0f) << "a pixel outside the image was written";
        EXPECT_TRUE(std::isnan(y_fast[0])) << "NaN did not pass the clamp";
        // With a residual row per pixel inside the image (the pixel outside has none).
        const std::vector<float> z = random_values(static_cast<size_t>(px * c), seed++, 2.0f);
        std::vector<const float*> rows(static_cast<size_t>(px));
        for (int64_t k = 0; k < px; ++k) rows[k] = k == outside ? nullptr : z.data() + k * c;
        var.fast_out(m.data(), ldv, c, bias.data(), range[0], range[1], px_fast.data(), rows.data());
        var.ref_out(m.data(), ldv, c, bias.data(), range[0], range[1], px_ref.data(), rows.data());
        EXPECT_TRUE(same_bits(y_fast, y_ref))
            << "output transform with a residual, range " << range[0] << ".." << range[1];
        EXPECT_EQ(y_fast[static_cast<size_t>(outside * c)], -99.0f) << "a pixel outside the image was written";
      }
    }
  }
}

// The weight transform compiled with AVX-512 flags gives the reference's bits, lanes past the
// panel's kernels zero, and U = G g G^T itself: for a kernel of ones, position (i, j) of F(2x2)
// is (G 1)_i (G 1)_j with G 1 = (1, 1.5, 0.5, 1).
TEST(WinogradTransforms, WeightPackingFastIsBitIdenticalAndComputesGgGt) {
  for (const int64_t tile : {int64_t{2}, int64_t{4}}) {
    const int64_t positions = tile == 4 ? opt::kWino4Positions : opt::kWinoPositions;
    for (const int64_t lanes : {int64_t{32}, int64_t{5}}) {
      const int64_t c = 7;
      SCOPED_TRACE("F(" + std::to_string(tile) + "), lanes " + std::to_string(lanes));
      const std::vector<float> g =
          random_values(static_cast<size_t>(lanes * c * 9), 11u + static_cast<uint32_t>(lanes));
      std::vector<float> ref(static_cast<size_t>(positions * c * 32), -99.0f);
      opt::wino_pack_reference(g.data(), lanes, c, tile, ref.data());
      for (int64_t p = 0; p < positions; ++p)
        for (int64_t ci = 0; ci < c; ++ci)
          for (int64_t l = lanes; l < 32; ++l) ASSERT_EQ(ref[static_cast<size_t>((p * c + ci) * 32 + l)], 0.0f);
      if (opt::wino_pack_fast()) {
        std::vector<float> fast(ref.size(), -99.0f);
        opt::wino_pack_fast()(g.data(), lanes, c, tile, fast.data());
        EXPECT_TRUE(same_bits(fast, ref));
      }
    }
  }
  const std::vector<float> ones(9, 1.0f);
  std::vector<float> u(static_cast<size_t>(opt::kWinoPositions * 32));
  opt::wino_pack_reference(ones.data(), 1, 1, 2, u.data());
  const float g1[4] = {1.0f, 1.5f, 0.5f, 1.0f};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(u[static_cast<size_t>((i * 4 + j) * 32)], g1[i] * g1[j]) << i << "," << j;
}

TEST(WinogradTransforms, InputReportsInfAndNaN) {
  const int64_t c = 19;
  for (const Variant& var : variants()) {
    for (float bad : {kInf, -kInf, std::numeric_limits<float>::quiet_NaN(), 0.0f}) {
      std::vector<float> data = random_values(static_cast<size_t>(var.positions * c), 7);
      data[static_cast<size_t>(9 * c + 18)] = bad;  // the last lane: the vector tail's mask
      std::vector<const float*> patch(static_cast<size_t>(var.positions));
      for (int64_t q = 0; q < var.positions; ++q) patch[q] = data.data() + q * c;
      std::vector<float> v(static_cast<size_t>(var.positions * c));
      const bool finite = std::isfinite(bad);
      EXPECT_EQ(var.ref_in(patch.data(), c, v.data(), c), finite) << "F(" << var.tile << ") " << bad;
      if (var.fast_in) {
        EXPECT_EQ(var.fast_in(patch.data(), c, v.data(), c), finite) << "F(" << var.tile << ") " << bad;
      }
    }
  }
}

// ---- whole convolutions --------------------------------------------------------------------

struct Case {
  int64_t n, h, w, c, m;
  std::array<int64_t, 4> pads;  // top, left, bottom, right
  float lo = -kInf, hi = kInf;
  int64_t dh = 1, dw = 1;  // dilation
  int64_t oh() const { return h + pads[0] + pads[2] - 2 * dh; }
  int64_t ow() const { return w + pads[1] + pads[3] - 2 * dw; }
};

// y [n][oh][ow][m] in double from x NHWC and w [m][c][3][3], plus the residual z of y's shape;
// `mag` gets each output's sum of |terms|, the scale of its rounding error.
void direct_conv(const Case& k, const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                 const std::vector<float>& z, std::vector<double>& y, std::vector<double>& mag) {
  const int64_t oh = k.oh(), ow = k.ow();
  y.assign(static_cast<size_t>(k.n * oh * ow * k.m), 0.0);
  mag = y;
  for (int64_t i = 0; i < k.n; ++i)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t o = 0; o < k.m; ++o) {
          double acc = b[static_cast<size_t>(o)], sum = std::fabs(acc);
          for (int64_t ky = 0; ky < 3; ++ky)
            for (int64_t kx = 0; kx < 3; ++kx) {
              const int64_t iy = oy - k.pads[0] + ky * k.dh, ix = ox - k.pads[1] + kx * k.dw;
              if (iy < 0 || iy >= k.h || ix < 0 || ix >= k.w) continue;
              for (int64_t ci = 0; ci < k.c; ++ci) {
                const double t = double(x[static_cast<size_t>(((i * k.h + iy) * k.w + ix) * k.c + ci)]) *
                                 w[static_cast<size_t>(((o * k.c + ci) * 3 + ky) * 3 + kx)];
                acc += t;
                sum += std::fabs(t);
              }
            }
          const size_t at = static_cast<size_t>(((i * oh + oy) * ow + ox) * k.m + o);
          acc += z[at];
          y[at] = std::min<double>(k.hi, std::max<double>(k.lo, acc));
          mag[at] = sum + std::fabs(z[at]);
        }
}

std::vector<float> run_winograd(const Case& k, const std::vector<float>& x, const std::vector<float>& w,
                                const std::vector<float>& b, int threads, bool* finite, int64_t tile,
                                const std::vector<float>* z = nullptr) {
  const auto rows_of = [&](int64_t o0, int64_t) { return w.data() + o0 * k.c * 9; };
  opt::WinogradConvF32 conv(rows_of, b.data(), k.m, k.c, k.lo, k.hi, k.dh, k.dw, tile);
  std::vector<float> y(static_cast<size_t>(k.n * k.oh() * k.ow() * k.m), -99.0f);
  ThreadPool pool(threads);
  opt::ChunkScratch<float> scratch;
  *finite = conv.run(pool, scratch, x.data(), k.n, k.h, k.w, k.pads, y.data(), z ? z->data() : nullptr);
  return y;
}

TEST(WinogradConvF32, MatchesADirectSumOnOneAndTwoThreads) {
  if (!opt::WinogradConvF32::applies(3, 3, 1, 1, 1, 1, 16, 16)) GTEST_SKIP() << "no AVX-512 on this CPU";
  const std::vector<Case> cases = {
      {1, 9, 7, 16, 17, {1, 1, 1, 1}},                // odd sizes: the last tile row and column half out
      {2, 5, 6, 20, 40, {1, 1, 1, 1}},                // batch 2, a second panel of 8 channels
      {1, 1, 1, 16, 16, {1, 1, 1, 1}},                // one pixel
      {1, 6, 7, 16, 33, {0, 0, 0, 0}},                // no padding (VALID)
      {1, 8, 9, 32, 16, {0, 1, 1, 0}},                // asymmetric pads
      {1, 30, 29, 16, 64, {1, 1, 1, 1}},              // 225 tiles: several blocks
      {1, 10, 10, 24, 24, {1, 1, 1, 1}, 0.0f, 6.0f},  // the fused Relu6 range
      {1, 14, 14, 144, 144, {1, 1, 1, 1}},            // weights over 1 MB: blocks past L2, 5 panels
      // Few tiles for much larger weights: two threads split the panels, each over all tiles
      {1, 4, 4, 256, 64, {1, 1, 1, 1}},
      {1, 6, 6, 64, 128, {1, 1, 1, 1}, 0.0f, kInf},
      // Dilated: the phases of the grid, of unequal sizes, their last tiles sticking out
      {1, 13, 11, 16, 20, {2, 2, 2, 2}, -kInf, kInf, 2, 2},
      {2, 9, 14, 16, 33, {4, 3, 4, 3}, -kInf, kInf, 4, 3},   // dh != dw
      {1, 28, 28, 16, 16, {4, 4, 4, 4}, -kInf, kInf, 4, 4},  // fcn_resnet50's layer4 grid
      {1, 12, 12, 16, 16, {0, 0, 0, 0}, -kInf, kInf, 5, 5},  // no padding: 2x2 outputs, 25 phases
  };
  uint32_t seed = 100;
  for (const Case& k : cases) {
    SCOPED_TRACE(::testing::Message() << "n " << k.n << " h " << k.h << " w " << k.w << " c " << k.c << " m " << k.m
                                      << " pads " << k.pads[0] << k.pads[1] << k.pads[2] << k.pads[3] << " dilation "
                                      << k.dh << "x" << k.dw);
    const std::vector<float> x = random_values(static_cast<size_t>(k.n * k.h * k.w * k.c), seed++);
    const std::vector<float> w = random_values(static_cast<size_t>(k.m * k.c * 9), seed++, 0.5f);
    const std::vector<float> b = random_values(static_cast<size_t>(k.m), seed++, 0.5f);
    const std::vector<float> z = random_values(static_cast<size_t>(k.n * k.oh() * k.ow() * k.m), seed++);
    std::vector<double> want, mag;
    direct_conv(k, x, w, b, z, want, mag);
    // F(4x4)'s transforms reach 8x and 1/24 where F(2x2)'s stay within 1 and 1/2: it rounds more.
    for (const auto& [tile, tolerance] : {std::pair<int64_t, double>{2, 2e-6}, {4, 1e-5}}) {
      SCOPED_TRACE("F(" + std::to_string(tile) + ")");
      bool finite1 = false, finite2 = false;  // a residual added before the range
      const std::vector<float> one = run_winograd(k, x, w, b, 1, &finite1, tile, &z);
      const std::vector<float> two = run_winograd(k, x, w, b, 2, &finite2, tile, &z);
      ASSERT_TRUE(finite1 && finite2);
      ASSERT_EQ(one.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(one[i], want[i], tolerance * mag[i]) << "element " << i;
      EXPECT_TRUE(same_bits(one, two)) << "two threads changed the bits";
    }
  }
}

TEST(WinogradConvF32, PaysOnMapsWithTilesEnough) {
  if (!opt::WinogradConvF32::applies(3, 3, 1, 1, 1, 1, 16, 16)) GTEST_SKIP() << "no AVX-512 on this CPU";
  const std::vector<float> w(16 * 16 * 9, 0.1f), b(16, 0.0f);
  const auto rows_of = [&](int64_t o0, int64_t) { return w.data() + o0 * 16 * 9; };
  const opt::WinogradConvF32 plain(rows_of, b.data(), 16, 16, -kInf, kInf);
  const std::array<int64_t, 4> pad1{1, 1, 1, 1}, pad12{12, 12, 12, 12}, pad4{4, 4, 4, 4};
  EXPECT_TRUE(plain.pays(1, 28, 28, pad1));
  EXPECT_TRUE(plain.pays(1, 7, 7, pad1));   // 256 positions for 361 taps
  EXPECT_TRUE(plain.pays(1, 4, 4, pad1));   // 64 for 100
  EXPECT_FALSE(plain.pays(1, 3, 3, pad1));  // 64 for 49
  EXPECT_FALSE(plain.pays(1, 2, 2, pad1));  // one tile
  EXPECT_TRUE(plain.pays(4, 2, 2, pad1));   // one per image, 4 images: 64 for 64
  const opt::WinogradConvF32 d12(rows_of, b.data(), 16, 16, -kInf, kInf, 12, 12);
  EXPECT_FALSE(d12.pays(1, 20, 20, pad12));  // DeepLabV3's ASPP: 2304 for 1296
  const opt::WinogradConvF32 d4(rows_of, b.data(), 16, 16, -kInf, kInf, 4, 4);
  EXPECT_TRUE(d4.pays(1, 28, 28, pad4));  // fcn_resnet50's layer4: 4096 for 5776
  // F(4x4): 16 of its tiles from 14x14 on (576 positions for F(2x2)'s 784), not on 7x7 (4 tiles)
  EXPECT_TRUE(plain.large_tiles_pay(1, 28, 28, pad1));
  EXPECT_TRUE(plain.large_tiles_pay(1, 14, 14, pad1));
  EXPECT_FALSE(plain.large_tiles_pay(1, 12, 12, pad1));  // 9 tiles
  EXPECT_FALSE(plain.large_tiles_pay(1, 7, 7, pad1));
  EXPECT_TRUE(plain.large_tiles_pay(4, 7, 7, pad1));  // 16 tiles over 4 images
  EXPECT_TRUE(d4.large_tiles_pay(1, 28, 28, pad4));   // phases of 7x7, 16 of them
  // Layers wider than 256 x 256 keep F(2x2): F(4x4)'s weights take 4x the direct ones' memory.
  const std::vector<float> wide_w(512 * 256 * 9, 0.1f), wide_b(512, 0.0f);
  const auto wide_rows = [&](int64_t o0, int64_t) { return wide_w.data() + o0 * 256 * 9; };
  const opt::WinogradConvF32 wide(wide_rows, wide_b.data(), 512, 256, -kInf, kInf);
  EXPECT_FALSE(wide.large_tiles_pay(1, 28, 28, pad1));
  // Weights over 1 MB (512 x 256: 8 MB transformed) need 16 tiles: the direct tiles on 6x6
  // (9 tiles), Winograd from 7x7 (16) and on 6x6 over 2 images (18); the 16 x 16 layer (16 KB)
  // takes Winograd on 6x6.
  EXPECT_FALSE(wide.pays(1, 6, 6, pad1));
  EXPECT_TRUE(wide.pays(1, 7, 7, pad1));
  EXPECT_TRUE(wide.pays(2, 6, 6, pad1));
  EXPECT_TRUE(plain.pays(1, 6, 6, pad1));
  const opt::WinogradConvF32 large(rows_of, b.data(), 16, 16, -kInf, kInf, 1, 1, 4);
  EXPECT_FALSE(large.large_tiles_pay(1, 28, 28, pad1)) << "already F(4x4)";
  EXPECT_EQ(large.tile(), 4);
  // tile_for: what a static shape makes the Conv pack at session creation. The predicates need
  // no weights: a layer without them answers alike.
  const opt::WinogradConvF32 unpacked(16, 16, -kInf, kInf);
  EXPECT_FALSE(unpacked.has_weights());
  EXPECT_EQ(unpacked.tile_for(1, 28, 28, pad1), 4);
  EXPECT_EQ(unpacked.tile_for(1, 7, 7, pad1), 2);
  EXPECT_EQ(unpacked.tile_for(1, 3, 3, pad1), 0);
  EXPECT_EQ(plain.tile_for(1, 28, 28, pad1), 4);
  EXPECT_EQ(wide.tile_for(1, 28, 28, pad1), 2);
  EXPECT_EQ(wide.tile_for(1, 7, 7, pad1), 2);
  EXPECT_EQ(wide.tile_for(1, 6, 6, pad1), 0);
  // resnet50's 256 x 256 layers: on 14x14, F(4x4)'s 9.4 MB of weights for 16 tiles pay; on
  // 12x12, 9 tiles of it do not (F(2x2): 36 tiles for 4.2 MB).
  const opt::WinogradConvF32 r50(256, 256, -kInf, kInf);
  EXPECT_TRUE(r50.large_tiles_pay(1, 14, 14, pad1));
  EXPECT_EQ(r50.tile_for(1, 14, 14, pad1), 4);
  EXPECT_EQ(r50.tile_for(1, 12, 12, pad1), 2);
  EXPECT_EQ(r50.tile_for(1, 28, 28, pad1), 4);
  const opt::WinogradConvF32 unpacked_d12(16, 16, -kInf, kInf, 12, 12);
  EXPECT_EQ(unpacked_d12.tile_for(1, 20, 20, pad12), 0);
}

TEST(WinogradConvF32, ReportsNonFiniteInput) {
  if (!opt::WinogradConvF32::applies(3, 3, 1, 1, 1, 1, 16, 16)) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Case k{1, 12, 12, 16, 16, {1, 1, 1, 1}};
  std::vector<float> x = random_values(static_cast<size_t>(k.h * k.w * k.c), 3);
  x[x.size() - 1] = kInf;  // the last tile of the last block
  const std::vector<float> w = random_values(static_cast<size_t>(k.m * k.c * 9), 4, 0.5f);
  const std::vector<float> b(static_cast<size_t>(k.m), 0.0f);
  for (int64_t tile : {2, 4}) {
    bool finite = true;
    run_winograd(k, x, w, b, 2, &finite, tile);
    EXPECT_FALSE(finite) << "F(" << tile << ")";
  }
}

}  // namespace
}  // namespace xonnx
