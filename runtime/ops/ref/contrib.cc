// Reference kernels for com.microsoft contrib ops that exporters and quantizers emit:
// MatMulNBits (block-quantized weight-only MatMul), Gelu, FastGelu, BiasGelu, QuickGelu; the
// family also registers the LLM contrib ops of their own files (GroupQueryAttention,
// RotaryEmbedding, SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization).
// Semantics follow ONNX Runtime's contrib-op spec.
#include <cmath>
#include <vector>

#include "runtime/core/checked.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

constexpr const char* kMs = "com.microsoft";

// Reads the `bits`-wide code at position `index` of an LSB-first bit stream.
uint32_t read_bits(const uint8_t* data, int64_t index, int bits) {
  const int64_t bit = index * bits;
  uint32_t v = 0;
  for (int b = 0; b < bits; ++b) {
    const int64_t at = bit + b;
    v |= static_cast<uint32_t>((data[at >> 3] >> (at & 7)) & 1) << b;
  }
  return v;
}

Result<std::vector<float>> float_values(const Tensor& t, const char* what) {
  if (t.dtype() != DataType::kFloat && t.dtype() != DataType::kFloat16 && t.dtype() != DataType::kBFloat16) {
    return invalid_argument(what, " must be float32, float16 or bfloat16, got ", dtype_name(t.dtype()));
  }
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[i] = static_cast<float>(t.get_as_double(i));
  return v;
}

Status store_floats(const std::vector<float>& v, Tensor* out) {
  XONNX_DISPATCH_FLOAT(out->dtype(), return unsupported("output type ", dtype_name(out->dtype())), {
    T* p = out->data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(v[i]));
  });
  return Status::ok();
}

// ---------------------------------------------------------------- MatMulNBits
struct NBitsConfig {
  int64_t k, n, block_size, bits, blocks, blob_size;
  int64_t b_elems, scale_elems, zp_row, zp_elems;  // checked at creation: no product wraps
};

Result<std::unique_ptr<Kernel>> create_matmul_nbits(const KernelInit& init) {
  NBitsConfig c{};
  XONNX_ASSIGN_OR_RETURN(c.k, init.require_int("K"));
  XONNX_ASSIGN_OR_RETURN(c.n, init.require_int("N"));
  XONNX_ASSIGN_OR_RETURN(c.block_size, init.require_int("block_size"));
  XONNX_ASSIGN_OR_RETURN(c.bits, init.get_int("bits", 4));
  XONNX_ASSIGN_OR_RETURN(int64_t prepacked, init.get_int("weight_prepacked", 0));
  if (c.k <= 0 || c.n <= 0) return invalid_model("K and N must be positive, got K=", c.k, " N=", c.n);
  if (c.bits < 2 || c.bits > 8) return invalid_model("bits must be 2..8, got ", c.bits);
  if (c.block_size < 16 || (c.block_size & (c.block_size - 1)) != 0) {
    return invalid_model("block_size must be a power of two >= 16, got ", c.block_size);
  }
  if (prepacked) return unsupported("weight_prepacked=1 (a runtime-specific layout)");
  if (init.has_input(4)) return unsupported("the deprecated g_idx input");
  c.blocks = c.k / c.block_size + (c.k % c.block_size != 0);
  c.blob_size = checked_mul(c.block_size, c.bits) / 8;
  c.b_elems = checked_mul(c.n, c.blocks, c.blob_size);
  c.scale_elems = checked_mul(c.n, c.blocks);
  const int64_t zp_bits = checked_mul(c.blocks, c.bits);
  c.zp_row = zp_bits < 0 ? -1 : zp_bits / 8 + (zp_bits % 8 != 0);
  c.zp_elems = checked_mul(c.n, c.zp_row);
  if (c.blob_size <= 0 || c.b_elems < 0 || c.zp_elems < 0) {
    return invalid_model("K=", c.k, ", N=", c.n, ", block_size=", c.block_size, " and bits=", c.bits,
                         " give weight sizes beyond int64");
  }
  return make_kernel([c](KernelContext& ctx) -> Status {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor& scales = ctx.input(2);
    if (a.rank() < 1 || a.dim(a.rank() - 1) != c.k) {
      return invalid_argument("A's last dimension must be K=", c.k, ", got shape ", shape_to_string(a.shape()));
    }
    if (b.dtype() != DataType::kUint8 || b.numel() != c.b_elems) {
      return invalid_argument("B must be uint8 [N, k_blocks, blob_size] = [", c.n, ", ", c.blocks, ", ", c.blob_size,
                              "], got ", dtype_name(b.dtype()), shape_to_string(b.shape()));
    }
    if (scales.numel() != c.scale_elems) {
      return invalid_argument("scales must have N*k_blocks = ", c.scale_elems, " elements, got ",
                              shape_to_string(scales.shape()));
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<float> s, float_values(scales, "scales"));
    const int64_t zp_row = c.zp_row;
    const Tensor* zp = ctx.has_input(3) ? &ctx.input(3) : nullptr;
    std::vector<float> zp_float;
    if (zp) {
      if (zp->dtype() == DataType::kUint8) {
        if (zp->numel() != c.zp_elems) {
          return invalid_argument("packed zero_points must have N*ceil(k_blocks*bits/8) = ", c.zp_elems,
                                  " elements, got ", shape_to_string(zp->shape()));
        }
      } else {
        if (zp->numel() != c.scale_elems) {
          return invalid_argument("zero_points must have N*k_blocks = ", c.scale_elems, " elements");
        }
        XONNX_ASSIGN_OR_RETURN(zp_float, float_values(*zp, "zero_points"));
      }
    }
    std::vector<float> bias;
    if (ctx.has_input(5)) {
      if (ctx.input(5).numel() != c.n) return invalid_argument("bias must have N=", c.n, " elements");
      XONNX_ASSIGN_OR_RETURN(bias, float_values(ctx.input(5), "bias"));
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<float> av, float_values(a, "A"));
    const int64_t m = a.numel() / c.k;
    Shape out_shape = a.shape();
    out_shape.back() = c.n;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a.dtype(), out_shape));
    std::vector<float> out(static_cast<size_t>(m * c.n), 0.0f);
    const float default_zp = static_cast<float>(1 << (c.bits - 1));
    const uint8_t* bdata = b.data<uint8_t>();
    std::vector<float> w(static_cast<size_t>(c.k));
    for (int64_t col = 0; col < c.n; ++col) {
      // Dequantize column `col` of the weight (row `col` of B) once, then dot with every row of A.
      for (int64_t blk = 0; blk < c.blocks; ++blk) {
        const float scale = s[col * c.blocks + blk];
        float z = default_zp;
        if (!zp_float.empty())
          z = zp_float[col * c.blocks + blk];
        else if (zp)
          z = static_cast<float>(read_bits(zp->data<uint8_t>() + col * zp_row, blk, static_cast<int>(c.bits)));
        const uint8_t* blob = bdata + (col * c.blocks + blk) * c.blob_size;
        for (int64_t i = 0; i < c.block_size && blk * c.block_size + i < c.k; ++i) {
          w[blk * c.block_size + i] = (static_cast<float>(read_bits(blob, i, static_cast<int>(c.bits))) - z) * scale;
        }
      }
      for (int64_t row = 0; row < m; ++row) {
        const float* ar = av.data() + row * c.k;
        float acc = 0.0f;
        for (int64_t i = 0; i < c.k; ++i) acc += ar[i] * w[i];
        out[row * c.n + col] = acc + (bias.empty() ? 0.0f : bias[col]);
      }
    }
    return store_floats(out, y);
  });
}

