// Differential tests of the optimized Transpose (also as the NHWC region boundaries), Gather, Where and
// reductions against the reference kernels
// (tests/unit/test_optimized_common.h): odd sizes, broadcasting, NaN/inf, and cases the
// optimized kernels hand to the reference kernel.
#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/layout_convert.h"
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

TEST(OptimizedLayout, Transpose) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {{{1, 128, 4, 64}, {0, 2, 1, 3}},
                                                                     {{1, 13, 6, 64}, {0, 2, 3, 1}},
                                                                     {{1, 3, 127, 129}, {0, 3, 1, 2}},
                                                                     {{129, 127}, {1, 0}},
                                                                     {{2, 3, 13, 5}, {0, 1, 3, 2}},
                                                                     {{128, 1, 256}, {1, 0, 2}},
                                                                     {{128, 4, 64}, {1, 2, 0}},
                                                                     {{3, 1, 5, 1, 7}, {4, 2, 0, 3, 1}},
                                                                     {{1}, {0}}};
  for (const auto& c : cases) {
    diff_test({"Transpose"}, {var(with_specials(rand_tensor(c.first, 1)))}, {attr_ints("perm", c.second)}, true,
              shape_to_string(c.first) + " perm " + shape_to_string(c.second), 0, 0);
  }
  diff_test({"Transpose"}, {var(rand_tensor({3, 5, 7}, 2))}, {}, true, "default perm", 0, 0);
  diff_test({"Transpose"}, {var(rand_tensor({3, 5}, 2))}, {attr_ints("perm", {0, 0})}, false, "bad perm");
  diff_test({"Transpose"}, {var(Tensor::from_vector<int64_t>({1, 2, 3, 4}, {2, 2}))}, {attr_ints("perm", {1, 0})},
            false, "int64");
}

// PixelShuffle / PixelUnshuffle in NCHW and as the layout pass's NHWC ops (data [N, H, W, C]):
// both modes, block sizes 1-3, odd sizes, NaN / inf moved like any value. Indivisible shapes,
// int64 and other ranks go to the reference kernels (which report the shape errors).
TEST(OptimizedLayout, DepthToSpaceAndSpaceToDepth) {
  uint32_t seed = 40;
  for (const char* domain : {"", "com.xonnx.nhwc"}) {
    const bool nhwc = std::string(domain) == "com.xonnx.nhwc";
    const auto dims = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
      return nhwc ? Shape{n, h, w, c} : Shape{n, c, h, w};
    };
    const Op to_space("DepthToSpace", domain, 13), to_depth("SpaceToDepth", domain, 13);
    for (int64_t b : {1, 2, 3}) {
      for (const Shape& s : {Shape{1, 3, 5, 7}, Shape{2, 16, 4, 9}, Shape{1, 1, 1, 1}}) {  // [n, c, h, w] of the output
        const std::string at =
            std::string(nhwc ? "NHWC " : "NCHW ") + "b " + std::to_string(b) + " " + shape_to_string(s);
        for (const char* mode : {"DCR", "CRD"}) {
          diff_test(to_space, {var(with_specials(rand_tensor(dims(s[0], s[1] * b * b, s[2], s[3]), seed++)))},
                    {attr_int("blocksize", b), attr_string("mode", mode)}, true,
                    "DepthToSpace " + std::string(mode) + " " + at, 0, 0);
        }
        diff_test(to_depth, {var(with_specials(rand_tensor(dims(s[0], s[1], s[2] * b, s[3] * b), seed++)))},
                  {attr_int("blocksize", b)}, true, "SpaceToDepth " + at, 0, 0);
      }
    }
    diff_test(to_space, {var(rand_tensor(dims(1, 6, 3, 3), seed++))}, {attr_int("blocksize", 2)}, false,
              "6 channels for blocks of 4");
    diff_test(to_depth, {var(rand_tensor(dims(1, 4, 5, 4), seed++))}, {attr_int("blocksize", 2)}, false,
              "height 5 for blocks of 2");
    diff_test(to_space, {var(Tensor::from_vector<int64_t>(std::vector<int64_t>(16, 7), dims(1, 4, 2, 2)))},
              {attr_int("blocksize", 2)}, false, "int64");
  }
  diff_test({"DepthToSpace", "", 1}, {var(rand_tensor({1, 8, 3, 2}, 9))}, {attr_int("blocksize", 2)}, true,
            "opset 1 (DCR, no mode)", 0, 0);
}

