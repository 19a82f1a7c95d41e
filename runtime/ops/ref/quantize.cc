// Reference kernels: quantize family. QuantizeLinear / DequantizeLinear (10..23+),
// DynamicQuantizeLinear (11). The integer ops (QLinearMatMul, MatMulInteger, ConvInteger,
// QLinearConv) live in qlinear.cc.
//
// Semantics follow the ONNX spec and reference evaluator (op_quantize_linear.py,
// op_dequantize_linear.py): per-tensor, per-axis and blocked scales; rounding half to even;
// saturation to the target range; float8 with `saturate`; int4/uint4/int2/uint2/float4 packed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/quantize_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

bool is_float8(DataType t) {
  return t == DataType::kFloat8E4M3FN || t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2 ||
         t == DataType::kFloat8E5M2FNUZ;
}

// Integer range of a quantized integer type; false for other types.
bool int_range(DataType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case DataType::kUint8:
      *lo = 0;
      *hi = 255;
      return true;
    case DataType::kInt8:
      *lo = -128;
      *hi = 127;
      return true;
    case DataType::kUint16:
      *lo = 0;
      *hi = 65535;
      return true;
    case DataType::kInt16:
      *lo = -32768;
      *hi = 32767;
      return true;
    case DataType::kUint4:
      *lo = 0;
      *hi = 15;
      return true;
    case DataType::kInt4:
      *lo = -8;
      *hi = 7;
      return true;
    case DataType::kUint2:
      *lo = 0;
      *hi = 3;
      return true;
    case DataType::kInt2:
      *lo = -2;
      *hi = 1;
      return true;
    default: return false;
  }
}

bool is_quant_output_type(DataType t) {
  int64_t lo, hi;
  return int_range(t, &lo, &hi) || is_float8(t) || t == DataType::kFloat4E2M1;
}

// How an element of x finds its scale / zero point.
struct QuantLayout {
  enum Kind { kPerTensor, kPerAxis, kBlocked } kind = kPerTensor;
  int64_t axis_len = 1;  // x.dim(axis)
  int64_t inner = 1;     // product of x dims after axis
  int64_t block = 0;
  int64_t scale_axis_len = 1;  // blocked: scale.dim(axis)

  int64_t param_index(int64_t i) const {
    switch (kind) {
      case kPerTensor: return 0;
      case kPerAxis: return (i / inner) % axis_len;
      case kBlocked: {
        const int64_t o = i / (axis_len * inner);
        const int64_t a = (i / inner) % axis_len;
        const int64_t in = i % inner;
        return (o * scale_axis_len + a / block) * inner + in;
      }
    }
    return 0;
  }
};

// Resolves the quantization granularity from the scale's shape (spec: scalar -> per-tensor,
// 1-D -> per-axis, same rank as x -> blocked) and checks the zero point matches it.
Result<QuantLayout> resolve_layout(const Tensor& x, const Tensor& scale, const Tensor* zp, int64_t axis_attr,
                                   int64_t block_size, int version, const char* scale_name, const char* zp_name) {
  QuantLayout l;
  const int64_t rank = static_cast<int64_t>(x.rank());
  auto per_tensor = [](const Tensor& t) { return t.numel() == 1 && t.rank() <= 1; };
  if (zp != nullptr && zp->shape() != scale.shape() && !(per_tensor(*zp) && per_tensor(scale))) {
    return invalid_argument("input ", zp_name, " has shape ", shape_to_string(zp->shape()), " but ", scale_name,
                            " has shape ", shape_to_string(scale.shape()), "; they must match");
  }
  if (scale.numel() == 0) return invalid_argument("input ", scale_name, " is empty");
  if (block_size < 0) return invalid_argument("block_size must be >= 0, got ", block_size);
  if (per_tensor(scale)) return l;
  if (block_size == 0) {
    if (scale.rank() != 1) {
      return invalid_argument("input ", scale_name, " must be a scalar or 1-D (per-axis) tensor, got shape ",
                              shape_to_string(scale.shape()),
                              version >= 21 ? " (blocked quantization needs block_size > 0)" : "");
    }
    if (version < 13) {
      return invalid_argument("input ", scale_name, " must be a scalar before opset 13, got shape ",
                              shape_to_string(scale.shape()));
    }
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank, "axis"));
    if (scale.dim(0) != x.dim(axis)) {
      return invalid_argument("input ", scale_name, " has ", scale.dim(0), " elements but x has ", x.dim(axis),
                              " along axis ", axis, " (per-axis lengths must match)");
    }
    l.kind = QuantLayout::kPerAxis;
    l.axis_len = x.dim(axis);
    for (int64_t d = axis + 1; d < rank; ++d) l.inner *= x.dim(d);
    return l;
  }
  if (version < 21) return invalid_argument("block_size is only valid from opset 21");
  if (static_cast<int64_t>(scale.rank()) != rank) {
    return invalid_argument("blocked quantization: input ", scale_name, " must have the rank of x (", rank,
                            "), got shape ", shape_to_string(scale.shape()));
  }
  XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank, "axis"));
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t want = d != axis ? x.dim(d) : x.dim(d) == 0 ? 0 : (x.dim(d) - 1) / block_size + 1;
    if (scale.dim(d) != want) {
      return invalid_argument("blocked quantization: input ", scale_name, " has shape ", shape_to_string(scale.shape()),
                              " but x ", shape_to_string(x.shape()), " with axis ", axis, " and block_size ",
                              block_size, " needs ", want, " along dimension ", d);
    }
  }
  l.kind = QuantLayout::kBlocked;
  l.axis_len = x.dim(axis);
  for (int64_t d = axis + 1; d < rank; ++d) l.inner *= x.dim(d);
  l.block = block_size;
  l.scale_axis_len = scale.dim(axis);
  return l;
}

