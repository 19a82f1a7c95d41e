// `xonnx convert IN OUT`: the converter (converter/convert.h) with a markdown report, an
// optional verification of OUT against IN, and a progress line on stderr for slow conversions.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>

#include "converter/convert.h"
#include "converter/report.h"
#include "sdk/cli/commands.h"
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
};

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

int run_convert(const ConvertCliOptions& opt) {
  const std::string& report_path = opt.report;
  if (!report_path.empty() &&
      (convert::same_file(report_path, opt.input) || report_path == opt.input ||
       report_path == opt.output)) {
    std::fprintf(stderr, "error: the report '%s' would overwrite the input or the output\n", report_path.c_str());
    return 2;
  }
  ProgressLine progress;
  convert::ConvertRequest req;
  req.input_path = opt.input;
  req.output_path = opt.output;
  req.options.level = opt.level;
  req.options.external_data = opt.external_data;
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
  std::printf("converted %s -> %s (level %d): nodes %lld -> %lld, initializers %lld -> %lld, %s -> %s, "
              "%.1f ms\n",
              r.input_path.c_str(), r.output_path.c_str(), r.options.level,
              static_cast<long long>(p.before.nodes), static_cast<long long>(p.after.nodes),
              static_cast<long long>(p.before.initializers), static_cast<long long>(p.after.initializers),
              convert::human_bytes(p.before.initializer_bytes).c_str(),
              convert::human_bytes(p.after.initializer_bytes).c_str(), r.total_ms);
  if (!r.write.external_path.empty()) {
    std::printf("external data: %s (%s)\n", r.write.external_path.c_str(),
                convert::human_bytes(r.write.external_bytes).c_str());
  }
  for (const std::string& w : p.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (r.verified) std::printf("\n%s", convert::verify_markdown(r.verification, r.verify_options).c_str());
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
  sub->add_option("output", opt->output, "Output model (.onnx); never the input")->required();
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
  return [opt] { return run_convert(*opt); };
}

}  // namespace cli
}  // namespace xonnx
