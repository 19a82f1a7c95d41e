// Gather/scatter family: Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND,
// OneHot, Compress, NonZero, TensorScatter.
#include <gtest/gtest.h>

#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::attr_string;
using testing::iota;
using testing::run_op;
using testing::tensor_of;
using testing::values;

Tensor I64(std::vector<int64_t> v, Shape s) { return tensor_of<int64_t>(std::move(v), std::move(s)); }

TEST(GatherScatterOps, GatherAxisAndNegative) {
  Tensor x = tensor_of<float>(iota(6), {3, 2});
  auto r = run_op("Gather", {x, I64({-1, 0}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{4, 5, 0, 1}));
  r = run_op("Gather", {x, tensor_of<int32_t>({1}, {})}, {attr_int("axis", 1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 3, 5}));
  r = run_op("Gather", {tensor_of<std::string>({"a", "b"}, {2}), I64({1, 1, 0}, {3})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[2], "a");
  EXPECT_FALSE(run_op("Gather", {x, I64({3}, {1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Gather", {x, I64({-4}, {1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Gather", {x, tensor_of<float>({0}, {1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("Gather", {x, I64({0}, {1})}, {attr_int("axis", 2)}, 13).is_ok());
}

TEST(GatherScatterOps, GatherElements) {
  Tensor x = tensor_of<float>({1, 2, 3, 4}, {2, 2});
  auto r = run_op("GatherElements", {x, I64({0, 0, 1, 0}, {2, 2})}, {attr_int("axis", 1)}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 1, 4, 3}));
  r = run_op("GatherElements", {x, I64({-1, 0}, {1, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 2}));
  EXPECT_FALSE(run_op("GatherElements", {x, I64({2, 0}, {1, 2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("GatherElements", {x, I64({0, 0, 0}, {1, 3})}, {}, 13).is_ok());
}

// Every axis of a 4-D data tensor, with indices smaller than data on the other axes (the
// offsets carry from row to row), int32 and int64 indices, against the definition.
TEST(GatherScatterOps, GatherAndScatterElementsOverEveryAxis) {
  const Shape data_shape{3, 4, 2, 5}, ind_shape{2, 3, 2, 4};
  const Tensor x = tensor_of<float>(iota(120), data_shape);
  for (int64_t axis = 0; axis < 4; ++axis) {
    std::vector<int64_t> idx(48);
    for (size_t o = 0; o < idx.size(); ++o) idx[o] = static_cast<int64_t>((o * 7 + 3) % data_shape[axis]);
    std::vector<float> want_gather(48), want_scatter = iota(120);
    for (int64_t o = 0; o < 48; ++o) {
      int64_t rest = o, pos[4];
      for (int d = 3; d >= 0; --d) pos[d] = rest % ind_shape[d], rest /= ind_shape[d];
      pos[axis] = idx[static_cast<size_t>(o)];
      const int64_t off = ((pos[0] * 4 + pos[1]) * 2 + pos[2]) * 5 + pos[3];
      want_gather[static_cast<size_t>(o)] = static_cast<float>(off);
      want_scatter[static_cast<size_t>(off)] = 1000.0f + static_cast<float>(o);  // in order: the last write wins
    }
    std::vector<int32_t> idx32(idx.begin(), idx.end());
    std::vector<float> upd(48);
    for (size_t o = 0; o < upd.size(); ++o) upd[o] = 1000.0f + static_cast<float>(o);
    for (const Tensor& ind : {I64(idx, ind_shape), tensor_of<int32_t>(idx32, ind_shape)}) {
      auto g = run_op("GatherElements", {x, ind}, {attr_int("axis", axis)}, 13);
      ASSERT_TRUE(g.is_ok()) << g.status().to_string();
      EXPECT_EQ(values<float>((*g)[0]), want_gather) << "axis " << axis;
      auto s = run_op("ScatterElements", {x, ind, tensor_of<float>(upd, ind_shape)}, {attr_int("axis", axis)}, 13);
      ASSERT_TRUE(s.is_ok()) << s.status().to_string();
      EXPECT_EQ(values<float>((*s)[0]), want_scatter) << "axis " << axis;
    }
  }
}

TEST(GatherScatterOps, GatherND) {
  Tensor x = tensor_of<int32_t>({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  auto r = run_op("GatherND", {x, I64({0, 1, 1, 0}, {2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{2, 3, 4, 5}));
  r = run_op("GatherND", {x, I64({1, 0}, {2, 1})}, {attr_int("batch_dims", 1)}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_FALSE(run_op("GatherND", {x, I64({0, 2}, {1, 2})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("GatherND", {x, I64({0, 0, 0, 0}, {1, 4})}, {}, 13).is_ok());
}

TEST(GatherScatterOps, ScatterElementsReductions) {
  Tensor x = tensor_of<float>({1, 2, 3, 4, 5}, {1, 5});
  Tensor idx = I64({1, 1}, {1, 2});
  Tensor upd = tensor_of<float>({1.1f, 2.1f}, {1, 2});
  auto r = run_op("ScatterElements", {x, idx, upd}, {attr_int("axis", 1), attr_string("reduction", "add")}, 18);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_FLOAT_EQ(values<float>((*r)[0])[1], 5.2f);
  r = run_op("ScatterElements", {x, idx, upd}, {attr_int("axis", 1), attr_string("reduction", "max")}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_FLOAT_EQ(values<float>((*r)[0])[1], 2.1f);
  r = run_op("ScatterElements", {x, I64({-1}, {1, 1}), tensor_of<float>({9}, {1, 1})}, {attr_int("axis", 1)}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 3, 4, 9}));
  r = run_op("Scatter", {x, I64({0}, {1, 1}), tensor_of<float>({7}, {1, 1})}, {}, 9);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0])[0], 7.f);
  EXPECT_FALSE(
      run_op("ScatterElements", {x, I64({5}, {1, 1}), tensor_of<float>({9}, {1, 1})}, {attr_int("axis", 1)}, 13)
          .is_ok());
  EXPECT_FALSE(run_op("ScatterElements", {x, idx, tensor_of<float>({1}, {1, 1})}, {attr_int("axis", 1)}, 13).is_ok());
  // reduction not in this opset's schema
  EXPECT_FALSE(run_op("ScatterElements", {x, idx, upd}, {attr_string("reduction", "max")}, 16).is_ok());
}

TEST(GatherScatterOps, ScatterND) {
  Tensor x = tensor_of<float>(iota(8), {8});
  auto r = run_op("ScatterND", {x, I64({4, 3, 1, 7}, {4, 1}), tensor_of<float>({9, 10, 11, 12}, {4})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 11, 2, 10, 9, 5, 6, 12}));
  Tensor m = tensor_of<int32_t>({1, 1, 1, 1}, {2, 2});
  r = run_op("ScatterND", {m, I64({1, 1}, {2, 1}), tensor_of<int32_t>({2, 3, 4, 5}, {2, 2})},
             {attr_string("reduction", "mul")}, 16);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 1, 8, 15}));
  EXPECT_FALSE(run_op("ScatterND", {x, I64({8}, {1, 1}), tensor_of<float>({1}, {1})}, {}, 13).is_ok());
  EXPECT_FALSE(run_op("ScatterND", {x, I64({1}, {1, 1}), tensor_of<float>({1, 2}, {2})}, {}, 13).is_ok());
}

TEST(GatherScatterOps, OneHot) {
  Tensor ind = I64({0, -1, 5}, {3});
  auto r = run_op("OneHot", {ind, Tensor::scalar<float>(3.f), tensor_of<int32_t>({0, 1}, {2})}, {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 3}));
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 0, 0, 0, 0, 1, 0, 0, 0}));
  r = run_op("OneHot", {ind, Tensor::scalar<int64_t>(3), tensor_of<float>({0, 1}, {2})}, {attr_int("axis", 0)}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 0, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_FALSE(run_op("OneHot", {ind, Tensor::scalar<int64_t>(3), tensor_of<float>({0}, {1})}, {}, 11).is_ok());
  EXPECT_FALSE(
      run_op("OneHot", {ind, Tensor::scalar<int64_t>(3), tensor_of<float>({0, 1}, {2})}, {attr_int("axis", 2)}, 11)
          .is_ok());
}

TEST(GatherScatterOps, Compress) {
  Tensor x = tensor_of<float>(iota(6), {3, 2});
  auto r = run_op("Compress", {x, tensor_of<bool>({false, true, true}, {3})}, {attr_int("axis", 0)}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{2, 3, 4, 5}));
  r = run_op("Compress", {x, tensor_of<bool>({false, true, false, false, true}, {5})}, {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 4}));
  EXPECT_FALSE(
      run_op("Compress", {x, tensor_of<bool>({false, false, false, true}, {4})}, {attr_int("axis", 0)}, 11).is_ok());
}

TEST(GatherScatterOps, NonZero) {
  auto r = run_op("NonZero", {tensor_of<float>({0, 1, -0.0f, 2}, {2, 2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 1, 1, 1}));
  r = run_op("NonZero", {tensor_of<bool>({false, false}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 0}));
}

TEST(GatherScatterOps, TensorScatter) {
  Tensor past = tensor_of<float>(std::vector<float>(8, 0.f), {2, 4, 1});
  Tensor upd = tensor_of<float>({1, 2, 3, 4}, {2, 2, 1});
  auto r = run_op("TensorScatter", {past, upd, I64({1, 3}, {2})}, {attr_string("mode", "circular")}, 24);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1, 2, 0, 4, 0, 0, 3}));
  r = run_op("TensorScatter", {past, upd}, {}, 24);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 0, 0, 3, 4, 0, 0}));
  EXPECT_FALSE(run_op("TensorScatter", {past, upd, I64({1, 3}, {2})}, {}, 24).is_ok());
}

TEST(GatherScatterOps, DtypeFamilies) {
  std::vector<Float16> h;
  for (float f : {1.f, 2.f, 3.f}) h.push_back(Float16{float_to_half(f)});
  auto r = run_op("Gather", {tensor_of<Float16>(h, {3}), I64({2, 0}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[0].bits), 3.f);
  r = run_op("ScatterND",
             {tensor_of<bool>({false, true, false}, {3}), I64({0, 1}, {2, 1}), tensor_of<bool>({true, false}, {2})},
             {attr_string("reduction", "add")}, 18);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<bool>((*r)[0]), (std::vector<bool>{true, true, false}));
  r = run_op("ScatterElements",
             {tensor_of<std::string>({"a", "b"}, {2}), I64({1}, {1}), tensor_of<std::string>({"z"}, {1})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[1], "z");
  EXPECT_FALSE(run_op("ScatterElements",
                      {tensor_of<std::string>({"a", "b"}, {2}), I64({1}, {1}), tensor_of<std::string>({"z"}, {1})},
                      {attr_string("reduction", "add")}, 18)
                   .is_ok());
  std::vector<Float16> hs;
  for (float f : {1.f, 2.f}) hs.push_back(Float16{float_to_half(f)});
  r = run_op("ScatterElements", {tensor_of<Float16>(hs, {2}), I64({0, 0}, {2}), tensor_of<Float16>(hs, {2})},
             {attr_string("reduction", "mul")}, 18);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(half_to_float((*r)[0].tensor().data<Float16>()[0].bits), 2.f);
  r = run_op("NonZero", {tensor_of<std::string>({"", "x"}, {2})}, {}, 13);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1}));
  r = run_op("Compress", {tensor_of<std::string>({"a", "b", "c"}, {3}), tensor_of<bool>({true, false, true}, {3})}, {},
             11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().string_data()[1], "c");
}

}  // namespace
}  // namespace xonnx
