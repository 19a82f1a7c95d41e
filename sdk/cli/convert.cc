// `xonnx convert IN OUT`: the converter (converter/convert.h) with a markdown report, an
// optional verification of OUT against IN, and a progress line on stderr for slow conversions.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "converter/convert.h"
#include "converter/genai_folder.h"
#include "converter/report.h"
#include "sdk/cli/commands.h"
#include "sdk/cli/inputs.h"
#include "sdk/cli/verify_inputs.h"

namespace xonnx {
namespace cli {
namespace {

struct ConvertCliOptions {
  std::string input, output, report;
  int level = 2;
  bool external_data = false;
  bool verify = false;
  bool intermediates = false;
  VerifyInputOptions inputs;
  double rtol = 1e-4, atol = 1e-5;
  std::string quantize;  // "", int8, int4, fp16
  std::string calibration_dir, per_channel = "on", bias_correction = "on", symmetric = "on",
                               calibration_method = "minmax";
  double percentile = 99.999;
  int64_t block_size = 32;
  int64_t accuracy_level = 0;
  std::vector<std::string> exclude;
  double target_cosine = 0;
  bool quantize_gather = false;
  bool reduce_range = false;
  // --genai OUT_DIR: a GenAI model folder instead of OUT (converter/genai_folder.h).
  std::string genai_dir, tokenizer_dir;
  int64_t context_length = 0;
};

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Calibration samples: one sub-folder of `dir` per sample (sorted by name), holding
// `<input name>.npy` or ONNX's `input_K.pb` (K: the input's position) for every model input.
Result<std::vector<convert::NamedValues>> load_calibration(const std::string& dir,
                                                           const std::vector<ValueInfo>& inputs) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return not_found("calibration data folder '", dir, "' cannot be opened");
  std::vector<std::string> samples;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st;
    if (name == "." || name == ".." || ::stat((dir + "/" + name).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    samples.push_back(name);
  }
  ::closedir(d);
  std::sort(samples.begin(), samples.end());
  if (samples.empty()) return invalid_argument("calibration data folder '", dir, "' has no sample sub-folders");
  std::vector<convert::NamedValues> out;
  for (const std::string& sample : samples) {
    convert::NamedValues values;
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::string path = dir + "/" + sample + "/" + inputs[k].name + ".npy";
      if (!is_file(path)) path = dir + "/" + sample + "/input_" + std::to_string(k) + ".pb";
      if (!is_file(path)) {
        return invalid_argument("calibration sample '", dir, "/", sample, "' has neither ", inputs[k].name,
                                ".npy nor input_", k, ".pb");
      }
      auto t = read_input_file(path);
      if (!t.is_ok()) return t.status().with_context("calibration file '" + path + "': ");
      values.emplace_back(inputs[k].name, Value(std::move(t).value()));
    }
    out.push_back(std::move(values));
  }
  return out;
}

// "on"/"off" for the quantization switches.
bool parse_on_off(const std::string& text, const char* option, bool* out) {
  if (text == "on" || text == "off") {
    *out = text == "on";
    return true;
  }
  std::fprintf(stderr, "error: %s must be on or off, got '%s'\n", option, text.c_str());
  return false;
}

// "\r[convert] pass 3/12 constant-folding ..." once stderr is a terminal or a second has passed.
class ProgressLine {
 public:
  ProgressLine() : start_(std::chrono::steady_clock::now()), tty_(isatty(STDERR_FILENO)) {}
  ~ProgressLine() { finish(); }
  void show(const std::string& text) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (!tty_ && s < 1.0) return;
    std::string line = "\r[convert] " + text + " ...";
    if (line.size() < width_) line.append(width_ - line.size(), ' ');
    width_ = line.size();
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    shown_ = true;
  }
  void finish() {
    if (shown_) std::fputs("\n", stderr);
    shown_ = false;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  bool tty_;
  bool shown_ = false;
  size_t width_ = 0;
};

// `--genai OUT_DIR`: int4 (block 32, accuracy_level 4, symmetric) unless --quantize fp32.
int run_convert_genai(const ConvertCliOptions& opt) {
  if (!opt.output.empty()) {
    std::fprintf(stderr, "error: --genai writes a folder: give no OUT model path\n");
    return 2;
  }
  if (opt.verify || opt.intermediates || !opt.calibration_dir.empty() || opt.level != 2) {
    std::fprintf(stderr,
                 "error: --genai takes none of --verify, --verify-intermediates, --calibration-data, --level\n");
    return 2;
  }
  convert::GenaiFolderRequest req;
  req.input_path = opt.input;
  req.out_dir = opt.genai_dir;
  req.tokenizer_dir = opt.tokenizer_dir;
  req.context_length = opt.context_length;
  const std::string mode = opt.quantize.empty() ? "int4" : opt.quantize;
  if (mode == "int4") {
    req.quantize.mode = convert::QuantizeMode::kInt4;
    req.quantize.block_size = opt.block_size;
    req.quantize.accuracy_level = opt.accuracy_level > 0 ? opt.accuracy_level : 4;
    req.quantize.exclude = opt.exclude;
    req.quantize.quantize_gather = opt.quantize_gather;
    if (!parse_on_off(opt.symmetric, "--symmetric", &req.quantize.symmetric)) return 2;
  } else if (mode != "fp32") {
    std::fprintf(stderr, "error: with --genai, --quantize must be int4 (default) or fp32, got '%s'\n", mode.c_str());
    return 2;
  }
  ProgressLine progress;
  req.progress = [&progress](int round, size_t i, size_t n, const char* name) {
    progress.show((round > 1 ? "round " + std::to_string(round) + " " : std::string()) + "pass " +
                  std::to_string(i + 1) + "/" + std::to_string(n) + " " + name);
  };
  req.stage = [&progress](const std::string& stage) { progress.show(stage); };
  auto result = convert::convert_genai_folder(req);
  progress.finish();
  if (!result.is_ok()) {
    std::fprintf(stderr, "error: %s\n", result.status().to_string().c_str());
    return result.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  const convert::ConvertResult& r = result->convert;
  const convert::GenaiSummary& g = result->genai;
  const convert::GenaiLayer first = g.layers.empty() ? convert::GenaiLayer() : g.layers[0];
  std::printf(
      "converted %s -> %s: %zu layers of %s (%lld heads, %lld KV heads, head size %lld), hidden %lld, "
      "vocab %lld, context %lld, %s weights %s, %.1f ms\n",
      r.input_path.c_str(), opt.genai_dir.c_str(), g.layers.size(), g.attention_op.c_str(),
      static_cast<long long>(first.heads), static_cast<long long>(first.kv_heads),
      static_cast<long long>(first.head_size), static_cast<long long>(g.hidden), static_cast<long long>(g.vocab),
      static_cast<long long>(g.context_length), mode.c_str(),
      convert::human_bytes(r.pipeline.after.initializer_bytes + r.quantization.weight_bytes_after -
                           r.quantization.weight_bytes_before)
          .c_str(),
      r.total_ms);
  for (const std::string& n : g.notes) std::printf("note: %s\n", n.c_str());
  for (const std::string& w : r.pipeline.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!opt.report.empty()) {
    std::ofstream out(opt.report);
    out << convert::make_report(r) << "\n" << convert::genai_markdown(g);
    if (!out) {
      std::fprintf(stderr, "error: cannot write the report '%s'\n", opt.report.c_str());
      return 1;
    }
  }
  return 0;
}

int run_convert(const ConvertCliOptions& opt) {
  if (!opt.genai_dir.empty()) return run_convert_genai(opt);
  if (opt.output.empty()) {
    std::fprintf(stderr, "error: give the output model path (or --genai OUT_DIR)\n");
    return 2;
  }
  const std::string& report_path = opt.report;
  if (!report_path.empty() &&
      (convert::same_file(report_path, opt.input) || report_path == opt.input || report_path == opt.output)) {
    std::fprintf(stderr, "error: the report '%s' would overwrite the input or the output\n", report_path.c_str());
    return 2;
  }
  ProgressLine progress;
  convert::ConvertRequest req;
  req.input_path = opt.input;
  req.output_path = opt.output;
  req.options.level = opt.level;
  req.options.external_data = opt.external_data;
  if (!opt.quantize.empty()) {
    auto mode = convert::parse_quantize_mode(opt.quantize);
    if (!mode.is_ok()) {
      std::fprintf(stderr, "error: %s\n", mode.status().to_string().c_str());
      return 2;
    }
    req.quantize.mode = *mode;
  }
  if (!parse_on_off(opt.per_channel, "--per-channel", &req.quantize.per_channel) ||
      !parse_on_off(opt.bias_correction, "--bias-correction", &req.quantize.bias_correction) ||
      !parse_on_off(opt.symmetric, "--symmetric", &req.quantize.symmetric)) {
    return 2;
  }
  req.quantize.block_size = opt.block_size;
  req.quantize.accuracy_level = opt.accuracy_level;
  req.quantize.exclude = opt.exclude;
  req.quantize.target_cosine = opt.target_cosine;
  req.quantize.search_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  req.quantize.quantize_gather = opt.quantize_gather;
  req.quantize.reduce_range = opt.reduce_range;
  req.quantize.calibration_dir = opt.calibration_dir;
  if (opt.calibration_method != "minmax" && opt.calibration_method != "percentile") {
    std::fprintf(stderr, "error: --calibration-method must be minmax or percentile, got '%s'\n",
                 opt.calibration_method.c_str());
    return 2;
  }
  req.quantize.percentile_calibration = opt.calibration_method == "percentile";
  req.quantize.percentile = opt.percentile;
  if (!opt.calibration_dir.empty()) {
    req.make_calibration = [&opt](const std::vector<ValueInfo>& inputs) {
      return load_calibration(opt.calibration_dir, inputs);
    };
  }
  req.progress = [&progress](int round, size_t i, size_t n, const char* name) {
    progress.show((round > 1 ? "round " + std::to_string(round) + " " : std::string()) + "pass " +
                  std::to_string(i + 1) + "/" + std::to_string(n) + " " + name);
  };
  req.stage = [&progress](const std::string& stage) { progress.show(stage); };
  const bool verify = opt.verify || opt.intermediates || !opt.inputs.files.empty() || !opt.inputs.shapes.empty();
  if (verify) {
    req.make_inputs = [&opt](const std::vector<ValueInfo>& inputs) { return make_verify_inputs(inputs, opt.inputs); };
    req.verify.intermediates = opt.intermediates;
    req.verify.rtol = opt.rtol;
    req.verify.atol = opt.atol;
  }
  auto result = convert::convert_file(req);
  progress.finish();
  if (!result.is_ok()) {
    std::fprintf(stderr, "error: %s\n", result.status().to_string().c_str());
    return result.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  const convert::ConvertResult& r = *result;
  const auto& p = r.pipeline;
  std::printf(
      "converted %s -> %s (level %d): nodes %lld -> %lld, initializers %lld -> %lld, %s -> %s, "
      "%.1f ms\n",
      r.input_path.c_str(), r.output_path.c_str(), r.options.level, static_cast<long long>(p.before.nodes),
      static_cast<long long>(p.after.nodes), static_cast<long long>(p.before.initializers),
      static_cast<long long>(p.after.initializers), convert::human_bytes(p.before.initializer_bytes).c_str(),
      convert::human_bytes(p.after.initializer_bytes).c_str(), r.total_ms);
  if (!r.write.external_path.empty()) {
    std::printf("external data: %s (%s)\n", r.write.external_path.c_str(),
                convert::human_bytes(r.write.external_bytes).c_str());
  }
  for (const std::string& w : p.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (r.verified) std::printf("\n%s", convert::verify_markdown(r.verification, r.verify_options).c_str());
  if (r.quantization.mode != convert::QuantizeMode::kNone) {
    const auto& q = r.quantization;
    std::printf("quantized (%s): %zu rewritten, %zu skipped, weights %s -> %s\n", convert::quantize_mode_name(q.mode),
                q.quantized.size(), q.skipped.size(), convert::human_bytes(q.weight_bytes_before).c_str(),
                convert::human_bytes(q.weight_bytes_after).c_str());
  }
  if (r.quant_verified) {
    std::printf("\n%s", convert::quant_verify_markdown(r.quant_verification).c_str());
    if (!r.quant_verification.ok()) {
      std::fprintf(stderr, "warning: some outputs' cosine similarity is below %.2f\n", r.quant_verification.threshold);
    }
  }
  if (!report_path.empty()) {
    std::ofstream out(report_path);
    out << convert::make_report(r);
    if (!out) {
      std::fprintf(stderr, "error: cannot write the report '%s'\n", report_path.c_str());
      return 1;
    }
  }
  if (r.verified && !r.verification.ok()) {
    std::fprintf(stderr, "error: the converted model's outputs differ from the input's\n");
    return 1;
  }
  return 0;
}

}  // namespace

Runner add_convert_command(CLI::App& app) {
  auto opt = std::make_shared<ConvertCliOptions>();
  CLI::App* sub = app.add_subcommand("convert", "Optimize an ONNX model (fold, dedup, fuse) and write it back as ONNX");
  sub->add_option("input", opt->input, "Input model (.onnx)")->required();
  sub->add_option("output", opt->output, "Output model (.onnx); never the input (omit with --genai)");
  sub->add_option("--level", opt->level, "0: rewrite only, 1: clean-up, 2: also folding and fusions (default 2)");
  sub->add_option("--report", opt->report, "Write a markdown report of the conversion to FILE");
  sub->add_flag("--external-data", opt->external_data,
                "Store weights in OUT.data (4096-byte aligned); automatic above 2 GB");
  sub->add_flag("--verify", opt->verify, "Run input and output on the same inputs and compare");
  sub->add_flag("--verify-intermediates", opt->intermediates,
                "Also compare every value both graphs compute; name the first divergent node");
  add_verify_input_options(sub, opt->inputs);
  sub->add_option("--rtol", opt->rtol, "Relative tolerance for --verify (default 1e-4)");
  sub->add_option("--atol", opt->atol, "Absolute tolerance for --verify (default 1e-5)");
  sub->add_option("--quantize", opt->quantize,
                  "int4: MatMul/Gemm weights -> com.microsoft MatMulNBits; int8: static QDQ with "
                  "--calibration-data, else dynamic MatMul/Gemm (MatMulInteger); fp16: float16 weight storage");
  sub->add_option("--block-size", opt->block_size, "int4 block size along K: 32 (default), 64 or 128");
  sub->add_option("--symmetric", opt->symmetric, "int4: on (default, zero point 8) or off (per-block zero points)");
  sub->add_option("--accuracy-level", opt->accuracy_level, "int4: MatMulNBits accuracy_level 0..4 (0: unset)");
  sub->add_flag("--quantize-gather", opt->quantize_gather,
                "int4/int8: also Gather tables (embeddings) -> com.microsoft GatherBlockQuantized");
  sub->add_option("--exclude", opt->exclude, "Node names or op types to keep in float (repeatable)");
  sub->add_option("--calibration-data", opt->calibration_dir,
                  "int8 static (QDQ): a folder with one sub-folder per sample holding <input>.npy or input_K.pb");
  sub->add_option("--target-cosine", opt->target_cosine,
                  "int8 static: keep the nodes whose quantization costs the most in float until every float "
                  "output's cosine similarity to the float model reaches this on each calibration sample");
  sub->add_option("--calibration-method", opt->calibration_method,
                  "int8 static activation ranges: minmax (default) or percentile");
  sub->add_option("--percentile", opt->percentile, "Percentile for --calibration-method percentile (default 99.999)");
  sub->add_option("--per-channel", opt->per_channel, "int8: per-column weight scales on (default) or off (per tensor)");
  sub->add_option("--bias-correction", opt->bias_correction,
                  "int8 static: biases take back the mean shift the weights' rounding causes, on (default) or off");
  sub->add_flag(
      "--reduce-range", opt->reduce_range,
      "int8: 7-bit weights ([-64, 64]) for ONNX Runtime on x86 without VNNI, whose u8s8 kernels saturate otherwise");
  sub->add_option("--genai", opt->genai_dir,
                  "Write an ONNX Runtime GenAI folder (model.onnx + data, genai_config.json, tokenizer) from a "
                  "TorchScript decoder export; --quantize int4 (default) or fp32");
  sub->add_option("--tokenizer", opt->tokenizer_dir,
                  "--genai: folder with tokenizer.json / tokenizer_config.json (default: IN's folder)");
  sub->add_option(
      "--context-length", opt->context_length,
      "--genai: positions of the KV buffers and rotary tables (default: IN's genai_config.json, else the rotary tables' rows)");
  return [opt] { return run_convert(*opt); };
}

}  // namespace cli
}  // namespace xonnx
