// Reference kernels for ONNX Runtime's quantized GEMM contrib ops. com.microsoft QGemm (since 1):
//   acc[m][n]  = sum_k (A[m][k] - a_zero_point) * (B[k][n] - b_zero_point[n])        exact, int64
//   real[m][n] = (acc[m][n] + C[m][n]) * alpha * a_scale * b_scale[n]                 double, in that order
//   Y = float(real)                                                 without y_scale / y_zero_point
//   Y = saturate(round_half_to_even(real / y_scale) + y_zero_point) with both (Y has y_zero_point's type)
// A is [M, K] ([K, M] with transA), B is [K, N] ([N, K] with transB); A, B and their zero points are
// int8 or uint8 (A and B may differ); b_scale / b_zero_point are per-tensor or per-column (N); C is
// int32 and broadcasts numpy-style to [M, N] (it is in the accumulator's units). Absent zero
// points are 0.
// com.microsoft MatMulIntegerToFloat (since 1), which the QDQ pass makes of a DQ -> MatMul whose
// output stays float (an LM head) and of int8 dynamic MatMulInteger -> Cast -> Mul [-> Add]:
// A [..., M, K] of any rank >= 2 times a 2-D B [K, N],
//   Y[..., m, n] = float(sum_k (A - a_zero_point) * (B - b_zero_point[n])) * float(a_scale * b_scale[n]) + bias[n]
// in float, each operation rounded once (the Cast, Mul, Mul and Add it replaces), with a
// per-tensor a_scale / a_zero_point, per-tensor or per-column b_scale / b_zero_point and an
// optional float bias of N; batched B is not taken. The optimized kernels (optimized/qgemm_op.cc)
// sum the same integers: MatMulIntegerToFloat's results are these bits, QGemm's float ones agree
// to float rounding, quantized ones within one step.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

constexpr const char* kMs = "com.microsoft";
constexpr size_t kA = 0, kAScale = 1, kAZeroPoint = 2, kB = 3, kBScale = 4, kBZeroPoint = 5, kC = 6, kYScale = 7,
                 kYZeroPoint = 8;
constexpr int64_t kUnknown = -1;  // a dimension not known at session creation

struct QGemmAttrs {
  double alpha = 1.0;
  bool trans_a = false, trans_b = false;
};

bool is_scalar_like(const Tensor& t) { return t.numel() == 1 && t.rank() <= 1; }

// "[2, ?]" for a shape with unknown dimensions.
std::string dims_to_string(int64_t rows, int64_t cols) {
  auto dim = [](int64_t d) { return d == kUnknown ? std::string("?") : std::to_string(d); };
  return "[" + dim(rows) + ", " + dim(cols) + "]";
}

// A scale or zero point: one value (scalar or 1-element 1-D), or, when `per_column`, a 1-D
// tensor of N values (n == kUnknown: any length, checked again at run time).
Status check_param_shape(const Tensor& t, const char* name, bool per_column, int64_t n) {
  if (is_scalar_like(t)) return Status::ok();
  if (!per_column) {
    return invalid_argument("input ", name, " must be a scalar (per-tensor quantization), got shape ",
                            shape_to_string(t.shape()));
  }
  if (t.rank() != 1) {
    return invalid_argument("input ", name, " must be a scalar or a 1-D tensor of N (columns of B) values, got shape ",
                            shape_to_string(t.shape()));
  }
  if (n != kUnknown && t.dim(0) != n) {
    return invalid_argument("input ", name, " has ", t.dim(0), " elements but B has N = ", n,
                            " columns: per-column lengths must match (or give 1 value)");
  }
  return Status::ok();
}

// A scale: float32, every element positive and finite.
Status check_scale(const Tensor& t, const char* name, bool per_column, int64_t n) {
  if (t.dtype() != DataType::kFloat) {
    return invalid_argument("input ", name, " must be float32, got ", dtype_name(t.dtype()));
  }
  XONNX_RETURN_IF_ERROR(check_param_shape(t, name, per_column, n));
  const float* v = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (!(v[i] > 0.0f) || std::isinf(v[i])) {
      return invalid_argument("input ", name, "[", i, "] = ", v[i], " is invalid: scales must be positive and finite");
    }
  }
  return Status::ok();
}

