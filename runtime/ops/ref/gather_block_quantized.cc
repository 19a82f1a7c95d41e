// Reference kernel for com.microsoft GatherBlockQuantized: a Gather over a block-quantized table
// whose output is the dequantized rows, (code - zero_point) * scale, in the scales' type.
// Semantics follow ONNX Runtime's CPU kernel (contrib_ops/cpu/quantization/gather_block_quantized.cc):
//   data uint8: `bits` 2, 4 or 8 codes packed LSB-first along the last axis (the stored last dim is
//     the logical one * bits / 8); gather_axis 0 and quantize_axis last only; default zero point
//     2^(bits-1); zero_points packed the same way along the quantize axis.
//   data uint4 / int4: logical shape, any gather_axis / quantize_axis; default zero point 0;
//     zero_points of data's type with the scales' shape.
//   scales: data's rank, the quantize axis ceil(dim / block_size); indices may be negative
//   (counted from the end) and must lie in [-dim, dim) (ORT 1.30 fails the same way).
#include <vector>

#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

constexpr const char* kMs = "com.microsoft";

struct GbqAttrs {
  int64_t gather_axis, quantize_axis, block_size, bits;
};

// The code at logical position `index` of a stream of `bits`-wide codes packed LSB-first.
inline int32_t packed_code(const uint8_t* data, int64_t index, int64_t bits) {
  if (bits == 8) return data[index];
  const int64_t per_byte = 8 / bits;
  const int shift = static_cast<int>((index % per_byte) * bits);
  return (data[index / per_byte] >> shift) & ((1 << bits) - 1);
}

inline int32_t int4_code(const uint8_t* data, int64_t index, bool is_signed) {
  const int32_t nibble = (data[index >> 1] >> ((index & 1) * 4)) & 0x0F;
  return is_signed && nibble >= 8 ? nibble - 16 : nibble;
}

Status check_shapes(const Shape& logical, const Tensor& scales, const Tensor* zp, const GbqAttrs& a,
                    int64_t components) {
  if (scales.rank() != logical.size()) {
    return invalid_argument("scales must have data's rank ", logical.size(), ", got shape ",
                            shape_to_string(scales.shape()));
  }
  for (size_t i = 0; i < logical.size(); ++i) {
    const bool q = static_cast<int64_t>(i) == a.quantize_axis;
    const int64_t want = q ? (logical[i] + a.block_size - 1) / a.block_size : logical[i];
    if (scales.dim(i) != want) {
      return invalid_argument("scales shape ", shape_to_string(scales.shape()), " does not match data (logical shape ",
                              shape_to_string(logical), ", quantize_axis ", a.quantize_axis, ", block_size ",
                              a.block_size, "): dim ", i, " must be ", want);
    }
  }
  if (!zp) return Status::ok();
  if (zp->rank() != logical.size()) {
    return invalid_argument("zero_points must have data's rank ", logical.size(), ", got shape ",
                            shape_to_string(zp->shape()));
  }
  for (size_t i = 0; i < logical.size(); ++i) {
    const bool packed_axis = components > 1 && static_cast<int64_t>(i) == a.quantize_axis;
    const int64_t want = packed_axis ? (scales.dim(i) + components - 1) / components : scales.dim(i);
    if (zp->dim(i) != want) {
      return invalid_argument("zero_points shape ", shape_to_string(zp->shape()), " does not match scales ",
                              shape_to_string(scales.shape()), ": dim ", i, " must be ", want);
    }
  }
  return Status::ok();
}

