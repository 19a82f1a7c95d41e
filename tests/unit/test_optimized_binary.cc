// Differential tests of the optimized Add / Sub / Mul / Div (runtime/ops/optimized/binary.cc)
// against the reference kernels: bit-identical results over odd sizes, every broadcast form
// the kernel takes (either operand broadcast), NaN/inf and division by zero, and the shapes
// and types it leaves to the reference kernel.
#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;

constexpr const char* kOps[] = {"Add", "Sub", "Mul", "Div"};

// Both orders of the operands: the broadcast one first (swapped) and second.
void diff_both_orders(const char* op, const Shape& full, const Shape& other, bool fast, const std::string& what) {
  const Tensor x = with_specials(rand_tensor(full, 1, -3, 3));
  Tensor y = rand_tensor(other, 2, -3, 3);
  if (y.numel() > 1) y.data<float>()[1] = 0.0f;  // x / 0
  diff_test({op}, {var(x), var(y)}, {}, fast, what, 0, 0);
  diff_test({op}, {var(y), var(x)}, {}, fast, what + " (swapped)", 0, 0);
}

TEST(OptimizedBinary, EqualShapesOfOddSizes) {
  for (const char* op : kOps) {
    for (int64_t n : kSizes) diff_both_orders(op, {2, n}, {2, n}, true, "n " + std::to_string(n));
    diff_both_orders(op, {3, 40000}, {3, 40000}, true, "several parallel items");
    diff_both_orders(op, {2, 3, 5}, {1, 2, 3, 5}, true, "extra leading 1");
  }
}

TEST(OptimizedBinary, ScalarsRowsAndGates) {
  for (const char* op : kOps) {
    diff_both_orders(op, {5, 7, 13}, {}, true, "scalar");
    diff_both_orders(op, {5, 7, 13}, {1}, true, "one-element tensor");
    diff_both_orders(op, {5, 7, 129}, {129}, true, "bias row");
    diff_both_orders(op, {128, 1, 768}, {768}, true, "projection bias");
    diff_both_orders(op, {2, 5, 6, 24}, {2, 1, 1, 24}, true, "NHWC gate per image and channel");
    // 96-value rows across 8192-value work items: part rows at item edges, whole-row runs
    // between, and the image (the gate row) changing inside an item.
    diff_both_orders(op, {2, 57, 43, 96}, {2, 1, 1, 96}, true, "NHWC gate over several items");
    diff_both_orders(op, {2, 24, 5, 6}, {2, 24, 1, 1}, true, "NCHW gate: a scalar per image and channel");
    diff_both_orders(op, {3, 7, 1, 40000}, {3, 1, 1, 1}, true, "a scalar per image over several items");
  }
}

TEST(OptimizedBinary, OtherShapesAndTypesGoToTheReference) {
  for (const char* op : kOps) {
    diff_test({op}, {var(rand_tensor({4, 1}, 1)), var(rand_tensor({1, 5}, 2))}, {}, false, "both broadcast", 0, 0);
    diff_test({op}, {var(rand_tensor({3, 50, 2}, 1)), var(rand_tensor({3, 1, 2}, 2))}, {}, false,
              "rows of 2 repeated", 0, 0);
    diff_test({op}, {var(rand_tensor({2, 3, 4}, 1)), var(rand_tensor({2, 1, 4, 1}, 2))}, {}, false,
              "broadcast on two runs of dims", 0, 0);
    diff_test({op}, {var(rand_tensor({3}, 1)), var(rand_tensor({4}, 2))}, {}, false, "not broadcastable: same error", 0, 0);
    diff_test({op}, {var(Tensor::from_vector<int64_t>({7, 8, 9}, {3})), cst(Tensor::from_vector<int64_t>({2}, {1}))},
              {}, false, "int64 (shape arithmetic)", 0, 0);
  }
}

}  // namespace
}  // namespace xonnx