// A zero point: 8-bit, of its data's type when that is known (`data_type` kUndefined: any).
Status check_zero_point(const Tensor& t, const char* name, DataType data_type, const char* data_name, bool per_column,
                        int64_t n) {
  if (!dtype_is_8bit_int(t.dtype())) {
    return invalid_argument("input ", name, " must be int8 or uint8, got ", dtype_name(t.dtype()));
  }
  if (data_type != DataType::kUndefined && t.dtype() != data_type) {
    return invalid_argument("input ", name, " has type ", dtype_name(t.dtype()), " but ", data_name, " has type ",
                            dtype_name(data_type), "; a zero point must have the type of its data");
  }
  return check_param_shape(t, name, per_column, n);
}

// A or B: an 8-bit matrix.
Status check_matrix(const Tensor& t, const char* name) {
  if (!dtype_is_8bit_int(t.dtype())) {
    return invalid_argument("input ", name, " must be int8 or uint8, got ", dtype_name(t.dtype()));
  }
  if (t.rank() != 2) return invalid_argument("input ", name, " must be 2-D, got shape ", shape_to_string(t.shape()));
  return Status::ok();
}

// C: int32, rank <= 2, broadcastable numpy-style to [M, N] (unknown dims match anything).
Status check_bias(const Tensor& c, int64_t m, int64_t n) {
  if (c.dtype() != DataType::kInt32) return invalid_argument("input C must be int32, got ", dtype_name(c.dtype()));
  const Shape& s = c.shape();
  const bool rows_ok = s.size() < 2 || s[0] == 1 || m == kUnknown || s[0] == m;
  const bool cols_ok = s.empty() || s.back() == 1 || n == kUnknown || s.back() == n;
  if (s.size() > 2 || !rows_ok || !cols_ok) {
    return invalid_argument("input C of shape ", shape_to_string(s),
                            " does not broadcast to the output [M, N] = ", dims_to_string(m, n));
  }
  return Status::ok();
}

struct Geometry {
  int64_t m = 0, k = 0, n = 0;
};

Result<Geometry> geometry(const Shape& a, const Shape& b, const QGemmAttrs& attrs) {
  Geometry g;
  g.m = attrs.trans_a ? a[1] : a[0];
  g.k = attrs.trans_a ? a[0] : a[1];
  g.n = attrs.trans_b ? b[0] : b[1];
  const int64_t kb = attrs.trans_b ? b[1] : b[0];
  if (kb != g.k) {
    return invalid_argument("inner dimensions differ: A has shape ", shape_to_string(a), " (transA=", attrs.trans_a,
                            ", K = ", g.k, ") but B has shape ", shape_to_string(b), " (transB=", attrs.trans_b,
                            ", K = ", kb, ")");
  }
  return g;
}

// The schema types Y by y_zero_point and quantizes with y_scale: one without the other has no
// consistent meaning (ORT then returns floats divided by y_scale, or overruns the output).
Status check_y_params_paired(bool has_scale, bool has_zero_point) {
  if (has_scale == has_zero_point) return Status::ok();
  return invalid_argument(
      "inputs y_scale and y_zero_point must be given together (both: quantized output, "
      "neither: float32 output), but only ",
      has_scale ? "y_scale" : "y_zero_point", " is given");
}

// Session-creation checks of what is already known: attributes, constant inputs, and which
// optional inputs are present, so a bad model fails when it is loaded, naming the input.
Status check_at_creation(const KernelInit& init, const QGemmAttrs& attrs) {
  if (!std::isfinite(attrs.alpha)) return invalid_argument("attribute alpha = ", attrs.alpha, " must be finite");
  XONNX_RETURN_IF_ERROR(check_y_params_paired(init.has_input(kYScale), init.has_input(kYZeroPoint)));
  auto constant = [&init](size_t i) { return init.has_input(i) ? init.constant_input(i) : nullptr; };
  int64_t m = kUnknown, n = kUnknown, ka = kUnknown;
  DataType a_type = DataType::kUndefined, b_type = DataType::kUndefined;
  if (const Tensor* a = constant(kA)) {
    XONNX_RETURN_IF_ERROR(check_matrix(*a, "A"));
    a_type = a->dtype();
    m = attrs.trans_a ? a->dim(1) : a->dim(0);
    ka = attrs.trans_a ? a->dim(0) : a->dim(1);
  }
  if (const Tensor* b = constant(kB)) {
    XONNX_RETURN_IF_ERROR(check_matrix(*b, "B"));
    b_type = b->dtype();
    n = attrs.trans_b ? b->dim(0) : b->dim(1);
    if (ka != kUnknown) XONNX_RETURN_IF_ERROR(geometry(constant(kA)->shape(), b->shape(), attrs).status());
  }
  if (const Tensor* s = constant(kAScale)) XONNX_RETURN_IF_ERROR(check_scale(*s, "a_scale", false, 1));
  if (const Tensor* s = constant(kBScale)) XONNX_RETURN_IF_ERROR(check_scale(*s, "b_scale", true, n));
  if (const Tensor* s = constant(kYScale)) XONNX_RETURN_IF_ERROR(check_scale(*s, "y_scale", false, 1));
  if (const Tensor* z = constant(kAZeroPoint)) {
    XONNX_RETURN_IF_ERROR(check_zero_point(*z, "a_zero_point", a_type, "A", false, 1));
  }
  if (const Tensor* z = constant(kBZeroPoint)) {
    XONNX_RETURN_IF_ERROR(check_zero_point(*z, "b_zero_point", b_type, "B", true, n));
  }
  if (const Tensor* z = constant(kYZeroPoint)) {
    XONNX_RETURN_IF_ERROR(check_zero_point(*z, "y_zero_point", DataType::kUndefined, "", false, 1));
  }
  if (const Tensor* c = constant(kC)) XONNX_RETURN_IF_ERROR(check_bias(*c, m, n));
  return Status::ok();
}