// ---------------------------------------------------------------- GELU variants
enum class GeluKind { kErf, kTanh, kBiasErf, kQuick };

template <GeluKind kKind>
Result<std::unique_ptr<Kernel>> create_gelu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(float alpha, init.get_float("alpha", 1.702f));  // QuickGelu only
  return make_kernel([alpha](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_ASSIGN_OR_RETURN(std::vector<float> v, float_values(x, "X"));
    std::vector<float> bias;
    if (ctx.has_input(1)) {
      XONNX_ASSIGN_OR_RETURN(bias, float_values(ctx.input(1), "bias"));
      if (bias.empty() || x.rank() == 0 || static_cast<int64_t>(bias.size()) != x.dim(x.rank() - 1)) {
        return invalid_argument("bias must match the last dimension of X ", shape_to_string(x.shape()));
      }
    }
    for (size_t i = 0; i < v.size(); ++i) {
      const float u = v[i] + (bias.empty() ? 0.0f : bias[i % bias.size()]);
      switch (kKind) {
        case GeluKind::kErf:
        case GeluKind::kBiasErf: v[i] = 0.5f * u * (1.0f + std::erf(u * 0.70710678118654752f)); break;
        case GeluKind::kTanh:
          v[i] = 0.5f * u * (1.0f + std::tanh(0.7978845608028654f * (u + 0.044715f * u * u * u)));
          break;
        case GeluKind::kQuick: v[i] = u / (1.0f + std::exp(-alpha * u)); break;
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    return store_floats(v, y);
  });
}

}  // namespace

// The LLM contrib ops of ONNX Runtime GenAI's graphs, one file each.
void register_gqa_ops(OpRegistry& registry);              // attention_gqa.cc: GroupQueryAttention
void register_rotary_contrib_ops(OpRegistry& registry);   // rotary_contrib.cc: RotaryEmbedding
void register_simplified_norm_ops(OpRegistry& registry);  // norm_simplified.cc: (Skip)SimplifiedLayerNormalization

void register_contrib_ops(OpRegistry& registry) {
  register_gqa_ops(registry);
  register_rotary_contrib_ops(registry);
  register_simplified_norm_ops(registry);
  XONNX_REGISTER(registry, kMs, "MatMulNBits", 1, kLatestVersion, create_matmul_nbits);
  XONNX_REGISTER(registry, kMs, "Gelu", 1, kLatestVersion, create_gelu<GeluKind::kErf>);
  XONNX_REGISTER(registry, kMs, "FastGelu", 1, kLatestVersion, create_gelu<GeluKind::kTanh>);
  XONNX_REGISTER(registry, kMs, "BiasGelu", 1, kLatestVersion, create_gelu<GeluKind::kBiasErf>);
  XONNX_REGISTER(registry, kMs, "QuickGelu", 1, kLatestVersion, create_gelu<GeluKind::kQuick>);
}

}  // namespace xonnx