Status run_gather_block_quantized(KernelContext& ctx, const GbqAttrs& attrs) {
  const Tensor& data = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& scales = ctx.input(2);
  const Tensor* zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  const DataType dt = data.dtype();
  if (dt != DataType::kUint8 && dt != DataType::kUint4 && dt != DataType::kInt4) {
    return invalid_argument("data must be uint8, uint4 or int4, got ", dtype_name(dt));
  }
  if (indices.dtype() != DataType::kInt32 && indices.dtype() != DataType::kInt64) {
    return invalid_argument("indices must be int32 or int64, got ", dtype_name(indices.dtype()));
  }
  if (scales.dtype() != DataType::kFloat && scales.dtype() != DataType::kFloat16) {
    return invalid_argument("scales must be float32 or float16, got ", dtype_name(scales.dtype()));
  }
  if (zp && zp->dtype() != dt) {
    return invalid_argument("zero_points must have data's type ", dtype_name(dt), ", got ", dtype_name(zp->dtype()));
  }
  if (data.rank() < 1) return invalid_argument("data must have rank >= 1, got a scalar");
  const int64_t rank = static_cast<int64_t>(data.rank());
  GbqAttrs a = attrs;
  XONNX_ASSIGN_OR_RETURN(a.gather_axis, normalize_axis(attrs.gather_axis, rank, "gather_axis"));
  XONNX_ASSIGN_OR_RETURN(a.quantize_axis, normalize_axis(attrs.quantize_axis, rank, "quantize_axis"));
  int64_t components = 1;
  if (dt == DataType::kUint8) {
    components = 8 / a.bits;
    if (a.gather_axis != 0) return unsupported("uint8 data needs gather_axis 0, got ", attrs.gather_axis);
    if (a.quantize_axis != rank - 1) {
      return unsupported("uint8 data needs quantize_axis = the last axis (", rank - 1, "), got ", attrs.quantize_axis);
    }
    if (rank < 2) return invalid_argument("uint8 data needs gather_axis != quantize_axis (rank >= 2)");
  } else if (a.bits != 4) {
    return invalid_argument(dtype_name(dt), " data needs bits 4, got ", a.bits);
  }
  Shape logical = data.shape();
  logical.back() *= components;
  XONNX_RETURN_IF_ERROR(check_shapes(logical, scales, zp, a, components));

  Shape out_shape(logical.begin(), logical.begin() + a.gather_axis);
  out_shape.insert(out_shape.end(), indices.shape().begin(), indices.shape().end());
  out_shape.insert(out_shape.end(), logical.begin() + a.gather_axis + 1, logical.end());
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, scales.dtype(), out_shape));

  // data as [gather_M, axis_dim, gather_block] and [quant_M, quant_dim, quant_N] (logical elements).
  int64_t gather_m = 1, gather_block = 1, quant_n = 1;
  for (int64_t i = 0; i < a.gather_axis; ++i) gather_m *= logical[i];
  for (int64_t i = a.gather_axis + 1; i < rank; ++i) gather_block *= logical[i];
  for (int64_t i = a.quantize_axis + 1; i < rank; ++i) quant_n *= logical[i];
  const int64_t axis_dim = logical[a.gather_axis];
  const int64_t quant_dim = logical[a.quantize_axis];
  const int64_t quant_blocks = (quant_dim + a.block_size - 1) / a.block_size;
  const int64_t gather_n = indices.numel();

  std::vector<float> s(static_cast<size_t>(scales.numel()));
  for (int64_t i = 0; i < scales.numel(); ++i) s[i] = static_cast<float>(scales.get_as_double(i));
  const uint8_t* d = data.data<uint8_t>();
  const uint8_t* z = zp ? zp->data<uint8_t>() : nullptr;
  const bool is_signed = dt == DataType::kInt4;
  const int32_t default_zp = dt == DataType::kUint8 ? (1 << (a.bits - 1)) : 0;
  const int64_t zp_row = (quant_blocks + components - 1) / components;  // uint8: packed per row

  std::vector<float> out(static_cast<size_t>(gather_m * gather_n * gather_block));
  for (int64_t m = 0; m < gather_m; ++m) {
    for (int64_t n = 0; n < gather_n; ++n) {
      int64_t idx = indices.get_as_int64(n);
      if (idx < -axis_dim || idx >= axis_dim) {
        return invalid_argument("indices element ", n, " is ", idx, ", out of data bounds: must be in [", -axis_dim,
                                ", ", axis_dim - 1, "]");
      }
      if (idx < 0) idx += axis_dim;
      const int64_t base = (m * axis_dim + idx) * gather_block;
      float* dst = out.data() + (m * gather_n + n) * gather_block;
      for (int64_t i = 0; i < gather_block; ++i) {
        const int64_t di = base + i;
        const int64_t x = di / (quant_dim * quant_n), yq = di % (quant_dim * quant_n) / quant_n, zq = di % quant_n;
        const int64_t si = (x * quant_blocks + yq / a.block_size) * quant_n + zq;
        int32_t code, zero = default_zp;
        if (dt == DataType::kUint8) {
          code = packed_code(d, di, a.bits);
          if (z) zero = packed_code(z + (si / quant_blocks) * zp_row, si % quant_blocks, a.bits);
        } else {
          code = int4_code(d, di, is_signed);
          if (z) zero = int4_code(z, si, is_signed);
        }
        dst[i] = static_cast<float>(code - zero) * s[si];
      }
    }
  }
  XONNX_DISPATCH_FLOAT(y->dtype(), return unsupported("output type ", dtype_name(y->dtype())), {
    T* p = y->data<T>();
    for (size_t i = 0; i < out.size(); ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(out[i]));
  });
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_gather_block_quantized(const KernelInit& init) {
  GbqAttrs a{};
  XONNX_ASSIGN_OR_RETURN(a.gather_axis, init.get_int("gather_axis", 0));
  XONNX_ASSIGN_OR_RETURN(a.quantize_axis, init.get_int("quantize_axis", 1));
  XONNX_ASSIGN_OR_RETURN(a.block_size, init.get_int("block_size", 128));
  XONNX_ASSIGN_OR_RETURN(a.bits, init.get_int("bits", 4));
  if (a.block_size < 16 || (a.block_size & (a.block_size - 1)) != 0) {
    return invalid_model("block_size must be a power of two >= 16, got ", a.block_size);
  }
  if (a.bits != 2 && a.bits != 4 && a.bits != 8) return invalid_model("bits must be 2, 4 or 8, got ", a.bits);
  return make_kernel([a](KernelContext& ctx) { return run_gather_block_quantized(ctx, a); });
}

}  // namespace

void register_gather_block_quantized_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, kMs, "GatherBlockQuantized", 1, kLatestVersion, create_gather_block_quantized);
}

}  // namespace xonnx
