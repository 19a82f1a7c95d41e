// XNNPACK kernels for ORT's com.microsoft QLinearAdd / QLinearMul (int8 via *_nd_qs8, uint8 via
// *_nd_qu8, numpy broadcasting up to 6-D): the residual Adds of quantized CNNs, whether the model
// came in QOperator format or the QDQ fusion pass (runtime/passes/qdq_fusion.cc) made them.
//
// Scales and zero points must be constants (the operator bakes them in at session creation);
// XNNPACK refuses scale ratios outside its fixed-point range, which declines the node. XNNPACK
// requantizes in fixed point / fp32, so a result may differ from the reference kernel (exact
// float32 DQ -> op -> Q) by 1 in the last integer step.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/quant_params.h"
#include "runtime/ops/registry.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"

namespace xonnx {
namespace xnn {
namespace {

constexpr const char* kMs = "com.microsoft";

// One (scale, zero point) pair of the node, read from constants.
struct ConstParam {
  float scale = 1.0f;
  int32_t zero_point = 0;
  bool has_zero_point = false;
  DataType zp_type = DataType::kUint8;
};

Result<ConstParam> const_param(const KernelInit& init, size_t scale_at, size_t zp_at, const char* name) {
  ConstParam p;
  const std::string what = std::string("XNNPACK QLinear binary: ") + name;
  for (size_t i : {scale_at, zp_at}) {  // scalars or 1-element 1-D, as the reference kernel takes
    const Tensor* t = init.has_input(i) ? init.constant_input(i) : nullptr;
    if (t && t->rank() > 1) return unsupported(what, " parameters must be scalars");
  }
  XONNX_ASSIGN_OR_RETURN(p.scale, constant_scale(init, scale_at, (what + " scale").c_str()));
  if (!init.has_input(zp_at)) return p;
  XONNX_ASSIGN_OR_RETURN(p.zero_point, constant_zero_point(init, zp_at, (what + " zero point").c_str(), &p.zp_type));
  p.has_zero_point = true;
  return p;
}

using CreateQs8 = xnn_status (*)(int8_t, float, int8_t, float, int8_t, float, int8_t, int8_t, uint32_t,
                                 xnn_operator_t*);
using CreateQu8 = xnn_status (*)(uint8_t, float, uint8_t, float, uint8_t, float, uint8_t, uint8_t, uint32_t,
                                 xnn_operator_t*);
using SetupQs8 = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const int8_t*,
                                const int8_t*, int8_t*, pthreadpool_t);
using SetupQu8 = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const uint8_t*,
                                const uint8_t*, uint8_t*, pthreadpool_t);

struct BinaryFns {
  CreateQs8 create_qs8;
  SetupQs8 setup_qs8;
  CreateQu8 create_qu8;
  SetupQu8 setup_qu8;
};

constexpr BinaryFns kAddFns = {xnn_create_add_nd_qs8, xnn_setup_add_nd_qs8, xnn_create_add_nd_qu8,
                               xnn_setup_add_nd_qu8};
constexpr BinaryFns kMulFns = {xnn_create_multiply_nd_qs8, xnn_setup_multiply_nd_qs8, xnn_create_multiply_nd_qu8,
                               xnn_setup_multiply_nd_qu8};

class QLinearBinaryKernel final : public FastKernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, const BinaryFns& fns) {
    auto k = std::unique_ptr<QLinearBinaryKernel>(new QLinearBinaryKernel());
    XONNX_RETURN_IF_ERROR(init_xnn_kernel(*k, init));  // a bad constant fails here, in the reference factory
    k->fns_ = fns;
    XONNX_ASSIGN_OR_RETURN(ConstParam a, const_param(init, 1, 2, "A"));
    XONNX_ASSIGN_OR_RETURN(ConstParam b, const_param(init, 4, 5, "B"));
    XONNX_ASSIGN_OR_RETURN(ConstParam c, const_param(init, 6, 7, "C"));
    // The data type follows the zero points; with none given, A decides at run time, so both
    // operators are made (zero points 0).
    bool want[2] = {true, true};  // [0]: int8, [1]: uint8
    for (const ConstParam* p : {&a, &b, &c}) {
      if (!p->has_zero_point) continue;
      want[p->zp_type == DataType::kInt8 ? 1 : 0] = false;
    }
    if (!want[0] && !want[1]) return unsupported("XNNPACK QLinear binary: zero points of mixed types");
    if (want[0]) {
      XONNX_RETURN_IF_ERROR(
          check(fns.create_qs8(static_cast<int8_t>(a.zero_point), a.scale, static_cast<int8_t>(b.zero_point), b.scale,
                               static_cast<int8_t>(c.zero_point), c.scale, -128, 127, 0, k->op_[0].replace()),
                "xnn_create_*_nd_qs8"));
    }
    if (want[1]) {
      XONNX_RETURN_IF_ERROR(
          check(fns.create_qu8(static_cast<uint8_t>(a.zero_point), a.scale, static_cast<uint8_t>(b.zero_point), b.scale,
                               static_cast<uint8_t>(c.zero_point), c.scale, 0, 255, 0, k->op_[1].replace()),
                "xnn_create_*_nd_qu8"));
    }
    return std::unique_ptr<Kernel>(std::move(k));
  }

 private:
  Status run_fast(KernelContext& ctx, bool& handled) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    if (!a.defined() || !b.defined() || a.dtype() != b.dtype()) return Status::ok();
    const bool is_signed = a.dtype() == DataType::kInt8;
    if (!is_signed && a.dtype() != DataType::kUint8) return Status::ok();
    const Operator& op = op_[is_signed ? 0 : 1];
    if (!op) return Status::ok();
    BroadcastDims d;
    if (!broadcast_dims(a, b, d)) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, a.dtype(), d.out));
    const uint8_t* pa = readable_bytes(a, scratch_a_);
    const uint8_t* pb = readable_bytes(b, scratch_b_);
    pthreadpool_t tp = pool_for(*pool_, double(y->numel()));
    xnn_status s;
    if (is_signed) {
      s = fns_.setup_qs8(op.get(), d.rank_a, d.a, d.rank_b, d.b, reinterpret_cast<const int8_t*>(pa),
                         reinterpret_cast<const int8_t*>(pb), y->data<int8_t>(), tp);
    } else {
      s = fns_.setup_qu8(op.get(), d.rank_a, d.a, d.rank_b, d.b, pa, pb, y->data<uint8_t>(), tp);
    }
    XONNX_RETURN_IF_ERROR(check(s, "xnn_setup_*_nd_q*8"));
    XONNX_RETURN_IF_ERROR(op.run(tp));
    handled = true;
    return Status::ok();
  }

  BinaryFns fns_{};
  Operator op_[2];  // [0]: int8 (qs8), [1]: uint8 (qu8); empty when the zero points rule it out
  Buffer scratch_a_, scratch_b_;
};

Result<std::unique_ptr<Kernel>> create_qlinear_add(const KernelInit& init) {
  return QLinearBinaryKernel::create(init, kAddFns);
}
Result<std::unique_ptr<Kernel>> create_qlinear_mul(const KernelInit& init) {
  return QLinearBinaryKernel::create(init, kMulFns);
}

}  // namespace

void register_xnnpack_qlinear_binary(OpRegistry& registry) {
  XONNX_REGISTER(registry, kMs, "QLinearAdd", 1, kLatestVersion, create_qlinear_add, Backend::kXnnpack);
  XONNX_REGISTER(registry, kMs, "QLinearMul", 1, kLatestVersion, create_qlinear_mul, Backend::kXnnpack);
}

}  // namespace xnn
}  // namespace xonnx
