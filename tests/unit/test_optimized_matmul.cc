// Differential tests of the optimized MatMul against the reference kernel
// (tests/unit/test_optimized_common.h): odd sizes, broadcasting, NaN/inf, and cases the
// optimized kernels hand to the reference kernel.
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

TEST(OptimizedMatMul, MatMulOddShapes) {
  for (int64_t m : {1, 3, 13, 128}) {
    for (int64_t n : kSizes) {
      const int64_t k = m == 128 ? 64 : n;
      diff_test({"MatMul"}, {var(rand_tensor({m, k}, 1)), var(rand_tensor({k, n}, 2))}, {}, true,
                "M" + std::to_string(m) + " N" + std::to_string(n), 1e-4, 1e-5);
    }
  }
}

TEST(OptimizedMatMul, MatMulAttentionShapesAndBroadcast) {
  diff_test({"MatMul"}, {var(rand_tensor({1, 4, 128, 64}, 1)), var(rand_tensor({1, 4, 64, 128}, 2))}, {}, true, "QK^T",
            1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({1, 4, 128, 128}, 3)), var(rand_tensor({1, 4, 128, 64}, 4))}, {}, true, "AV",
            1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({2, 3, 257, 70}, 17)), var(rand_tensor({2, 3, 70, 129}, 18))}, {}, true,
            "split over threads", 1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({1, 6, 1, 64}, 5)), var(rand_tensor({1, 6, 64, 128}, 6))}, {}, true, "decode",
            1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({2, 1, 13, 7}, 7)), var(rand_tensor({3, 7, 5}, 8))}, {}, true,
            "batch broadcast", 1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({3, 17, 9}, 9)), cst(rand_tensor({9, 33}, 10))}, {}, true, "shared B", 1e-4,
            1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({5, 9}, 9)), cst(rand_tensor({2, 9, 33}, 10))}, {}, true, "constant 3-D B",
            1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({9}, 11)), var(rand_tensor({2, 9, 4}, 12))}, {}, true, "1-D A", 1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({2, 5, 9}, 13)), var(rand_tensor({9}, 14))}, {}, true, "1-D B", 1e-4, 1e-5);
  diff_test({"MatMul"}, {var(with_specials(rand_tensor({13, 8}, 15))), var(rand_tensor({8, 20}, 16))}, {}, true,
            "NaN/inf", 1e-4, 1e-5);
}

// A constant B is packed at creation; 12 and more rows of A run on the convolution's tiles.
TEST(OptimizedMatMul, ConstantBManyRows) {
  for (int64_t m : {11, 12, 13, 127}) {
    diff_test({"MatMul"}, {var(with_specials(rand_tensor({m, 70}, 19))), cst(rand_tensor({70, 129}, 20))}, {}, true,
              "M" + std::to_string(m) + ", NaN/inf", 1e-4, 1e-5);
  }
  diff_test({"MatMul"}, {var(rand_tensor({128, 1, 256}, 21)), cst(rand_tensor({256, 96}, 22))}, {}, true,
            "[L, 1, E] projection as one tall GEMM", 1e-4, 1e-5);
  // Over 1 MB of A: blocks of rows, each running every panel.
  diff_test({"MatMul"}, {var(rand_tensor({1100, 256}, 23)), cst(rand_tensor({256, 40}, 24))}, {}, true,
            "A in row blocks", 1e-4, 1e-5);
  // Rows of A 4 KB apart (K = 1024) run from a re-strided copy (fconv_rows_alias).
  diff_test({"MatMul"}, {var(with_specials(rand_tensor({2, 13, 1024}, 45))), cst(rand_tensor({1024, 40}, 46))}, {},
            true, "K 1024, batched, NaN/inf", 1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({2, 25, 1024}, 47)), var(rand_tensor({2, 1024, 33}, 48))}, {}, true,
            "K 1024, runtime B", 1e-4, 1e-5);
  // K over 768: the tiles run K in slices, each resuming from the last one's sums.
  diff_test(
      {"Gemm"},
      {var(with_specials(rand_tensor({37, 2000}, 49))), cst(rand_tensor({2000, 70}, 50)), cst(rand_tensor({70}, 51))},
      {}, true, "K 2000 in three slices, bias, NaN/inf", 1e-4, 2e-3);
  diff_test({"MatMul"}, {var(rand_tensor({3, 14, 1600}, 52)), var(rand_tensor({3, 1600, 20}, 53))}, {}, true,
            "K 1600 in slices, runtime B", 1e-4, 2e-3);
}

