// The optimized op family (Backend::kOptimized): own vectorized float32 kernels, tried after
// XNNPACK and before the reference kernels (runtime/ops/registry.h).
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace opt {
void register_opt_matmul_nbits(OpRegistry& registry);              // matmul_nbits.cc
void register_opt_qlinear(OpRegistry& registry);                   // qlinear.cc
void register_opt_qlinear_depthwise(OpRegistry& registry);         // qlinear_depthwise.cc
void register_opt_quantize(OpRegistry& registry);                  // quantize.cc
void register_opt_qgemm(OpRegistry& registry);                     // qgemm_op.cc
void register_opt_conv(OpRegistry& registry);                      // conv.cc
void register_opt_conv_depthwise(OpRegistry& registry);            // conv_depthwise.cc
void register_opt_conv_pointwise_depthwise(OpRegistry& registry);  // conv_pointwise_depthwise.cc
void register_opt_conv_stem_depthwise(OpRegistry& registry);       // conv_stem_depthwise.cc
void register_opt_conv_batch_norm(OpRegistry& registry);           // conv_batch_norm.cc
void register_opt_conv_transpose(OpRegistry& registry);            // conv_transpose.cc
void register_opt_binary(OpRegistry& registry);                    // binary.cc
void register_opt_layout_concat(OpRegistry& registry);             // layout_concat.cc
void register_opt_pool(OpRegistry& registry);                      // pool.cc
void register_opt_attention(OpRegistry& registry);                 // attention.cc
void register_opt_attention_onnx(OpRegistry& registry);            // attention_onnx.cc
void register_opt_norm_simplified(OpRegistry& registry);           // norm_simplified.cc
void register_opt_rnn(OpRegistry& registry);                       // rnn.cc
void register_opt_resize(OpRegistry& registry);                    // resize.cc
void register_opt_expand(OpRegistry& registry);                    // expand.cc
void register_opt_slice(OpRegistry& registry);                     // slice.cc
void register_opt_batch_norm(OpRegistry& registry);                // batch_norm.cc
void register_opt_pad(OpRegistry& registry);                       // pad.cc
void register_opt_depth_to_space(OpRegistry& registry);            // depth_to_space.cc
void register_opt_group_norm(OpRegistry& registry);                // group_norm.cc

}  // namespace opt

void register_optimized_ops(OpRegistry& registry) {
  // Through the table chosen for this CPU (XONNX_OPT_ISA caps it), read when first called.
  registry.add_row_function("Swish", [](const float* x, float* y, int64_t n) { opt::kernels().swish(x, y, n); });
  registry.add_row_function("HardSwish",
                            [](const float* x, float* y, int64_t n) { opt::kernels().hard_swish(x, y, n); });
  opt::register_opt_matmul(registry);
  opt::register_opt_normalization(registry);
  opt::register_opt_elementwise(registry);
  opt::register_opt_layout(registry);
  opt::register_opt_reduce(registry);
  opt::register_opt_matmul_nbits(registry);
  opt::register_opt_qlinear(registry);
  opt::register_opt_qlinear_depthwise(registry);
  opt::register_opt_quantize(registry);
  opt::register_opt_qgemm(registry);
  opt::register_opt_conv(registry);
  opt::register_opt_conv_depthwise(registry);
  opt::register_opt_conv_pointwise_depthwise(registry);
  opt::register_opt_conv_stem_depthwise(registry);
  opt::register_opt_conv_batch_norm(registry);
  opt::register_opt_conv_transpose(registry);
  opt::register_opt_binary(registry);
  opt::register_opt_layout_concat(registry);
  opt::register_opt_pool(registry);
  opt::register_opt_attention(registry);
  opt::register_opt_attention_onnx(registry);
  opt::register_opt_norm_simplified(registry);
  opt::register_opt_rnn(registry);
  opt::register_opt_resize(registry);
  opt::register_opt_expand(registry);
  opt::register_opt_slice(registry);
  opt::register_opt_batch_norm(registry);
  opt::register_opt_pad(registry);
  opt::register_opt_depth_to_space(registry);
  opt::register_opt_group_norm(registry);
}

}  // namespace xonnx
