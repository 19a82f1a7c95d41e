// Reference kernels for ONNX Runtime's quantized element-wise contrib ops (com.microsoft, since 1):
//   QLinearAdd: C = (A_scale * (A - A_zp) + B_scale * (B - B_zp)) / C_scale + C_zp
//   QLinearMul: C = (A_scale * (A - A_zp) * B_scale * (B - B_zp)) / C_scale + C_zp
// A, B, C and the zero points are all int8 or all uint8; scales are float scalars (also accepted
// as 1-element 1-D tensors); absent zero points are 0; A and B broadcast numpy-style.
//
// The arithmetic is exactly the float32 composition DequantizeLinear -> Add/Mul ->
// QuantizeLinear (ref/quantize.cc: round half to even, saturate), so fusing that QDQ pattern
// into these ops (runtime/passes/qdq_fusion.cc) does not change a single result.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "runtime/ops/ref/broadcast.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

constexpr const char* kMs = "com.microsoft";

// Input positions and names of the spec.
constexpr size_t kA = 0, kB = 3;
struct ParamSlot {
  size_t scale, zero_point;
  const char* scale_name;
  const char* zp_name;
};
constexpr std::array<ParamSlot, 3> kParams = {
    {{1, 2, "A_scale", "A_zero_point"}, {4, 5, "B_scale", "B_zero_point"}, {6, 7, "C_scale", "C_zero_point"}}};

bool is_scalar_like(const Tensor& t) { return t.numel() == 1 && t.rank() <= 1; }

// A per-tensor scale: float32, one element, positive and finite.
Result<float> read_scale(const Tensor& t, const char* name) {
  if (!t.defined()) return invalid_argument("input ", name, " must be a tensor");
  if (t.dtype() != DataType::kFloat) {
    return invalid_argument("input ", name, " must be float32, got ", dtype_name(t.dtype()));
  }
  if (!is_scalar_like(t)) {
    return invalid_argument("input ", name, " must be a scalar (per-tensor quantization), got shape ",
                            shape_to_string(t.shape()));
  }
  const float s = t.data<float>()[0];
  if (!(s > 0.0f) || std::isinf(s)) {
    return invalid_argument("input ", name, " = ", s, " is invalid: scales must be positive and finite");
  }
  return s;
}

// A per-tensor zero point: an 8-bit scalar of the data type `type` (if known; `type_from` names
// the input that type was taken from).
Status check_zero_point(const Tensor& t, const char* name, DataType type, const char* type_from) {
  if (!t.defined()) return invalid_argument("input ", name, " must be a tensor");
  if (!dtype_is_8bit_int(t.dtype())) {
    return invalid_argument("input ", name, " must be int8 or uint8, got ", dtype_name(t.dtype()));
  }
  if (type_from && t.dtype() != type) {
    return invalid_argument("input ", name, " has type ", dtype_name(t.dtype()), " but ", type_from, " has type ",
                            dtype_name(type), "; they must match");
  }
  if (!is_scalar_like(t)) {
    return invalid_argument("input ", name, " must be a scalar (per-tensor quantization), got shape ",
                            shape_to_string(t.shape()));
  }
  return Status::ok();
}

struct QParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Session-creation checks of the constant scales and zero points, so a bad quantized model
// fails when it is loaded, naming the input. Computed ones are checked on every run.
Status check_constant_params(const KernelInit& init) {
  DataType type = DataType::kUint8;
  const char* type_from = nullptr;
  if (const Tensor* a = init.has_input(kA) ? init.constant_input(kA) : nullptr) {
    type = a->dtype();
    if (dtype_is_8bit_int(type)) type_from = "A";
  }
  for (const ParamSlot& p : kParams) {
    if (const Tensor* s = init.constant_input(p.scale)) {
      XONNX_RETURN_IF_ERROR(read_scale(*s, p.scale_name).status());
    }
    const Tensor* zp = init.has_input(p.zero_point) ? init.constant_input(p.zero_point) : nullptr;
    if (!zp) continue;
    XONNX_RETURN_IF_ERROR(check_zero_point(*zp, p.zp_name, type, type_from));
    if (!type_from) {  // the zero points must also agree with each other
      type = zp->dtype();
      type_from = p.zp_name;
    }
  }
  return Status::ok();
}