// 12 and more rows of A against a runtime B run on the same tiles; each batch's B is packed
// whole first, a group of batches at a time (up to 1 MB of panels).
TEST(OptimizedMatMul, RuntimeBManyRows) {
  diff_test({"MatMul"}, {var(with_specials(rand_tensor({12, 8}, 25))), var(rand_tensor({8, 40}, 26))}, {}, true,
            "M12, NaN/inf", 1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({2, 3, 29, 33}, 27)), var(rand_tensor({1, 3, 33, 31}, 28))}, {}, true,
            "B broadcast over the outer batch", 1e-4, 1e-5);
  diff_test({"MatMul"}, {var(rand_tensor({3, 20, 300}, 29)), var(rand_tensor({3, 300, 900}, 30))}, {}, true,
            "over 1 MB of panels per batch: groups of one", 1e-4, 1e-5);
}

// com.microsoft FusedMatMul's alpha on every path: packed constant B (tiles and gemm_panel),
// a runtime B on the tiles, per panel and read in place.
TEST(OptimizedMatMul, FusedMatMulAlphaOnEveryPath) {
  const Op op("FusedMatMul", "com.microsoft");
  const std::vector<Attribute> alpha = {testing::attr_float("alpha", 0.125f)};
  diff_test(op, {var(rand_tensor({13, 40}, 31)), cst(rand_tensor({40, 70}, 32))}, alpha, true, "constant B, tiles",
            1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({5, 40}, 33)), cst(rand_tensor({40, 70}, 34))}, alpha, true, "constant B, 5 rows",
            1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({1, 3, 20, 16}, 35)), var(rand_tensor({1, 3, 16, 20}, 36))}, alpha, true,
            "runtime B, tiles", 1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({3, 5, 16}, 37)), var(rand_tensor({3, 16, 40}, 38))}, alpha, true, "runtime B, 5 rows",
            1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({3, 2, 16}, 39)), var(rand_tensor({3, 16, 40}, 40))}, alpha, true,
            "runtime B, 2 rows read in place", 1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({5, 9}, 41)), cst(rand_tensor({2, 9, 33}, 42))}, alpha, true, "constant 3-D B", 1e-4,
            1e-5);
}

// FusedMatMul's transB (absorb-runtime-transposes' form): B^T's rows packed as the panels'
// columns on every path a runtime B takes (the tiles, gemm_panel, and few rows, which pack
// instead of reading B in place), with column tails, broadcast batches and alpha; a constant
// 2-D B^T is packed at creation; a 1-D B is not transposed.
TEST(OptimizedMatMul, FusedMatMulTransposedRuntimeB) {
  const Op op("FusedMatMul", "com.microsoft");
  const std::vector<Attribute> trans_b = {testing::attr_int("transB", 1)};
  const std::vector<Attribute> scaled = {testing::attr_float("alpha", 0.5f), testing::attr_int("transB", 1)};
  for (int64_t m : {1, 2, 5, 12, 13, 40}) {
    for (int64_t n : {8, 37, 70}) {
      diff_test(op, {var(with_specials(rand_tensor({2, m, 33}, 43))), var(rand_tensor({2, n, 33}, 44))}, trans_b, true,
                "M" + std::to_string(m) + " N" + std::to_string(n) + ", NaN/inf", 1e-4, 1e-5);
    }
  }
  diff_test(op, {var(rand_tensor({2, 3, 29, 16}, 45)), var(rand_tensor({1, 3, 31, 16}, 46))}, scaled, true,
            "B^T broadcast over the outer batch, alpha", 1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({3, 20, 300}, 47)), var(rand_tensor({3, 900, 300}, 48))}, scaled, true,
            "over 1 MB of panels per batch", 1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({4, 7, 16}, 49)), cst(rand_tensor({4, 24, 16}, 50))}, trans_b, true,
            "constant 3-D B^T, read at run time", 1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({13, 8}, 51)), cst(rand_tensor({20, 8}, 52))}, scaled, true,
            "constant 2-D B^T, packed at creation", 1e-4, 1e-5);
  diff_test(op, {var(rand_tensor({2, 5, 9}, 53)), var(rand_tensor({9}, 54))}, trans_b, true, "1-D B: not transposed",
            1e-4, 1e-5);
}