bool is_scale_type(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat8E8M0 ||
         t == DataType::kInt32 || t == DataType::kDouble;
}

// Scales as doubles; `strict` rejects zero (division) in addition to NaN/Inf/negative.
Result<std::vector<double>> read_scales(const Tensor& scale, const char* name, bool strict) {
  if (!is_scale_type(scale.dtype())) {
    return invalid_argument("input ", name, " has unsupported type ", dtype_name(scale.dtype()));
  }
  std::vector<double> v(static_cast<size_t>(scale.numel()));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = scale.get_as_double(static_cast<int64_t>(i));
    if (std::isnan(v[i]) || std::isinf(v[i]) || v[i] < 0.0 || (strict && v[i] == 0.0)) {
      return invalid_argument("input ", name, "[", i, "] = ", v[i], " is invalid: scales must be ",
                              strict ? "positive" : "non-negative", " and finite");
    }
  }
  return v;
}

const Tensor* const_input(const KernelInit& init, size_t i) {
  return init.has_input(i) ? init.constant_input(i) : nullptr;
}

// Session-creation checks of constant parameters (weights' DequantizeLinear has all inputs
// constant): bad scales and per-axis length mismatches fail when the model is loaded, with the
// input named, instead of on the first run. Computed parameters are checked at run time.
Status check_constant_params(const KernelInit& init, int64_t axis, int64_t block_size, bool quantize) {
  const char* scale_name = quantize ? "y_scale" : "x_scale";
  const char* zp_name = quantize ? "y_zero_point" : "x_zero_point";
  const Tensor* scale = const_input(init, 1);
  if (!scale) return Status::ok();
  XONNX_RETURN_IF_ERROR(read_scales(*scale, scale_name, quantize).status());
  const Tensor* x = const_input(init, 0);
  const Tensor* zp = const_input(init, 2);
  if (x && (zp || !init.has_input(2))) {
    XONNX_RETURN_IF_ERROR(
        resolve_layout(*x, *scale, zp, axis, block_size, init.since_version(), scale_name, zp_name).status());
  }
  return Status::ok();
}

// int32 data has no zero point in DequantizeLinear (the spec: it is supposed to be 0).
Status check_int32_zero_point(const Tensor& zp) {
  if (zp.dtype() != DataType::kInt32) return Status::ok();
  for (int64_t i = 0; i < zp.numel(); ++i) {
    if (zp.get_as_int64(i) != 0) {
      return invalid_argument("input x_zero_point[", i, "] = ", zp.get_as_int64(i),
                              " is out of range: int32 data takes no zero point (it must be 0)");
    }
  }
  return Status::ok();
}

