// XNNPACK Gemm / MatMul (fully connected) vs the reference kernels.
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

TEST(XnnpackFullyConnected, GemmShapes) {
  for (int64_t m : {1, 3, 13}) {
    for (int64_t k : {1, 3, 127, 128}) {
      for (int64_t n : {1, 13, 128}) {
        for (int64_t tb : {0, 1}) {
          const Shape bs = tb ? Shape{n, k} : Shape{k, n};
          diff_test("Gemm", {var(rand_tensor({m, k}, 1)), cst(rand_tensor(bs, 2)), cst(rand_tensor({n}, 3))},
                    {attr_int("transB", tb)}, 13, true,
                    "m " + std::to_string(m) + " k " + std::to_string(k) + " n " + std::to_string(n) + " transB " +
                        std::to_string(tb));
        }
      }
    }
  }
}

TEST(XnnpackFullyConnected, GemmBiasAndScales) {
  const Tensor a = rand_tensor({5, 7}, 1), b = rand_tensor({7, 3}, 2);
  diff_test("Gemm", {var(a), cst(b)}, {}, 13, true, "no C");
  diff_test("Gemm", {var(a), cst(b), cst(rand_tensor({1, 3}, 3))}, {}, 13, true, "C [1, N]");
  diff_test("Gemm", {var(a), cst(b), cst(rand_tensor({1}, 3))}, {}, 13, true, "C [1]");
  diff_test("Gemm", {var(a), cst(b), cst(Tensor::scalar<float>(0.5f))}, {}, 13, true, "C scalar");
  diff_test("Gemm", {var(a), cst(b), cst(rand_tensor({3}, 3))}, {attr_float("alpha", 0.25f), attr_float("beta", -2.0f)},
            13, true, "alpha beta");
  diff_test("Gemm", {var(a), cst(b), cst(rand_tensor({3}, 3))}, {attr_int("broadcast", 1)}, 6, true,
            "opset 6 broadcast");
  // Declined: C [M, N], runtime C, runtime B, transA; opset 6 without broadcast is an error.
  diff_test("Gemm", {var(a), cst(b), cst(rand_tensor({5, 3}, 3))}, {}, 13, false, "C [M, N]");
  diff_test("Gemm", {var(a), cst(b), var(rand_tensor({3}, 3))}, {}, 13, false, "runtime C");
  diff_test("Gemm", {var(a), var(b), cst(rand_tensor({3}, 3))}, {}, 13, false, "runtime B");
  diff_test("Gemm", {var(rand_tensor({7, 5}, 1)), cst(b)}, {attr_int("transA", 1)}, 13, false, "transA");
  // Run-time mismatch: the reference kernel reports it.
  diff_test("Gemm", {var(rand_tensor({5, 6}, 1)), cst(b)}, {}, 13, false, "K mismatch");
  diff_test("Gemm", {var(rand_tensor({2, 5, 7}, 1)), cst(b)}, {}, 13, false, "3-D A");
}

TEST(XnnpackFullyConnected, MatMulRanks) {
  const Tensor b = rand_tensor({13, 127}, 2);
  diff_test("MatMul", {var(rand_tensor({13}, 1)), cst(b)}, {}, 13, true, "1-D A");
  diff_test("MatMul", {var(rand_tensor({3, 13}, 1)), cst(b)}, {}, 13, true, "2-D A");
  diff_test("MatMul", {var(rand_tensor({2, 3, 13}, 1)), cst(b)}, {}, 13, true, "3-D A");
  diff_test("MatMul", {var(rand_tensor({2, 1, 3, 13}, 1)), cst(b)}, {}, 13, true, "4-D A");
  diff_test("MatMul", {var(rand_tensor({128, 128}, 1)), cst(rand_tensor({128, 128}, 3))}, {}, 13, true, "128");
  diff_test("MatMul", {var(rand_tensor({3, 13}, 1)), var(b)}, {}, 13, false, "runtime B");
  diff_test("MatMul", {var(rand_tensor({3, 13}, 1)), cst(rand_tensor({2, 13, 4}, 2))}, {}, 13, false, "3-D B");
  diff_test("MatMul", {var(rand_tensor({3, 12}, 1)), cst(b)}, {}, 13, false, "K mismatch");
  diff_test("MatMul", {var(rand_tensor({0, 13}, 1)), cst(b)}, {}, 13, false, "empty A");
}

}  // namespace
}  // namespace xonnx
