// `--verify` for quantized output: exact tolerances make no sense after quantization, so each
// output is judged by cosine similarity, max abs difference and (for outputs with a class axis,
// the last one) top-1 agreement; outputs below the cosine threshold are flagged.
#pragma once

#include <string>
#include <vector>

#include "converter/verify.h"

namespace xonnx {
namespace convert {

struct OutputAgreement {
  std::string name;
  std::string error;  // non-empty: not comparable
  int64_t elements = 0;
  double cosine = 1.0;  // of the flattened outputs (both all-zero: 1)
  double max_abs = 0;
  int64_t rows = 0;   // argmax rows over the last axis (0: no class axis)
  double top1 = 1.0;  // fraction of rows whose argmax agrees
  bool low = false;   // cosine < threshold or error
  // The cosine of the quantized model with its activations not rounded (weights rounded alone,
  // activations still clamped to their ranges): near `cosine`, the weights' rounding is the loss;
  // near 1, the activations' is. -1 when the model quantizes no activation (dynamic, int4, fp16).
  double weights_alone_cosine = -1;
};

struct QuantVerifyResult {
  std::vector<OutputAgreement> outputs;
  double threshold = 0.98;
  bool ok() const;
};

// The quantized model with each activation's QuantizeLinear -> DequantizeLinear pair (per-tensor
// parameters) replaced by the clamp to the range its codes cover, without the rounding; weights
// and biases stay rounded. `pairs` counts the pairs replaced.
Model without_activation_rounding(Model quantized, int* pairs = nullptr);

// Runs both models (functions inlined here) on `inputs` in the runtime and compares outputs by
// name; with activation Q/DQ pairs in `quantized`, also its weights-alone variant.
Result<QuantVerifyResult> compare_quantized(Model original, Model quantized, const NamedValues& inputs, int num_threads,
                                            double threshold = 0.98);
OutputAgreement compare_outputs(const std::string& name, const Value& a, const Value& b, double threshold);
std::string quant_verify_markdown(const QuantVerifyResult& r);

}  // namespace convert
}  // namespace xonnx