// The layout pass's region boundaries run as Transposes; other types and ranks stay with the
// reference kernels, which report a rank other than 4.
TEST(OptimizedLayout, RegionBoundaries) {
  for (const char* op : {"ToNHWC", "ToNCHW"}) {
    const Op boundary(op, "com.xonnx.nhwc");
    for (const Shape& s : {Shape{1, 32, 17, 19}, Shape{2, 3, 64, 65}, Shape{1, 1, 7, 9}, Shape{1, 48, 1, 1}}) {
      diff_test(boundary, {var(with_specials(rand_tensor(s, 4)))}, {}, true, shape_to_string(s), 0, 0);
    }
    diff_test(boundary, {var(Tensor::from_vector<int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 2, 2}))}, {}, false,
              "int64");
    diff_test(boundary, {var(rand_tensor({4, 5, 6}, 5))}, {}, false, "rank 3");
  }
}

// The region boundaries on 8-bit tensors (int8 models' region exits): 8 x 8 byte blocks with
// scalar edges, 32 x 32 tiles over the pool. Against the index arithmetic, at 1 and 2 threads,
// on shapes around the block sizes and large enough (1 MB and over) to be split.
TEST(OptimizedLayout, ByteBoundariesMatchTheIndexArithmetic) {
  for (const int threads : {1, 2}) {
    ThreadPool pool(threads);
    for (const bool to_nhwc : {true, false}) {
      for (const Shape& nchw : {Shape{1, 64, 128, 128}, Shape{2, 9, 17, 23}, Shape{1, 5, 8, 8}, Shape{1, 40, 33, 31}}) {
        const int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
        const Shape in_shape = to_nhwc ? nchw : Shape{n, h, w, c};
        std::vector<int8_t> v(static_cast<size_t>(n * c * h * w));
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int8_t>(i * 37 + (i >> 8));
        const Tensor x = Tensor::from_vector<int8_t>(v, in_shape);
        Result<Tensor> allocated = Tensor::allocate(DataType::kInt8, to_nhwc ? Shape{n, h, w, c} : nchw);
        ASSERT_TRUE(allocated.is_ok());
        Tensor& y = *allocated;
        ASSERT_TRUE(permute_layout(x, to_nhwc, y, pool).is_ok());
        const std::string what =
            shape_to_string(nchw) + (to_nhwc ? " to NHWC, " : " to NCHW, ") + std::to_string(threads) + " thread(s)";
        const int8_t* in = x.data<int8_t>();
        const int8_t* out = y.data<int8_t>();
        for (int64_t b = 0; b < n; ++b)
          for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t p = 0; p < h * w; ++p) {
              const int64_t nchw_at = (b * c + ch) * h * w + p, nhwc_at = (b * h * w + p) * c + ch;
              ASSERT_EQ(to_nhwc ? out[nhwc_at] : out[nchw_at], to_nhwc ? in[nchw_at] : in[nhwc_at])
                  << what << " image " << b << " channel " << ch << " pixel " << p;
            }
      }
    }
  }
}

