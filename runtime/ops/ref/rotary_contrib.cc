// Reference kernel: com.microsoft RotaryEmbedding (float32), ONNX Runtime's contrib form.
//
// Inputs: input [B, S, hidden] or [B, N, S, H]; position_ids int64 [B, S], or [1] holding the
// position of token 0 (token s at offset + s); cos_cache / sin_cache [max_position, rot / 2].
// Attributes: interleaved, rotary_embedding_dim (0: the head size; smaller rotates the first
// dims only, and 3-D input then needs num_heads), num_heads, scale (unused by the math, as in
// ORT), is_packed_batching (unsupported).
#include "runtime/ops/ref/attention_gqa.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

Result<std::unique_ptr<Kernel>> create_rotary_contrib(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t interleaved, init.get_int("interleaved", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t rot_attr, init.get_int("rotary_embedding_dim", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t heads_attr, init.get_int("num_heads", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t packed, init.get_int("is_packed_batching", 0));
  if (packed != 0) return unsupported("is_packed_batching=1");
  if (rot_attr < 0 || heads_attr < 0) return invalid_model("rotary_embedding_dim and num_heads must be >= 0");
  if (rot_attr > 0 && heads_attr == 0) return invalid_model("rotary_embedding_dim needs the num_heads attribute");
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& pos = ctx.input(1);
    const Tensor& cos = ctx.input(2);
    const Tensor& sin = ctx.input(3);
    for (const Tensor* t : {&x, &cos, &sin}) {
      if (t->dtype() != DataType::kFloat) {
        return unsupported("input, cos_cache and sin_cache of type ", dtype_name(t->dtype()), " (float32 only)");
      }
    }
    if (cos.rank() != 2 || sin.shape() != cos.shape()) {
      return invalid_argument("cos_cache ", shape_to_string(cos.shape()), " and sin_cache ",
                              shape_to_string(sin.shape()), " must both be [max_position, rotary_dim / 2]");
    }
    const int64_t half = cos.dim(1);
    const bool four_d = x.rank() == 4;
    if (!four_d && x.rank() != 3) return invalid_argument("input must be 3-D or 4-D, got ", shape_to_string(x.shape()));
    const int64_t B = x.dim(0), S = four_d ? x.dim(2) : x.dim(1);
    int64_t N, H;
    if (four_d) {
      N = x.dim(1);
      H = x.dim(3);
    } else {
      N = heads_attr > 0 ? heads_attr : (half > 0 ? x.dim(2) / (2 * half) : 0);
      if (N <= 0 || x.dim(2) % N != 0) {
        return invalid_argument("hidden size ", x.dim(2), " does not split into ", N, " heads");
      }
      H = x.dim(2) / N;
    }
    const int64_t rot = rot_attr > 0 ? rot_attr : H;
    if (rot > H || rot != 2 * half) {
      return invalid_argument("rotary dim ", rot, " must be <= head size ", H, " and twice cos_cache's last dim ",
                              half);
    }
    const bool offset_form = pos.rank() == 1 && pos.numel() == 1;
    if (pos.dtype() != DataType::kInt64 || (!offset_form && pos.shape() != Shape{B, S})) {
      return invalid_argument("position_ids must be int64 [", B, ", ", S, "] or [1], got ", dtype_name(pos.dtype()),
                              " ", shape_to_string(pos.shape()));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DataType::kFloat, x.shape()));
    const float* xp = x.data<float>();
    float* yp = y->data<float>();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t s = 0; s < S; ++s) {
        const int64_t p = offset_form ? pos.data<int64_t>()[0] + s : pos.data<int64_t>()[b * S + s];
        if (p < 0 || p >= cos.dim(0)) {
          return invalid_argument("position ", p, " (batch ", b, ", token ", s, ") is outside cos_cache's ", cos.dim(0),
                                  " rows");
        }
        for (int64_t n = 0; n < N; ++n) {
          const int64_t at = four_d ? ((b * N + n) * S + s) * H : ((b * S + s) * N + n) * H;
          gqa::rotate_row(xp + at, yp + at, H, cos.data<float>() + p * half, sin.data<float>() + p * half, rot,
                          interleaved != 0);
        }
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_rotary_contrib_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "com.microsoft", "RotaryEmbedding", 1, kLatestVersion, create_rotary_contrib);
}

}  // namespace xonnx