Result<const Tensor*> required_input(KernelContext& ctx, size_t i, const char* name) {
  if (!ctx.has_input(i) || !ctx.input(i).defined()) return invalid_argument("input ", name, " must be a tensor");
  return &ctx.input(i);
}

// The per-column values of a scale or zero point (one value repeated for per-tensor).
std::vector<double> per_column(const Tensor& t, int64_t n) {
  if (is_scalar_like(t)) return std::vector<double>(static_cast<size_t>(n), t.get_as_double(0));
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = t.get_as_double(i);
  return v;
}

// X[r][c] - zero_point of a 2-D 8-bit tensor, laid out [rows][cols] after an optional transpose.
std::vector<int32_t> centered(const Tensor& t, bool transpose, int64_t rows, int64_t cols,
                              const std::vector<int32_t>& zero_point_per_col) {
  std::vector<int32_t> out(static_cast<size_t>(rows * cols));
  const bool is_signed = t.dtype() == DataType::kInt8;
  const void* raw = t.raw_data();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t src = transpose ? c * rows + r : r * cols + c;
      const int32_t v = is_signed ? static_cast<const int8_t*>(raw)[src] : static_cast<const uint8_t*>(raw)[src];
      out[static_cast<size_t>(r * cols + c)] = v - zero_point_per_col[static_cast<size_t>(c)];
    }
  }
  return out;
}

