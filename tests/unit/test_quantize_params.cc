// Bad quantization parameters in input models (runtime/ops/ref/quantize*.cc): scale 0, NaN or
// negative, zero point out of range or of the wrong type, per-axis length mismatch. Stored as
// initializers they fail at session creation (with and without XNNPACK, whose kernels decline
// them); computed at run time they fail on run. Either way the error names the input.
#include <cmath>
#include <limits>
#include <string>

#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

const float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor f32(float v) { return Tensor::scalar<float>(v); }
Tensor u8(int v) { return Tensor::scalar<uint8_t>(static_cast<uint8_t>(v)); }
Tensor i8(int v) { return Tensor::scalar<int8_t>(static_cast<int8_t>(v)); }
Tensor floats(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>(v, {n});
}
Tensor bytes_u8(const Shape& s) { return Tensor::from_vector<uint8_t>(std::vector<uint8_t>(shape_numel(s), 130), s); }
Tensor bytes_i8(const Shape& s) { return Tensor::from_vector<int8_t>(std::vector<int8_t>(shape_numel(s), 3), s); }

// Session creation must fail (with and without XNNPACK) naming `want`.
void expect_creation_error(const std::string& op, const std::vector<In>& in, const std::string& want,
                           const std::vector<Attribute>& attrs = {}, int64_t opset = 13) {
  for (bool no_xnn : {true, false}) {
    auto s = make_session(op, in, attrs, opset, no_xnn);
    ASSERT_FALSE(s.is_ok()) << op << " accepted bad parameters (" << want << "), xnnpack " << !no_xnn;
    const std::string msg = s.status().to_string();
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  }
}

// The same node with every input given at run time: creation succeeds, run fails naming `want`.
void expect_run_error(const std::string& op, std::vector<In> in, const std::string& want,
                      const std::vector<Attribute>& attrs = {}, int64_t opset = 13) {
  for (In& i : in) i.constant = false;
  auto s = make_session(op, in, attrs, opset, false);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  auto r = (*s)->run(runtime_values(in));
  ASSERT_FALSE(r.is_ok()) << op << " ran with bad parameters (" << want << ")";
  const std::string msg = r.status().to_string();
  EXPECT_NE(msg.find(want), std::string::npos) << msg;
}

void expect_ok(const std::string& op, const std::vector<In>& in, const std::vector<Attribute>& attrs = {},
               int64_t opset = 13) {
  auto s = make_session(op, in, attrs, opset, false);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  auto r = (*s)->run(runtime_values(in));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
}

// QLinearConv x [1, 3, 4, 4] uint8, w [5, 3, 1, 1] int8, with the given parameters.
std::vector<In> qconv(Tensor x_scale, Tensor w_scale, Tensor w_zp, Tensor y_scale, Tensor bias = Tensor()) {
  std::vector<In> in = {var(bytes_u8({1, 3, 4, 4})),
                        cst(x_scale),
                        cst(u8(128)),
                        cst(bytes_i8({5, 3, 1, 1})),
                        cst(w_scale),
                        cst(w_zp),
                        cst(y_scale),
                        cst(u8(128))};
  if (bias.defined()) in.push_back(cst(bias));
  return in;
}

TEST(QuantizeParams, QLinearConv) {
  expect_ok("QLinearConv", qconv(f32(0.1f), f32(0.1f), i8(0), f32(0.2f)));
  expect_ok("QLinearConv", qconv(f32(0.1f), floats({1, 2, 3, 4, 5}), i8(0), f32(0.2f)));
  expect_creation_error("QLinearConv", qconv(f32(0.0f), f32(0.1f), i8(0), f32(0.2f)), "x_scale[0] = 0");
  expect_creation_error("QLinearConv", qconv(f32(kNaN), f32(0.1f), i8(0), f32(0.2f)), "x_scale");
  expect_creation_error("QLinearConv", qconv(f32(0.1f), f32(0.1f), i8(0), f32(-1.0f)), "y_scale[0] = -1");
  expect_creation_error("QLinearConv", qconv(f32(0.1f), floats({1, 2, 0, 4, 5}), i8(0), f32(0.2f)), "w_scale[2] = 0");
  expect_creation_error("QLinearConv", qconv(f32(0.1f), floats({1, 2, 3}), i8(0), f32(0.2f)), "w_scale has 3 elements");
  expect_creation_error("QLinearConv", qconv(f32(0.1f), f32(0.1f), u8(0), f32(0.2f)), "w_zero_point has type uint8");
  expect_creation_error("QLinearConv", qconv(f32(0.1f), f32(0.1f), Tensor::from_vector<int8_t>({0, 0}, {2}), f32(0.2f)),
                        "w_zero_point");
  expect_creation_error("QLinearConv",
                        qconv(f32(0.1f), f32(0.1f), i8(0), f32(0.2f), Tensor::from_vector<int32_t>({1, 2}, {2})),
                        "input B must have shape (5)");
  expect_creation_error("QLinearConv", qconv(floats({0.1f, 0.2f}), f32(0.1f), i8(0), f32(0.2f)),
                        "x_scale must be a scalar");
  expect_run_error("QLinearConv", qconv(f32(0.1f), f32(0.1f), i8(0), f32(0.0f)), "y_scale");
  expect_run_error("QLinearConv", qconv(f32(0.1f), floats({1, 2, 3}), i8(0), f32(0.2f)), "w_scale");
}