// Rounds a float to the storage precision of `t` (fp16/bf16), identity otherwise.
float round_to(DataType t, float v) {
  if (t == DataType::kFloat16) return half_to_float(float_to_half(v));
  if (t == DataType::kBFloat16) return bfloat16_to_float(float_to_bfloat16(v));
  return v;
}

struct QuantizeAttrs {
  int version = 0;
  int64_t axis = 1;
  bool saturate = true;
  int64_t block_size = 0;
  int64_t output_dtype = 0;
  int64_t precision = 0;
};

Status run_quantize(KernelContext& ctx, const QuantizeAttrs& a) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const bool has_zp = ctx.has_input(2);
  const Tensor* zp = has_zp ? &ctx.input(2) : nullptr;
  const DataType xt = x.dtype();
  if (!(xt == DataType::kFloat || xt == DataType::kFloat16 || xt == DataType::kBFloat16 || xt == DataType::kInt32 ||
        xt == DataType::kDouble)) {
    return invalid_argument("input x has unsupported type ", dtype_name(xt));
  }
  DataType out_t = DataType::kUint8;
  if (has_zp) {
    out_t = zp->dtype();
    if (a.output_dtype != 0 && static_cast<int64_t>(out_t) != a.output_dtype) {
      return invalid_argument("output_dtype ", dtype_name(static_cast<DataType>(a.output_dtype)),
                              " does not match the type of input y_zero_point (", dtype_name(out_t), ")");
    }
  } else if (a.output_dtype != 0) {
    out_t = static_cast<DataType>(a.output_dtype);
  }
  if (!is_quant_output_type(out_t)) {
    return invalid_argument("unsupported quantized type ", dtype_name(out_t));
  }
  XONNX_ASSIGN_OR_RETURN(QuantLayout l,
                         resolve_layout(x, scale, zp, a.axis, a.block_size, a.version, "y_scale", "y_zero_point"));
  XONNX_ASSIGN_OR_RETURN(std::vector<double> scales, read_scales(scale, "y_scale", true));
  std::vector<double> zps(scales.size(), 0.0);
  if (has_zp) {
    for (size_t i = 0; i < zps.size(); ++i) zps[i] = zp->get_as_double(static_cast<int64_t>(i));
  }
  // Precision of x / y_scale: the `precision` attribute, else numpy promotion of the two types.
  DataType div_t = DataType::kFloat;
  if (a.precision != 0) {
    div_t = static_cast<DataType>(a.precision);
  } else if (xt == DataType::kInt32 || scale.dtype() == DataType::kInt32 || xt == DataType::kDouble ||
             scale.dtype() == DataType::kDouble) {
    div_t = DataType::kDouble;
  } else if (xt == scale.dtype() && (xt == DataType::kFloat16 || xt == DataType::kBFloat16)) {
    div_t = xt;
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_t, x.shape()));
  const int64_t n = x.numel();
  int64_t qlo = 0, qhi = 0;
  const bool is_int = int_range(out_t, &qlo, &qhi);
  void* out = y->raw_data();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pi = l.param_index(i);
    double q;
    if (div_t == DataType::kDouble) {
      q = x.get_as_double(i) / scales[pi];
    } else {
      const float xv = round_to(div_t, static_cast<float>(x.get_as_double(i)));
      const float sv = round_to(div_t, static_cast<float>(scales[pi]));
      q = round_to(div_t, xv / sv);
    }
    if (is_int) {
      double r = std::nearbyint(q);  // round half to even
      if (std::isnan(r)) r = 0.0;
      r += zps[pi];
      const int64_t v = static_cast<int64_t>(std::min(std::max(r, static_cast<double>(qlo)), static_cast<double>(qhi)));
      switch (out_t) {
        case DataType::kUint8: static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v); break;
        case DataType::kInt8: static_cast<int8_t*>(out)[i] = static_cast<int8_t>(v); break;
        case DataType::kUint16: static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(v); break;
        case DataType::kInt16: static_cast<int16_t*>(out)[i] = static_cast<int16_t>(v); break;
        default: subbyte_set(out, out_t, i, static_cast<uint8_t>(v & 0xf)); break;
      }
    } else if (out_t == DataType::kFloat4E2M1) {
      // The reference adds the (float4) zero point, which also turns -0 into +0.
      subbyte_set(out, out_t, i, float_to_float4e2m1(static_cast<float>(q + zps[pi])));
    } else {
      float v = static_cast<float>(q);
      if (zps[pi] != 0.0) v += static_cast<float>(zps[pi]);
      static_cast<uint8_t*>(out)[i] = float_to_float8(out_t, v, a.saturate);
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_quantize_linear(const KernelInit& init) {
  QuantizeAttrs a;
  a.version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(a.axis, init.get_int("axis", 1));
  XONNX_ASSIGN_OR_RETURN(int64_t sat, init.get_int("saturate", 1));
  a.saturate = sat != 0;
  if (a.version >= 21) {
    XONNX_ASSIGN_OR_RETURN(a.block_size, init.get_int("block_size", 0));
    XONNX_ASSIGN_OR_RETURN(a.output_dtype, init.get_int("output_dtype", 0));
    if (a.output_dtype != 0 && (!dtype_is_known(static_cast<int32_t>(a.output_dtype)) ||
                                !is_quant_output_type(static_cast<DataType>(a.output_dtype)))) {
      return invalid_argument("output_dtype ", a.output_dtype, " is not a supported quantized type");
    }
  }
  if (a.version >= 23) {
    XONNX_ASSIGN_OR_RETURN(a.precision, init.get_int("precision", 0));
    if (a.precision != 0 && a.precision != static_cast<int64_t>(DataType::kFloat) &&
        a.precision != static_cast<int64_t>(DataType::kFloat16) &&
        a.precision != static_cast<int64_t>(DataType::kBFloat16) &&
        a.precision != static_cast<int64_t>(DataType::kDouble)) {
      return invalid_argument("precision ", a.precision, " must be a float type (float, float16, bfloat16)");
    }
  }
  if (a.block_size < 0) return invalid_argument("block_size must be >= 0, got ", a.block_size);
  XONNX_RETURN_IF_ERROR(check_constant_params(init, a.axis, a.block_size, true));
  return make_kernel([a](KernelContext& ctx) -> Status { return run_quantize(ctx, a); });
}

struct DequantizeAttrs {
  int version = 0;
  int64_t axis = 1;
  int64_t block_size = 0;
  int64_t output_dtype = 0;
};

bool is_dequant_input_type(DataType t) {
  int64_t lo, hi;
  return int_range(t, &lo, &hi) || is_float8(t) || t == DataType::kFloat4E2M1 || t == DataType::kInt32;
}

Status run_dequantize(KernelContext& ctx, const DequantizeAttrs& a) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const bool has_zp = ctx.has_input(2);
  const Tensor* zp = has_zp ? &ctx.input(2) : nullptr;
  if (!is_dequant_input_type(x.dtype()))
    return invalid_argument("input x has unsupported type ", dtype_name(x.dtype()));
  if (has_zp && zp->dtype() != x.dtype()) {
    return invalid_argument("input x_zero_point has type ", dtype_name(zp->dtype()), " but x has type ",
                            dtype_name(x.dtype()), "; they must match");
  }
  if (has_zp) {
    XONNX_RETURN_IF_ERROR(check_int32_zero_point(*zp));
  }
  DataType out_t = a.output_dtype != 0 ? static_cast<DataType>(a.output_dtype) : scale.dtype();
  if (out_t == DataType::kFloat8E8M0) out_t = DataType::kFloat;
  if (!(out_t == DataType::kFloat || out_t == DataType::kFloat16 || out_t == DataType::kBFloat16 ||
        out_t == DataType::kDouble)) {
    return invalid_argument("unsupported output type ", dtype_name(out_t), " (x_scale type ", dtype_name(scale.dtype()),
                            ")");
  }
  XONNX_ASSIGN_OR_RETURN(QuantLayout l,
                         resolve_layout(x, scale, zp, a.axis, a.block_size, a.version, "x_scale", "x_zero_point"));
  XONNX_ASSIGN_OR_RETURN(std::vector<double> scales, read_scales(scale, "x_scale", false));
  std::vector<double> zps(scales.size(), 0.0);
  if (has_zp) {
    for (size_t i = 0; i < zps.size(); ++i) zps[i] = zp->get_as_double(static_cast<int64_t>(i));
  }
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_t, x.shape()));
  const int64_t n = x.numel();
  const bool int_input = dtype_is_integer(x.dtype());
  for (int64_t i = 0; i < n; ++i) {
    const int64_t pi = l.param_index(i);
    const double xv = x.get_as_double(i);
    // integers: exact difference; float8/float4: float subtraction (x - 0 keeps -0)
    const float diff =
        int_input ? static_cast<float>(xv - zps[pi]) : static_cast<float>(xv) - static_cast<float>(zps[pi]);
    switch (out_t) {
      case DataType::kFloat: y->data<float>()[i] = diff * static_cast<float>(scales[pi]); break;
      case DataType::kDouble: y->data<double>()[i] = static_cast<double>(diff) * scales[pi]; break;
      case DataType::kFloat16:
        y->data<Float16>()[i] = Float16{float_to_half(diff * static_cast<float>(scales[pi]))};
        break;
      default: y->data<BFloat16>()[i] = BFloat16{float_to_bfloat16(diff * static_cast<float>(scales[pi]))}; break;
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_dequantize_linear(const KernelInit& init) {
  DequantizeAttrs a;
  a.version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(a.axis, init.get_int("axis", 1));
  if (a.version >= 21) {
    XONNX_ASSIGN_OR_RETURN(a.block_size, init.get_int("block_size", 0));
  }
  if (a.version >= 23) {
    XONNX_ASSIGN_OR_RETURN(a.output_dtype, init.get_int("output_dtype", 0));
    if (a.output_dtype != 0 && a.output_dtype != static_cast<int64_t>(DataType::kFloat) &&
        a.output_dtype != static_cast<int64_t>(DataType::kFloat16) &&
        a.output_dtype != static_cast<int64_t>(DataType::kBFloat16)) {
      return invalid_argument("output_dtype ", a.output_dtype, " must be float, float16 or bfloat16");
    }
  }
  if (a.block_size < 0) return invalid_argument("block_size must be >= 0, got ", a.block_size);
  XONNX_RETURN_IF_ERROR(check_constant_params(init, a.axis, a.block_size, false));
  if (const Tensor* zp = const_input(init, 2)) {
    XONNX_RETURN_IF_ERROR(check_int32_zero_point(*zp));
  }
  return make_kernel([a](KernelContext& ctx) -> Status { return run_dequantize(ctx, a); });
}

Result<std::unique_ptr<Kernel>> create_dynamic_quantize_linear(const KernelInit& init) {
  (void)init;
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DataType::kFloat) return invalid_argument("input x must be float, got ", dtype_name(x.dtype()));
    const float* xv = x.data<float>();
    const int64_t n = x.numel();
    float mx = 0.0f, mn = 0.0f;  // range always includes 0
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(xv[i])) nan = true;
      mx = std::max(mx, xv[i]);
      mn = std::min(mn, xv[i]);
    }
    if (nan) return invalid_argument("input x contains NaN; DynamicQuantizeLinear cannot compute a scale");
    float scale = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    if (!std::isfinite(scale)) return invalid_argument("input x has an infinite range; cannot compute a scale");
    const float izp = 0.0f - mn / scale;
    const float zp = std::nearbyint(std::min(std::max(izp, 0.0f), 255.0f));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kUint8, x.shape()));
    uint8_t* yv = y->data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) {
      const float q = std::nearbyint(xv[i] / scale) + zp;
      yv[i] = static_cast<uint8_t>(std::min(std::max(q, 0.0f), 255.0f));
    }
    if (ctx.output_wanted(1)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(1, DataType::kFloat, {}));
      s->data<float>()[0] = scale;
    }
    if (ctx.output_wanted(2)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(2, DataType::kUint8, {}));
      z->data<uint8_t>()[0] = static_cast<uint8_t>(zp);
    }
    return Status::ok();
  });
}

}  // namespace

void register_quantize_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "QuantizeLinear", 10, kLatestVersion, create_quantize_linear);
  XONNX_REGISTER(registry, "", "DequantizeLinear", 10, kLatestVersion, create_dequantize_linear);
  XONNX_REGISTER(registry, "", "DynamicQuantizeLinear", 11, kLatestVersion, create_dynamic_quantize_linear);
  register_qlinear_ops(registry);
}

}  // namespace xonnx