TEST(OptimizedLayout, GatherWhereReduce) {
  auto ids = Tensor::from_vector<int64_t>({0, 99, -1, 5, 5}, {1, 5});
  diff_test({"Gather"}, {cst(rand_tensor({100, 13}, 1)), var(ids)}, {}, true, "embedding", 0, 0);
  diff_test({"Gather"}, {var(rand_tensor({4, 7, 3}, 2)), var(Tensor::from_vector<int32_t>({6, 0}, {2}))},
            {attr_int("axis", 1)}, true, "axis 1 int32", 0, 0);
  diff_test({"Gather"}, {var(rand_tensor({4, 3}, 2)), var(Tensor::from_vector<int64_t>({4}, {1}))}, {}, false,
            "out of range");
  // One long gathered row (a q / k / v pick from [3, ...] projections): copied in pieces.
  diff_test({"Gather"}, {var(rand_tensor({3, 40001}, 3)), var(Tensor::from_vector<int64_t>({-2}, {}))}, {}, true,
            "one long row", 0, 0);
  diff_test({"Gather"}, {var(rand_tensor({2, 3, 70000}, 4)), var(Tensor::from_vector<int64_t>({2}, {1}))},
            {attr_int("axis", 1)}, true, "two long rows", 0, 0);

  auto cond = Tensor::from_vector<bool>({true, false, false, true, true, false, true}, {1, 1, 7});
  diff_test({"Where"}, {var(cond), cst(Tensor::from_vector<float>({-kInf}, {})), var(rand_tensor({2, 6, 1, 7}, 3))}, {},
            true, "mask broadcast", 0, 0);
  diff_test({"Where"}, {var(cond), var(rand_tensor({1, 1, 7}, 4)), var(rand_tensor({1, 1, 7}, 5))}, {}, true, "equal",
            0, 0);
  diff_test(
      {"Where"},
      {var(Tensor::from_vector<bool>({true, false}, {2, 1})), var(rand_tensor({2, 3}, 4)), var(rand_tensor({2, 3}, 5))},
      {}, false, "column broadcast: reference", 0, 0);
  // Inputs of three periods over 267,335 outputs: the 2-thread chunks split runs mid-row.
  Tensor row_mask = rand_tensor({1, 1, 421}, 6);
  Tensor big_mask = Tensor::allocate(DataType::kBool, {1, 1, 421}).value();
  for (int64_t i = 0; i < 421; ++i) big_mask.data<bool>()[i] = row_mask.data<float>()[i] > 0;
  diff_test({"Where"}, {var(big_mask), var(rand_tensor({127, 421}, 7)), var(rand_tensor({5, 127, 421}, 8))}, {}, true,
            "three periods", 0, 0);
  diff_test({"Where"},
            {var(big_mask), cst(Tensor::from_vector<float>({-kInf}, {})), var(rand_tensor({1, 5, 127, 421}, 9))}, {},
            true, "attention mask over heads", 0, 0);

  for (int64_t n : kSizes) {
    const std::string s = " n" + std::to_string(n);
    diff_test({"ReduceMean", "", 13}, {var(rand_tensor({2, n, 16}, 6))},
              {attr_ints("axes", {1}), attr_int("keepdims", 0)}, true, "middle" + s, 1e-5, 1e-6);
    diff_test({"ReduceMean", "", 18}, {var(rand_tensor({2, 3, n}, 7)), cst(Tensor::from_vector<int64_t>({-1}, {1}))},
              {}, true, "last" + s, 1e-5, 1e-6);
    diff_test({"ReduceSum", "", 13}, {var(rand_tensor({3, n, 2}, 8)), cst(Tensor::from_vector<int64_t>({1, 2}, {2}))},
              {}, true, "sum inner" + s, 1e-5, 1e-5);
    diff_test({"ReduceMax", "", 13}, {var(with_specials(rand_tensor({4, n}, 9)))}, {attr_ints("axes", {1})}, true,
              "max NaN" + s, 0, 0);
    diff_test({"ReduceMax", "", 13}, {var(with_specials(rand_tensor({n, 5}, 9)))}, {attr_ints("axes", {0})}, true,
              "max cols NaN" + s, 0, 0);
  }
  // One outer row over a long axis: sums of row blocks, the same bits at 1 and 2 threads.
  diff_test({"ReduceMean", "", 13}, {var(rand_tensor({1, 1999, 17}, 10))}, {attr_ints("axes", {1})}, true,
            "middle, blocks of rows", 1e-5, 1e-6);
  diff_test({"ReduceSum", "", 13},
            {var(with_specials(rand_tensor({1, 600, 48}, 11))), cst(Tensor::from_vector<int64_t>({1}, {1}))}, {}, true,
            "sum, blocks of rows, NaN", 1e-5, 1e-5);
  diff_test({"ReduceSum", "", 13}, {var(rand_tensor({3, 4, 5}, 8)), cst(Tensor::from_vector<int64_t>({0, 2}, {2}))}, {},
            false, "scattered axes", 1e-5, 1e-5);
  diff_test({"ReduceSum", "", 13}, {var(rand_tensor({3, 4}, 8))}, {}, false, "no axes: reference", 1e-5, 1e-5);
}

// Big enough that the work is split over the pool's threads (diff_test runs 1 and 2 threads).
TEST(OptimizedLayout, LargeShapesSplitOverThreads) {
  diff_test({"Transpose"}, {var(rand_tensor({2, 300, 513}, 1))}, {attr_ints("perm", {0, 2, 1})}, true, "2-D planes", 0,
            0);
  diff_test({"Transpose"}, {var(rand_tensor({300, 7, 129}, 2))}, {attr_ints("perm", {1, 0, 2})}, true, "rows", 0, 0);
  diff_test({"ReduceSum", "", 13}, {var(rand_tensor({700, 300}, 3)), cst(Tensor::from_vector<int64_t>({1}, {1}))}, {},
            true, "sum rows", 1e-5, 1e-5);
  std::vector<bool> c(300000);
  for (size_t i = 0; i < c.size(); ++i) c[i] = (i * 7) % 3 == 0;
  diff_test(
      {"Where"},
      {var(Tensor::from_vector<bool>(c, {300, 1000})), var(rand_tensor({300, 1000}, 4)), var(rand_tensor({1000}, 5))},
      {}, true, "where", 0, 0);
}

}  // namespace
}  // namespace xonnx
