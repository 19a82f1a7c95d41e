// XNNPACK MaxPool / AveragePool / GlobalAveragePool vs the reference kernels.
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

void pool(const std::string& op, const Shape& x, std::vector<Attribute> attrs, const std::string& what,
          bool expect_fast = true, int64_t opset = 19) {
  diff_test(op, {var(rand_tensor(x, 11))}, attrs, opset, expect_fast, what);
}

TEST(XnnpackPool, MaxPoolGeometries) {
  for (int64_t c : {1, 3, 13, 127, 128}) {
    const std::string cs = " c " + std::to_string(c);
    pool("MaxPool", {1, c, 8, 8}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, "2x2 s2" + cs);
    pool("MaxPool", {2, c, 13, 11},
         {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1})},
         "3x3 s2 p1" + cs);
  }
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}),
                                   attr_int("ceil_mode", 1)}, "ceil_mode");
  pool("MaxPool", {1, 3, 12, 13}, {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {2, 3}),
                                   attr_ints("pads", {1, 0, 0, 1}), attr_int("ceil_mode", 1)}, "ceil_mode pads");
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2})}, "dilated");
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2}),
                                   attr_ints("pads", {1, 1, 1, 1})}, "dilated + pads (reference)", false);
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t s : {1, 2, 3}) {
      pool("MaxPool", {1, 5, 7, 8}, {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {s, s}),
                                     attr_string("auto_pad", ap)}, std::string(ap) + " s" + std::to_string(s));
    }
  }
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {1, 1}), attr_ints("strides", {2, 2})}, "1x1", false);
  pool("MaxPool", {1, 3, 13}, {attr_ints("kernel_shape", {3})}, "1-D", false);
  pool("MaxPool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {3, 3})}, "opset 8", true, 8);
}

TEST(XnnpackPool, MaxPoolIndicesDeclined) {
  auto s = make_session("MaxPool", {var(rand_tensor({1, 3, 6, 6}, 1))}, {attr_ints("kernel_shape", {2, 2})}, 12,
                        false, 2);
  ASSERT_TRUE(s.is_ok());
  const uint64_t before = xnn::run_count();
  auto out = (*s)->run({rand_tensor({1, 3, 6, 6}, 1)});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(xnn::run_count(), before);
}

TEST(XnnpackPool, AveragePool) {
  for (int64_t cip : {0, 1}) {
    const std::string cs = " cip " + std::to_string(cip);
    for (int64_t c : {1, 3, 13, 127, 128}) {
      pool("AveragePool", {2, c, 9, 10},
           {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}), attr_ints("pads", {1, 1, 1, 1}),
            attr_int("count_include_pad", cip)},
           "3x3 s2 p1 c " + std::to_string(c) + cs);
    }
    pool("AveragePool", {1, 3, 13, 13}, {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}),
                                         attr_int("ceil_mode", 1), attr_int("count_include_pad", cip)},
         "ceil" + cs);
    pool("AveragePool", {1, 3, 12, 11}, {attr_ints("kernel_shape", {3, 2}), attr_ints("strides", {2, 2}),
                                         attr_ints("pads", {1, 0, 2, 1}), attr_int("ceil_mode", 1),
                                         attr_int("count_include_pad", cip)},
         "ceil asymmetric pads" + cs);
    for (const char* ap : {"SAME_UPPER", "SAME_LOWER"}) {
      pool("AveragePool", {1, 4, 7, 8}, {attr_ints("kernel_shape", {3, 3}), attr_ints("strides", {2, 2}),
                                         attr_string("auto_pad", ap), attr_int("count_include_pad", cip)},
           std::string(ap) + cs);
    }
  }
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {2, 2}), attr_ints("strides", {2, 2})}, "2x2 s2");
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {3, 3}), attr_ints("dilations", {2, 2})}, "dilated",
       false);
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {1, 1})}, "1x1", false);
  pool("AveragePool", {1, 3, 8, 8}, {attr_ints("kernel_shape", {3, 3}), attr_ints("pads", {1, 1, 1, 1})},
       "opset 7", true, 7);
}

TEST(XnnpackPool, GlobalAveragePool) {
  for (int64_t c : {1, 3, 13, 127, 128}) {
    pool("GlobalAveragePool", {2, c, 7, 5}, {}, "4-D c " + std::to_string(c));
  }
  pool("GlobalAveragePool", {2, 3, 1, 1}, {}, "1x1");
  pool("GlobalAveragePool", {2, 3, 9}, {}, "3-D");
  pool("GlobalAveragePool", {1, 3, 2, 3, 4}, {}, "5-D");
  pool("GlobalAveragePool", {1, 64, 56, 56}, {}, "large");
}

}  // namespace
}  // namespace xonnx
