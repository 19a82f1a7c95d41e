// The converter's entry point for the CLI and tests: load (functions kept) -> pipeline ->
// write -> optional verification of the written file against the input.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "converter/passes/passes.h"
#include "converter/quantize/quant_verify.h"
#include "converter/quantize/quantize.h"
#include "converter/verify.h"
#include "converter/writer.h"

namespace xonnx {
namespace convert {

struct ConvertRequest {
  std::string input_path;
  std::string output_path;
  ConvertOptions options;
  QuantizeOptions quantize;                             // applied after the pipeline, before writing (mode kNone: off)
  WriteOptions write;                                   // protected_paths gets IN and its data files added
  const std::vector<PassDef>* passes = nullptr;         // null: pass_list()
  ProgressFn progress;                                  // may be null: called before each pass
  std::function<void(const std::string& stage)> stage;  // may be null: "loading", "writing", ...
  // Verification: set make_inputs to verify; it gets the input model's graph inputs
  // (initializers excluded) and returns a value for each.
  std::function<Result<NamedValues>(const std::vector<ValueInfo>&)> make_inputs;
  VerifyOptions verify;
  // int8 static: set to read calibration samples; gets the same inputs as make_inputs. The
  // samples land in quantize.calibration before the pipeline runs.
  std::function<Result<std::vector<NamedValues>>(const std::vector<ValueInfo>&)> make_calibration;
  // May be null: runs on the optimized model after the pipeline and before quantization (the
  // GenAI folder writer checks and renames the decoder's interface there); an error stops the
  // conversion before anything is written.
  std::function<Status(Model&, const PipelineResult&)> after_passes;
};

struct ConvertResult {
  std::string input_path, output_path;
  int64_t input_file_bytes = 0;
  ConvertOptions options;
  PipelineResult pipeline;
  WriteStats write;
  double load_ms = 0, write_ms = 0, verify_ms = 0, total_ms = 0;
  bool verified = false;
  VerifyResult verification;
  VerifyOptions verify_options;
  QuantizeResult quantization;  // mode kNone when not quantized
  // With quantization, verification compares by cosine / top-1 instead of tolerances.
  bool quant_verified = false;
  QuantVerifyResult quant_verification;
};

// Errors (bad level, unreadable or invalid IN, IN == OUT, a failing pass, unwritable OUT)
// leave nothing written.
Result<ConvertResult> convert_file(const ConvertRequest& request);

// In memory: converts a loaded model (functions kept) and returns the serialized result.
Result<std::string> convert_model_to_bytes(Model model, const ConvertOptions& options,
                                           const std::vector<PassDef>* passes = nullptr,
                                           PipelineResult* pipeline = nullptr);

// Graph inputs that are not initializers (what a caller must feed).
std::vector<ValueInfo> runtime_inputs(const Graph& g);

}  // namespace convert
}  // namespace xonnx