Status run_qgemm(KernelContext& ctx, const QGemmAttrs& attrs) {
  XONNX_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, kA, "A"));
  XONNX_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, kB, "B"));
  XONNX_RETURN_IF_ERROR(check_matrix(*a, "A"));
  XONNX_RETURN_IF_ERROR(check_matrix(*b, "B"));
  XONNX_ASSIGN_OR_RETURN(const Geometry g, geometry(a->shape(), b->shape(), attrs));

  XONNX_ASSIGN_OR_RETURN(const Tensor* a_scale, required_input(ctx, kAScale, "a_scale"));
  XONNX_ASSIGN_OR_RETURN(const Tensor* b_scale, required_input(ctx, kBScale, "b_scale"));
  XONNX_RETURN_IF_ERROR(check_scale(*a_scale, "a_scale", false, 1));
  XONNX_RETURN_IF_ERROR(check_scale(*b_scale, "b_scale", true, g.n));
  int32_t a_zp = 0;
  std::vector<double> b_zp(static_cast<size_t>(g.n), 0.0);
  if (ctx.has_input(kAZeroPoint)) {
    XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(kAZeroPoint), "a_zero_point", a->dtype(), "A", false, 1));
    a_zp = static_cast<int32_t>(ctx.input(kAZeroPoint).get_as_int64(0));
  }
  if (ctx.has_input(kBZeroPoint)) {
    XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(kBZeroPoint), "b_zero_point", b->dtype(), "B", true, g.n));
    b_zp = per_column(ctx.input(kBZeroPoint), g.n);
  }
  const Tensor* c = nullptr;
  if (ctx.has_input(kC)) {
    c = &ctx.input(kC);
    XONNX_RETURN_IF_ERROR(check_bias(*c, g.m, g.n));
  }
  XONNX_RETURN_IF_ERROR(check_y_params_paired(ctx.has_input(kYScale), ctx.has_input(kYZeroPoint)));
  const bool quantized = ctx.has_input(kYScale);
  double y_scale = 1.0;
  int32_t y_zp = 0;
  DataType out_type = DataType::kFloat;
  if (quantized) {
    XONNX_RETURN_IF_ERROR(check_scale(ctx.input(kYScale), "y_scale", false, 1));
    XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(kYZeroPoint), "y_zero_point", DataType::kUndefined, "", false, 1));
    y_scale = ctx.input(kYScale).get_as_double(0);
    y_zp = static_cast<int32_t>(ctx.input(kYZeroPoint).get_as_int64(0));
    out_type = ctx.input(kYZeroPoint).dtype();
  }

  // Centered operands: A' [M][K], B' [K][N] (zero points subtracted, transposes applied).
  const std::vector<int32_t> a_zp_per_col(static_cast<size_t>(g.k), a_zp);
  const std::vector<int32_t> b_zp_per_col(b_zp.begin(), b_zp.end());
  const std::vector<int32_t> a_c = centered(*a, attrs.trans_a, g.m, g.k, a_zp_per_col);
  const std::vector<int32_t> b_c = centered(*b, attrs.trans_b, g.k, g.n, b_zp_per_col);
  const std::vector<double> b_s = per_column(*b_scale, g.n);
  const double a_s = a_scale->get_as_double(0);

  // C's element strides over [M, N] (0 along broadcast dimensions).
  int64_t c_row_stride = 0, c_col_stride = 0;
  if (c && c->rank() >= 1 && c->shape().back() != 1) c_col_stride = 1;
  if (c && c->rank() == 2 && c->dim(0) != 1) c_row_stride = c->dim(1);
  const int32_t* c_data = c ? c->data<int32_t>() : nullptr;

  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, out_type, {g.m, g.n}));
  const double lo = out_type == DataType::kInt8 ? -128.0 : 0.0;
  const double hi = out_type == DataType::kInt8 ? 127.0 : 255.0;
  std::vector<int64_t> acc(static_cast<size_t>(g.n));
  for (int64_t m = 0; m < g.m; ++m) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t k = 0; k < g.k; ++k) {
      const int64_t av = a_c[static_cast<size_t>(m * g.k + k)];
      const int32_t* brow = b_c.data() + k * g.n;
      for (int64_t n = 0; n < g.n; ++n) acc[static_cast<size_t>(n)] += av * brow[n];
    }
    for (int64_t n = 0; n < g.n; ++n) {
      const int64_t bias = c_data ? c_data[m * c_row_stride + n * c_col_stride] : 0;
      const double real =
          static_cast<double>(acc[static_cast<size_t>(n)] + bias) * attrs.alpha * a_s * b_s[static_cast<size_t>(n)];
      const int64_t i = m * g.n + n;
      if (!quantized) {
        y->data<float>()[i] = static_cast<float>(real);
        continue;
      }
      const double q = std::min(hi, std::max(lo, std::nearbyint(real / y_scale) + y_zp));
      if (out_type == DataType::kInt8) {
        y->data<int8_t>()[i] = static_cast<int8_t>(q);
      } else {
        y->data<uint8_t>()[i] = static_cast<uint8_t>(q);
      }
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_qgemm(const KernelInit& init) {
  QGemmAttrs attrs;
  XONNX_ASSIGN_OR_RETURN(const float alpha, init.get_float("alpha", 1.0f));
  XONNX_ASSIGN_OR_RETURN(const int64_t trans_a, init.get_int("transA", 0));
  XONNX_ASSIGN_OR_RETURN(const int64_t trans_b, init.get_int("transB", 0));
  attrs.alpha = alpha;
  attrs.trans_a = trans_a != 0;
  attrs.trans_b = trans_b != 0;
  XONNX_RETURN_IF_ERROR(check_at_creation(init, attrs));
  return make_kernel([attrs](KernelContext& ctx) -> Status { return run_qgemm(ctx, attrs); });
}

// MatMulIntegerToFloat's inputs.
constexpr size_t kMiA = 0, kMiB = 1, kMiAScale = 2, kMiBScale = 3, kMiAZeroPoint = 4, kMiBZeroPoint = 5, kMiBias = 6;

Status run_matmul_integer_to_float(KernelContext& ctx) {
  XONNX_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, kMiA, "A"));
  XONNX_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, kMiB, "B"));
  if (!dtype_is_8bit_int(a->dtype())) {
    return invalid_argument("input A must be int8 or uint8, got ", dtype_name(a->dtype()));
  }
  if (a->rank() < 2)
    return invalid_argument("input A must have rank 2 or more, got shape ", shape_to_string(a->shape()));
  XONNX_RETURN_IF_ERROR(check_matrix(*b, "B"));  // batched B is not taken
  const int64_t k = a->dim(a->rank() - 1), n = b->dim(1);
  if (b->dim(0) != k) {
    return invalid_argument("A ", shape_to_string(a->shape()), " and B ", shape_to_string(b->shape()),
                            " do not multiply: A's last dimension must equal B's first");
  }
  const int64_t m = k > 0 ? a->numel() / k : 0;
  XONNX_ASSIGN_OR_RETURN(const Tensor* a_scale, required_input(ctx, kMiAScale, "a_scale"));
  XONNX_ASSIGN_OR_RETURN(const Tensor* b_scale, required_input(ctx, kMiBScale, "b_scale"));
  XONNX_RETURN_IF_ERROR(check_scale(*a_scale, "a_scale", false, 1));
  XONNX_RETURN_IF_ERROR(check_scale(*b_scale, "b_scale", true, n));
  int32_t a_zp = 0;
  std::vector<double> b_zp(static_cast<size_t>(n), 0.0);
  if (ctx.has_input(kMiAZeroPoint)) {
    XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(kMiAZeroPoint), "a_zero_point", a->dtype(), "A", false, 1));
    a_zp = static_cast<int32_t>(ctx.input(kMiAZeroPoint).get_as_int64(0));
  }
  if (ctx.has_input(kMiBZeroPoint)) {
    XONNX_RETURN_IF_ERROR(check_zero_point(ctx.input(kMiBZeroPoint), "b_zero_point", b->dtype(), "B", true, n));
    b_zp = per_column(ctx.input(kMiBZeroPoint), n);
  }
  const float* bias = nullptr;
  if (ctx.has_input(kMiBias)) {
    const Tensor& t = ctx.input(kMiBias);
    if (t.dtype() != DataType::kFloat || t.rank() != 1 || t.dim(0) != n) {
      return invalid_argument("input bias must be a float32 vector of N = ", n, " values, got ", dtype_name(t.dtype()),
                              " ", shape_to_string(t.shape()));
    }
    bias = t.data<float>();
  }
  // A's rows as an [M, K] matrix (its leading dimensions flattened), B' [K][N].
  const Tensor a2 = a->reshaped({m, k});
  const std::vector<int32_t> a_c = centered(a2, false, m, k, std::vector<int32_t>(static_cast<size_t>(k), a_zp));
  const std::vector<int32_t> b_c = centered(*b, false, k, n, std::vector<int32_t>(b_zp.begin(), b_zp.end()));
  const std::vector<double> b_s = per_column(*b_scale, n);
  const double a_s = a_scale->get_as_double(0);
  Shape y_shape = a->shape();
  y_shape.back() = n;
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, y_shape));
  std::vector<int64_t> acc(static_cast<size_t>(n));
  for (int64_t r = 0; r < m; ++r) {
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t kk = 0; kk < k; ++kk) {
      const int64_t av = a_c[static_cast<size_t>(r * k + kk)];
      const int32_t* brow = b_c.data() + kk * n;
      for (int64_t c = 0; c < n; ++c) acc[static_cast<size_t>(c)] += av * brow[c];
    }
    for (int64_t c = 0; c < n; ++c) {
      // The product of two floats is exact in double: one rounding, as float's Mul.
      const float scale = static_cast<float>(a_s * b_s[static_cast<size_t>(c)]);
      const float scaled = static_cast<float>(acc[static_cast<size_t>(c)]) * scale;
      y->data<float>()[r * n + c] = bias ? scaled + bias[c] : scaled;
    }
  }
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_matmul_integer_to_float(const KernelInit& init) {
  (void)init;
  return make_kernel([](KernelContext& ctx) -> Status { return run_matmul_integer_to_float(ctx); });
}

}  // namespace

void register_qgemm_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, kMs, "QGemm", 1, kLatestVersion, create_qgemm);
  XONNX_REGISTER(registry, kMs, "MatMulIntegerToFloat", 1, kLatestVersion, create_matmul_integer_to_float);
}

}  // namespace xonnx
