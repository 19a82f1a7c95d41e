// XNNPACK element-wise kernels (unary, NaN/inf handling) vs the reference; binary broadcasting
// and Softmax are in test_binary.cc and test_softmax.cc (every backend).
#include <limits>

#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

TEST(XnnpackElementwise, Unary) {
  for (int64_t n : {1, 3, 13, 127, 128, 4099}) {
    const std::string what = "n " + std::to_string(n);
    const Tensor x = rand_tensor({n}, 5, -8.0f, 8.0f);
    diff_test("Sigmoid", {var(x)}, {}, 13, true, what, 1e-5, 1e-6);
    diff_test("Relu", {var(x)}, {}, 14, true, what);
    diff_test("HardSwish", {var(x)}, {}, 14, true, what, 1e-5, 1e-6);
    diff_test("Clip", {var(x), cst(Tensor::scalar<float>(0.0f)), cst(Tensor::scalar<float>(6.0f))}, {}, 13, true, what);
    diff_test("LeakyRelu", {var(x)}, {}, 16, true, what);
    diff_test("LeakyRelu", {var(x)}, {attr_float("alpha", 0.2f)}, 6, true, what);
    diff_test("Elu", {var(x)}, {attr_float("alpha", 0.7f)}, 6, true, what, 1e-5, 1e-6);
    for (const char* op : {"Abs", "Neg", "Floor", "Ceil"}) diff_test(op, {var(x)}, {}, 13, true, what);
    diff_test("Round", {var(x)}, {}, 11, true, what);
    diff_test("Sqrt", {var(rand_tensor({n}, 7, 0.0f, 100.0f))}, {}, 13, true, what, 1e-6, 0);
  }
  // Halves round to even; -0.5 and 0.5 to zero.
  diff_test("Round", {var(Tensor::from_vector<float>({-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}, {6}))}, {}, 11, true,
            "halves");
  const Tensor x = rand_tensor({2, 3, 5}, 6, -8.0f, 8.0f);
  diff_test("Clip", {var(x)}, {attr_float("min", -1.0f), attr_float("max", 2.5f)}, 6, true, "opset 6 attributes");
  diff_test("Clip", {var(x)}, {}, 13, true, "no bounds");
  diff_test("Clip", {var(x), In{}, cst(Tensor::scalar<float>(1.0f))}, {}, 13, true, "max only");
  diff_test("Clip", {var(x), var(Tensor::scalar<float>(0.5f))}, {}, 13, true, "runtime min");
  diff_test("Clip", {var(x), var(Tensor::scalar<float>(-0.5f)), var(Tensor::scalar<float>(0.5f))}, {}, 13, true,
            "runtime min max");
  diff_test("Clip", {var(x), var(Tensor::scalar<float>(0.5f)), var(Tensor::scalar<float>(-0.5f))}, {}, 13, false,
            "runtime min > max");
  diff_test("Clip", {var(x), var(Tensor::from_vector<float>({0.5f, 1.0f}, {2}))}, {}, 13, false,
            "runtime non-scalar min (error)");
  diff_test("Clip", {var(x), cst(Tensor::scalar<float>(2.0f)), cst(Tensor::scalar<float>(1.0f))}, {}, 13, false,
            "min > max");
  diff_test("Relu", {var(Tensor::from_vector<int32_t>({-1, 2}, {2}))}, {}, 14, false, "int32");
}