std::vector<In> qmatmul(Tensor a_scale, Tensor b_scale, Tensor b_zp, Tensor y_scale) {
  return {var(bytes_u8({2, 3})), cst(a_scale), cst(u8(128)), cst(bytes_i8({3, 4})),
          cst(b_scale),          cst(b_zp),    cst(y_scale), cst(u8(128))};
}

TEST(QuantizeParams, QLinearMatMul) {
  expect_ok("QLinearMatMul", qmatmul(f32(0.1f), f32(0.1f), i8(0), f32(0.2f)));
  expect_creation_error("QLinearMatMul", qmatmul(f32(0.1f), f32(0.0f), i8(0), f32(0.2f)), "b_scale[0] = 0");
  expect_creation_error("QLinearMatMul", qmatmul(f32(kNaN), f32(0.1f), i8(0), f32(0.2f)), "a_scale");
  expect_creation_error("QLinearMatMul", qmatmul(f32(0.1f), f32(0.1f), i8(0), f32(-0.5f)), "y_scale");
  expect_creation_error("QLinearMatMul", qmatmul(f32(0.1f), floats({1, 2}), i8(0), f32(0.2f)),
                        "b_scale has 2 elements but there are 4 columns of b");
  expect_creation_error("QLinearMatMul", qmatmul(f32(0.1f), f32(0.1f), u8(1), f32(0.2f)),
                        "b_zero_point has type uint8");
  expect_run_error("QLinearMatMul", qmatmul(f32(0.1f), f32(0.0f), i8(0), f32(0.2f)), "b_scale");
  expect_run_error("QLinearMatMul", qmatmul(f32(0.1f), floats({1, 2}), i8(0), f32(0.2f)), "b_scale");
}

TEST(QuantizeParams, QuantizeLinear) {
  const Tensor x = Tensor::from_vector<float>({0.5f, -1.0f, 2.0f, 3.0f, 0.0f, 1.0f}, {2, 3});
  expect_ok("QuantizeLinear", {var(x), cst(f32(0.1f)), cst(u8(3))});
  expect_creation_error("QuantizeLinear", {var(x), cst(f32(0.0f)), cst(u8(3))}, "y_scale[0] = 0");
  expect_creation_error("QuantizeLinear", {var(x), cst(f32(kNaN)), cst(u8(3))}, "y_scale");
  expect_creation_error("QuantizeLinear",
                        {var(x), cst(floats({1, -2, 1})), cst(Tensor::from_vector<uint8_t>({0, 0, 0}, {3}))},
                        "y_scale[1] = -2");
  expect_run_error("QuantizeLinear", {var(x), cst(f32(0.0f)), cst(u8(3))}, "y_scale");
  // Per-axis length mismatch: axis 1 has 3 elements, the scale 2.
  expect_run_error("QuantizeLinear", {var(x), cst(floats({1, 2})), cst(Tensor::from_vector<uint8_t>({0, 0}, {2}))},
                   "per-axis lengths must match");
}

TEST(QuantizeParams, DequantizeLinear) {
  const Tensor w = Tensor::from_vector<int8_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_ok("DequantizeLinear", {cst(w), cst(floats({0.1f, 0.2f})), cst(Tensor::from_vector<int8_t>({0, 1}, {2}))},
            {attr_int("axis", 0)});
  // Weights' DequantizeLinear: everything constant, so a mismatch fails at creation.
  expect_creation_error("DequantizeLinear",
                        {cst(w), cst(floats({0.1f, 0.2f, 0.3f})), cst(Tensor::from_vector<int8_t>({0, 0, 0}, {3}))},
                        "per-axis lengths must match", {attr_int("axis", 0)});
  expect_creation_error("DequantizeLinear", {cst(w), cst(f32(kNaN)), cst(i8(0))}, "x_scale");
  expect_creation_error("DequantizeLinear", {cst(w), cst(f32(-0.1f)), cst(i8(0))}, "x_scale[0] = -0.1");
  // int32 data takes no zero point (the spec: it must be 0).
  const Tensor acc = Tensor::from_vector<int32_t>({100, -200}, {2});
  expect_ok("DequantizeLinear", {var(acc), cst(f32(0.5f)), cst(Tensor::scalar<int32_t>(0))});
  expect_creation_error("DequantizeLinear", {var(acc), cst(f32(0.5f)), cst(Tensor::scalar<int32_t>(7))},
                        "x_zero_point[0] = 7 is out of range");
  expect_run_error("DequantizeLinear", {var(acc), cst(f32(0.5f)), cst(Tensor::scalar<int32_t>(7))}, "x_zero_point");
  expect_run_error("DequantizeLinear", {var(w), cst(f32(kNaN)), cst(i8(0))}, "x_scale");
}

}  // namespace
}  // namespace xonnx