// Reads and validates the three (scale, zero point) pairs for data of `type`.
Result<std::array<QParams, 3>> read_params(KernelContext& ctx, DataType type) {
  std::array<QParams, 3> q;
  for (size_t k = 0; k < kParams.size(); ++k) {
    const ParamSlot& p = kParams[k];
    XONNX_ASSIGN_OR_RETURN(q[k].scale, read_scale(ctx.input(p.scale), p.scale_name));
    if (!ctx.has_input(p.zero_point)) continue;
    const Tensor& zp = ctx.input(p.zero_point);
    XONNX_RETURN_IF_ERROR(check_zero_point(zp, p.zp_name, type, "A"));
    q[k].zero_point = static_cast<int32_t>(zp.get_as_int64(0));
  }
  return q;
}

// Every 8-bit code dequantized, indexed by the code's byte: (x - zp) * scale in float32, as
// DequantizeLinear computes it.
template <typename T>
std::array<float, 256> dequantize_table(const QParams& q) {
  std::array<float, 256> t{};
  for (int v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v) {
    t[static_cast<uint8_t>(static_cast<T>(v))] = static_cast<float>(v - q.zero_point) * q.scale;
  }
  return t;
}

// QuantizeLinear of one float: x / scale, round half to even, + zero point, saturate; NaN -> zp.
template <typename T>
T quantize(float x, const QParams& q) {
  double r = std::nearbyint(static_cast<double>(x / q.scale));
  if (std::isnan(r)) r = 0.0;
  r += q.zero_point;
  r = std::min(std::max(r, static_cast<double>(std::numeric_limits<T>::min())),
               static_cast<double>(std::numeric_limits<T>::max()));
  return static_cast<T>(r);
}

enum class BinaryOp { kAdd, kMul };

template <typename T, BinaryOp kOp>
void compute(const Tensor& a, const Tensor& b, const std::array<QParams, 3>& q, const ref::BroadcastPlan<2>& plan,
             Tensor* c) {
  const std::array<float, 256> ta = dequantize_table<T>(q[0]);
  const std::array<float, 256> tb = dequantize_table<T>(q[1]);
  const QParams qc = q[2];
  ref::apply_binary(a.data<T>(), b.data<T>(), c->data<T>(), plan, [&](T x, T y) -> T {
    const float fx = ta[static_cast<uint8_t>(x)], fy = tb[static_cast<uint8_t>(y)];
    return quantize<T>(kOp == BinaryOp::kAdd ? fx + fy : fx * fy, qc);
  });
}

template <BinaryOp kOp>
Status run_qlinear_binary(KernelContext& ctx) {
  XONNX_ASSIGN_OR_RETURN(const Tensor* a, ref::tensor_input(ctx, kA, "A"));
  XONNX_ASSIGN_OR_RETURN(const Tensor* b, ref::tensor_input(ctx, kB, "B"));
  const DataType type = a->dtype();
  if (!dtype_is_8bit_int(type)) return invalid_argument("input A must be int8 or uint8, got ", dtype_name(type));
  if (b->dtype() != type) {
    return invalid_argument("input B has type ", dtype_name(b->dtype()), " but A has type ", dtype_name(type),
                            "; they must match");
  }
  XONNX_ASSIGN_OR_RETURN(auto q, read_params(ctx, type));
  Result<Shape> out_shape = ref::broadcast_shapes(a->shape(), b->shape());
  if (!out_shape.is_ok()) return out_shape.status().with_context("inputs A and B: ");
  const ref::BroadcastPlan<2> plan = ref::make_broadcast_plan<2>(*out_shape, {&a->shape(), &b->shape()});
  XONNX_ASSIGN_OR_RETURN(Tensor * c, ctx.allocate_output_uninitialized(0, type, *out_shape));
  if (type == DataType::kInt8) {
    compute<int8_t, kOp>(*a, *b, q, plan, c);
  } else {
    compute<uint8_t, kOp>(*a, *b, q, plan, c);
  }
  return Status::ok();
}

template <BinaryOp kOp>
Result<std::unique_ptr<Kernel>> create_qlinear_binary(const KernelInit& init) {
  XONNX_RETURN_IF_ERROR(check_constant_params(init));
  return make_kernel([](KernelContext& ctx) -> Status { return run_qlinear_binary<kOp>(ctx); });
}

}  // namespace

void register_qlinear_binary_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, kMs, "QLinearAdd", 1, kLatestVersion, create_qlinear_binary<BinaryOp::kAdd>);
  XONNX_REGISTER(registry, kMs, "QLinearMul", 1, kLatestVersion, create_qlinear_binary<BinaryOp::kMul>);
}

}  // namespace xonnx
