// `xonnx verify A.onnx B.onnx`: runs two models on the same inputs (given or random) and
// compares their outputs (and with --intermediates every value both compute).
#include <cstdio>
#include <fstream>

#include "converter/convert.h"
#include "runtime/onnx/loader.h"
#include "sdk/cli/commands.h"
#include "sdk/cli/inputs.h"
#include "sdk/cli/optimize.h"
#include "sdk/cli/verify_inputs.h"

namespace xonnx {
namespace cli {

void add_verify_input_options(CLI::App* sub, VerifyInputOptions& opt) {
  sub->add_option("--input,-i", opt.files, "NAME=FILE (.npy or TensorProto .pb) for verification; repeatable");
  sub->add_option("--shape", opt.shapes, "NAME=d0,d1,... shape of a random verification input; repeatable");
  sub->add_option("--seed", opt.seed, "Seed for random inputs (default 0)");
}

Result<convert::NamedValues> make_verify_inputs(const std::vector<ValueInfo>& model_inputs,
                                                const VerifyInputOptions& opt) {
  XONNX_ASSIGN_OR_RETURN(InputSpecs specs, parse_input_specs(model_inputs, opt.files, opt.shapes));
  XONNX_ASSIGN_OR_RETURN(std::vector<MadeInput> made, make_inputs(model_inputs, specs, opt.seed));
  convert::NamedValues values;
  for (size_t i = 0; i < made.size(); ++i) values.emplace_back(model_inputs[i].name, Value(made[i].tensor));
  return values;
}

namespace {

struct VerifyCliOptions {
  std::string a, b, report;
  bool intermediates = false;
  VerifyInputOptions inputs;
  double rtol = 1e-4, atol = 1e-5;
  // none by default: each file as written (`--optimize all` compares what sessions run).
  passes::OptLevel optimize = passes::OptLevel::kNone;
};

int run_verify(const VerifyCliOptions& opt) {
  auto a = load_model(opt.a);
  if (!a.is_ok()) {
    std::fprintf(stderr, "error: %s\n", a.status().to_string().c_str());
    return 1;
  }
  auto b = load_model(opt.b);
  if (!b.is_ok()) {
    std::fprintf(stderr, "error: %s\n", b.status().to_string().c_str());
    return 1;
  }
  auto inputs = make_verify_inputs(convert::runtime_inputs(a->graph), opt.inputs);
  if (!inputs.is_ok()) {
    std::fprintf(stderr, "error: %s\n", inputs.status().message().c_str());
    return 2;
  }
  convert::VerifyOptions vo;
  vo.intermediates = opt.intermediates;
  vo.rtol = opt.rtol;
  vo.atol = opt.atol;
  vo.optimization = opt.optimize;
  auto r = convert::verify_models(std::move(a).value(), std::move(b).value(), *inputs, vo);
  if (!r.is_ok()) {
    std::fprintf(stderr, "error: %s\n", r.status().to_string().c_str());
    return 1;
  }
  const std::string md = convert::verify_markdown(*r, vo);
  std::printf("%s", md.c_str());
  if (!opt.report.empty()) {
    std::ofstream out(opt.report);
    out << "# Verification: `" << opt.a << "` vs `" << opt.b << "`\n\n" << md;
    if (!out) {
      std::fprintf(stderr, "error: cannot write the report '%s'\n", opt.report.c_str());
      return 1;
    }
  }
  if (!r->ok()) {
    std::fprintf(stderr, "error: outputs differ beyond rtol %g, atol %g\n", opt.rtol, opt.atol);
    return 1;
  }
  return 0;
}

}  // namespace

Runner add_verify_command(CLI::App& app) {
  auto opt = std::make_shared<VerifyCliOptions>();
  CLI::App* sub = app.add_subcommand("verify", "Compare two models' outputs on the same inputs");
  sub->add_option("a", opt->a, "First (reference) model")->required();
  sub->add_option("b", opt->b, "Second model (same input and output names)")->required();
  sub->add_flag("--intermediates,--verify-intermediates", opt->intermediates,
                "Also compare every value both graphs compute; name the first divergent node");
  add_verify_input_options(sub, opt->inputs);
  sub->add_option("--rtol", opt->rtol, "Relative tolerance (default 1e-4)");
  sub->add_option("--atol", opt->atol, "Absolute tolerance (default 1e-5)");
  add_optimize_option(sub, &opt->optimize);
  sub->add_option("--report", opt->report, "Also write the comparison as markdown to FILE");
  return [opt] { return run_verify(*opt); };
}

}  // namespace cli
}  // namespace xonnx
