#include "converter/convert.h"

#include <sys/stat.h>

#include <chrono>
#include <set>

#include "runtime/onnx/external_data.h"
#include "runtime/onnx/loader.h"
#include "runtime/passes/session_passes.h"
#include "runtime/passes/validate.h"

namespace xonnx {
namespace convert {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

Status check_options(const ConvertOptions& options) {
  if (options.level < 0 || options.level > 2) {
    return invalid_argument("level ", options.level, " is not 0, 1 or 2");
  }
  if (options.fold_size_limit_bytes < 0) return invalid_argument("the folding size limit is negative");
  return Status::ok();
}

// Marks the output as optimized on the host, so that a device build without the graph-pass
// library (XONNX_WITH_PASSES=OFF) knows not to warn about it. Level 0 optimized nothing.
void stamp_level(Model& model, const ConvertOptions& options) {
  if (options.level > 0) passes::stamp_converted(model, static_cast<passes::OptLevel>(options.level));
}

}  // namespace

std::vector<ValueInfo> runtime_inputs(const Graph& g) {
  std::set<std::string> initialized;
  for (const NamedTensor& t : g.initializers) initialized.insert(t.name);
  std::vector<ValueInfo> inputs;
  for (const ValueInfo& v : g.inputs) {
    if (!initialized.count(v.name)) inputs.push_back(v);
  }
  return inputs;
}

Result<ConvertResult> convert_file(const ConvertRequest& request) {
  const auto start = Clock::now();
  XONNX_RETURN_IF_ERROR(check_options(request.options));
  {
    QuantizeOptions q = request.quantize;  // the samples are read later: one stand-in checks the rest now
    if (request.make_calibration) {
      q.calibration_dir.clear();
      q.calibration.resize(1);
    }
    XONNX_RETURN_IF_ERROR(check_quantize_options(q));
  }
  ConvertResult result;
  result.input_path = request.input_path;
  result.output_path = request.output_path;
  result.options = request.options;
  struct stat st;
  if (::stat(request.input_path.c_str(), &st) != 0) {
    return not_found("input model '", request.input_path, "' does not exist");
  }
  if (S_ISDIR(st.st_mode)) return invalid_argument("input '", request.input_path, "' is a directory");
  result.input_file_bytes = static_cast<int64_t>(st.st_size);
  WriteOptions write = request.write;
  write.external_data = write.external_data || request.options.external_data;
  write.protected_paths.push_back(request.input_path);
  XONNX_RETURN_IF_ERROR(check_output_path(request.output_path, write.protected_paths));

  auto say = [&request](const std::string& stage) {
    if (request.stage) request.stage(stage);
  };
  say("loading " + request.input_path);
  auto t0 = Clock::now();
  LoadOptions load;
  load.inline_functions = false;
  // Every file the loader read (IN and each external data file, whoever names it) is
  // protected; the check runs again before the (possibly long) conversion and at writing.
  XONNX_ASSIGN_OR_RETURN(Model model, load_model_listing_files(request.input_path, load, &write.protected_files));
  XONNX_RETURN_IF_ERROR(check_output_path(request.output_path, write.protected_paths, write.protected_files));
  // What session creation would reject (cycles, two writers, dangling reads, unknown ops,
  // bad If/Loop/Scan bodies) is refused before converting and checked again after.
  XONNX_RETURN_IF_ERROR(validate_model(model).with_context("invalid input model: "));
  result.load_ms = ms_since(t0);
  // Verification inputs are made (and checked) before anything is written.
  NamedValues verify_inputs;
  if (request.make_inputs) {
    XONNX_ASSIGN_OR_RETURN(verify_inputs, request.make_inputs(runtime_inputs(model.graph)));
  }

  QuantizeOptions quantize = request.quantize;
  if (request.make_calibration) {
    say("reading calibration samples");
    XONNX_ASSIGN_OR_RETURN(quantize.calibration, request.make_calibration(runtime_inputs(model.graph)));
  }
  const std::vector<PassDef>& passes = request.passes ? *request.passes : pass_list();
  XONNX_ASSIGN_OR_RETURN(result.pipeline, run_pipeline(model, passes, request.options, request.progress));
  stamp_level(model, request.options);
  if (request.after_passes) XONNX_RETURN_IF_ERROR(request.after_passes(model, result.pipeline));
  if (request.quantize.mode != QuantizeMode::kNone) {
    say(std::string("quantizing (") + quantize_mode_name(request.quantize.mode) + ")");
    XONNX_ASSIGN_OR_RETURN(result.quantization, quantize_model(model, quantize));
  }
  XONNX_RETURN_IF_ERROR(
      validate_model(model).with_context("the converted model is invalid (a converter bug; nothing was written): "));

  say("writing " + request.output_path);
  t0 = Clock::now();
  XONNX_RETURN_IF_ERROR(write_model(model, request.output_path, write, &result.write));
  result.write_ms = ms_since(t0);

  if (request.make_inputs) {
    say("verifying");
    t0 = Clock::now();
    model = Model();  // release the converted IR before loading both files
    XONNX_ASSIGN_OR_RETURN(Model original, load_model(request.input_path, load));
    XONNX_ASSIGN_OR_RETURN(Model converted, load_model(request.output_path, load));
    if (request.quantize.mode != QuantizeMode::kNone) {
      XONNX_ASSIGN_OR_RETURN(result.quant_verification, compare_quantized(std::move(original), std::move(converted),
                                                                          verify_inputs, request.verify.num_threads));
      result.quant_verified = true;
    } else {
      XONNX_ASSIGN_OR_RETURN(result.verification,
                             verify_models(std::move(original), std::move(converted), verify_inputs, request.verify));
      result.verified = true;
    }
    result.verify_options = request.verify;
    result.verify_ms = ms_since(t0);
  }
  result.total_ms = ms_since(start);
  return result;
}

Result<std::string> convert_model_to_bytes(Model model, const ConvertOptions& options,
                                           const std::vector<PassDef>* passes, PipelineResult* pipeline) {
  XONNX_RETURN_IF_ERROR(check_options(options));
  XONNX_ASSIGN_OR_RETURN(PipelineResult r, run_pipeline(model, passes ? *passes : pass_list(), options));
  stamp_level(model, options);
  if (pipeline) *pipeline = std::move(r);
  return serialize_model(model);
}

}  // namespace convert
}  // namespace xonnx