// XNNPACK clamps NaN to its output bounds and differs on inf in Softmax/MaxPool: non-finite
// outputs (or NaN inputs of Relu/Clip) must give exactly the reference kernel's results.
TEST(XnnpackElementwise, NanAndInfMatchReference) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor special = Tensor::from_vector<float>({nan, -inf, inf, -0.0f, 0.0f, 1.0f}, {6});
  diff_test("Relu", {var(special)}, {}, 14, false, "special values");
  diff_test("Sigmoid", {var(special)}, {}, 13, true, "special values");
  diff_test("Clip", {var(special), cst(Tensor::scalar<float>(0.0f)), cst(Tensor::scalar<float>(6.0f))}, {}, 13, false,
            "special values");
  diff_test("HardSwish", {var(special)}, {}, 14, true, "special values");
  for (const char* op : {"LeakyRelu", "Elu", "Abs", "Neg", "Sqrt", "Floor", "Ceil"})
    diff_test(op, {var(special)}, {}, 13, true, std::string(op) + " special values");
  diff_test("Round", {var(special)}, {}, 11, true, "Round special values");
  diff_test("Softmax", {var(special.reshaped({2, 3}))}, {}, 13, true, "special values");
  diff_test("Softmax", {var(Tensor::from_vector<float>({-inf, -inf, -inf}, {1, 3}))}, {}, 13, true, "all -inf");
  diff_test("Softmax", {var(Tensor::from_vector<float>({inf, 0.0f, 1.0f}, {1, 3}))}, {}, 13, true, "+inf");
  diff_test("Softmax", {var(Tensor::from_vector<float>({nan, 0.0f, 1.0f}, {1, 3}))}, {}, 13, true, "nan");
  // Larger tensors with a few NaN/inf sprinkled in (most windows/rows stay finite).
  auto sprinkle = [&](const Shape& shape, uint32_t seed) {
    Tensor t = rand_tensor(shape, seed);
    float* p = t.data<float>();
    const int64_t n = t.numel();
    p[n / 7] = nan;
    p[n / 3] = inf;
    p[n - 1] = -inf;
    return t;
  };
  const Tensor img = sprinkle({2, 3, 9, 9}, 21);
  diff_test("Conv", {var(img), cst(rand_tensor({4, 3, 3, 3}, 22))}, {attr_ints("pads", {1, 1, 1, 1})}, 13, true,
            "conv nan/inf");
  diff_test("MaxPool", {var(img)}, {attr_ints("kernel_shape", {2, 2})}, 13, true, "maxpool nan/inf");
  diff_test("MaxPool", {var(Tensor::from_vector<float>({nan, nan, nan, nan}, {1, 1, 2, 2}))},
            {attr_ints("kernel_shape", {2, 2})}, 13, true, "maxpool all nan");
  diff_test("AveragePool", {var(img)}, {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})}, 13, true,
            "avgpool nan/inf");
  diff_test("GlobalAveragePool", {var(img)}, {}, 13, true, "gap nan/inf");
  diff_test("Gemm", {var(sprinkle({5, 7}, 23)), cst(rand_tensor({7, 3}, 24))}, {}, 13, true, "gemm nan/inf");
  diff_test("MatMul", {var(sprinkle({2, 5, 7}, 23)), cst(rand_tensor({7, 3}, 24))}, {}, 13, true, "matmul nan/inf");
  diff_test("Mul", {var(sprinkle({3, 13}, 25)), var(sprinkle({13}, 26))}, {}, 14, true, "mul nan/inf");
  diff_test("Softmax", {var(sprinkle({5, 13}, 27))}, {}, 13, true, "softmax nan/inf");
  diff_test("Relu", {var(sprinkle({5, 13}, 27))}, {}, 14, false, "relu nan");
  diff_test("Add", {var(special), var(special)}, {}, 14, true, "special values");
}

}  // namespace
}  // namespace xonnx

namespace xonnx {
namespace {

TEST(XnnpackElementwise, ClipBoundsChangeBetweenRuns) {
  using namespace xnntest;
  const Tensor x = rand_tensor({4, 5}, 3, -2.0f, 2.0f);
  const Tensor lo0 = Tensor::scalar<float>(0.0f);
  auto fast = make_session("Clip", {var(x), var(lo0), var(lo0)}, {}, 13, false);
  auto ref = make_session("Clip", {var(x), var(lo0), var(lo0)}, {}, 13, true);
  ASSERT_TRUE(fast.is_ok() && ref.is_ok());
  for (auto [lo, hi] : std::vector<std::pair<float, float>>{{-1.0f, 1.0f}, {0.0f, 6.0f}, {2.0f, 1.0f}, {-1.0f, 1.0f}}) {
    const std::vector<Value> in = {x, Tensor::scalar<float>(lo), Tensor::scalar<float>(hi)};
    auto want = (*ref)->run(in);
    auto got = (*fast)->run(in);
    ASSERT_TRUE(want.is_ok() && got.is_ok());
    expect_close((*got)[0].tensor(), (*want)[0].tensor(), 0, 0,
                 "bounds " + std::to_string(lo) + " " + std::to_string(hi));
  }
}

}  // namespace
}  // namespace xonnx