TEST(OptimizedMatMul, MatMulDefersToReference) {
  diff_test({"MatMul"}, {var(rand_tensor({3, 4}, 1)), var(rand_tensor({5, 6}, 2))}, {}, false, "K mismatch");
  diff_test({"MatMul"}, {var(rand_tensor({0, 4}, 1)), var(rand_tensor({4, 6}, 2))}, {}, false, "empty");
  auto ai = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  diff_test({"MatMul"}, {var(ai), var(ai)}, {}, false, "int32");
  diff_test({"MatMul"}, {var(rand_tensor({2, 4}, 1)), cst(ai)}, {}, false, "constant int B: declined");
}

}  // namespace
}  // namespace xonnx

namespace xonnx {
namespace {

using namespace opttest;

// Gemm as a fully-connected layer runs on the MatMul's prepacked panels (on every ISA; outside
// AVX-512 after XNNPACK's): either transB, alpha folded into the panels, beta * C as a row bias
// of each broadcasting shape, few rows (a split GEMV) and many (the tiles on AVX-512).
TEST(OptimizedGemm, FullyConnectedShapes) {
  int64_t seed = 30;
  for (int64_t m : {1, 2, 3, 13}) {
    for (int64_t trans_b : {0, 1}) {
      for (int64_t n : {1, 33, 1000}) {
        // K = 600: transB's panels are packed from pieces of 256 of B's rows, the last one partial.
        const int64_t k = n == 1000 ? 1280 : n == 33 ? 600 : 17;
        Tensor b = trans_b ? rand_tensor({n, k}, seed++) : rand_tensor({k, n}, seed++);
        const std::string what =
            "M" + std::to_string(m) + " K" + std::to_string(k) + " N" + std::to_string(n) + (trans_b ? " transB" : "");
        const double atol = 1e-6 * static_cast<double>(k);  // sums of k terms of |x| < 1 cancel
        diff_test({"Gemm"}, {var(rand_tensor({m, k}, seed++)), cst(b), cst(rand_tensor({n}, seed++))},
                  {attr_int("transB", trans_b)}, true, what, 1e-4, atol);
        diff_test({"Gemm"}, {var(rand_tensor({m, k}, seed++)), cst(b), cst(rand_tensor({1, n}, seed++))},
                  {attr_int("transB", trans_b), attr_float("alpha", 0.5f), attr_float("beta", -2.0f)}, true,
                  what + " alpha beta [1, N] C", 1e-4, atol);
      }
    }
  }
  diff_test({"Gemm"}, {var(rand_tensor({3, 9}, 1)), cst(rand_tensor({9, 5}, 2))}, {}, true, "no C", 1e-4, 1e-5);
  diff_test({"Gemm"}, {var(rand_tensor({3, 9}, 1)), cst(rand_tensor({9, 5}, 2)), cst(Tensor::scalar<float>(0.25f))}, {},
            true, "scalar C", 1e-4, 1e-5);
  diff_test({"Gemm"}, {var(with_specials(rand_tensor({13, 8}, 3))), cst(rand_tensor({8, 20}, 4))}, {}, true, "NaN/inf",
            1e-4, 1e-5);
  // The tiles start from the bias: row blocks of A, a partial last panel.
  diff_test({"Gemm"}, {var(rand_tensor({1100, 256}, 5)), cst(rand_tensor({256, 40}, 6)), cst(rand_tensor({40}, 7))}, {},
            true, "row blocks, bias in the tiles", 1e-4, 1e-5);
}

TEST(OptimizedGemm, OtherGemmsAreDeclinedOrDeferred) {
  diff_test({"Gemm"}, {var(rand_tensor({9, 3}, 1)), cst(rand_tensor({9, 5}, 2))}, {attr_int("transA", 1)}, false,
            "transA");
  diff_test({"Gemm"}, {var(rand_tensor({3, 9}, 1)), var(rand_tensor({9, 5}, 2))}, {}, false, "runtime B");
  diff_test({"Gemm"}, {var(rand_tensor({3, 9}, 1)), cst(rand_tensor({9, 5}, 2)), cst(rand_tensor({3, 5}, 3))}, {},
            false, "full C");
  diff_test({"Gemm"}, {var(rand_tensor({3, 8}, 1)), cst(rand_tensor({9, 5}, 2))}, {}, false, "K mismatch");
}

}  // namespace
}  // namespace xonnx
