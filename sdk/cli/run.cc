// `xonnx run MODEL`: runs a model once on .npy/.pb inputs (random where not given) and
// writes one .npy per output.
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "runtime/exec/session.h"
#include "sdk/cli/commands.h"
#include "sdk/cli/inputs.h"
#include "sdk/cli/limit_flags.h"
#include "sdk/cli/npy.h"
#include "sdk/cli/optimize.h"

namespace xonnx {
namespace cli {

namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  std::string output_dir;
  int threads = 1;
  uint32_t seed = 0;
  passes::OptLevel optimize = passes::OptLevel::kAll;
  std::vector<OutputRange> output_ranges;
  LimitFlags limits;
};

std::string safe_file_name(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return s.empty() ? "_" : s;
}

int run_model(const RunOptions& opt) {
  SessionOptions so;
  so.num_threads = opt.threads;
  so.optimization = opt.optimize;
  so.output_ranges = opt.output_ranges;
  if (Status s = apply_limit_flags(opt.limits, so); !s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto session = Session::create(opt.model, so);
  const auto t1 = std::chrono::steady_clock::now();
  if (!session.is_ok()) {
    std::fprintf(stderr, "error: %s\n", session.status().to_string().c_str());
    return 1;
  }
  auto specs = parse_input_specs((*session)->inputs(), opt.inputs, opt.shapes);
  if (!specs.is_ok()) {
    std::fprintf(stderr, "error: %s\n", specs.status().message().c_str());
    return 2;
  }
  specs->max_bytes = so.load.max_memory_bytes;
  auto made = make_inputs((*session)->inputs(), *specs, opt.seed);
  if (!made.is_ok()) {
    std::fprintf(stderr, "error: %s\n", made.status().to_string().c_str());
    return 1;
  }
  std::vector<Value> inputs;
  for (size_t i = 0; i < made->size(); ++i) {
    const Tensor& t = (*made)[i].tensor;
    std::printf("input  %-20s %s %s%s\n", (*session)->inputs()[i].name.c_str(), dtype_name(t.dtype()),
                shape_to_string(t.shape()).c_str(), (*made)[i].from_file ? "" : " (random)");
    inputs.push_back(Value(t));
  }
  const auto t2 = std::chrono::steady_clock::now();
  auto outputs = (*session)->run(inputs);
  const auto t3 = std::chrono::steady_clock::now();
  if (!outputs.is_ok()) {
    std::fprintf(stderr, "error: %s\n", outputs.status().to_string().c_str());
    return 1;
  }
  if (!opt.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opt.output_dir, ec);
    if (ec) {
      std::fprintf(stderr, "error: cannot create '%s': %s\n", opt.output_dir.c_str(), ec.message().c_str());
      return 1;
    }
  }
  const auto& infos = (*session)->outputs();
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Value& v = (*outputs)[i];
    if (!v.is_tensor()) {
      std::printf("output %-20s (not a tensor)\n", infos[i].name.c_str());
      continue;
    }
    const Tensor& t = v.tensor();
    std::printf("output %-20s %s %s", infos[i].name.c_str(), dtype_name(t.dtype()), shape_to_string(t.shape()).c_str());
    if (t.dtype() != DataType::kString) {
      const int64_t shown = std::min<int64_t>(t.numel(), 6);
      std::printf("  [");
      for (int64_t k = 0; k < shown; ++k) std::printf("%s%.6g", k ? ", " : "", t.get_as_double(k));
      std::printf("%s]", t.numel() > shown ? ", ..." : "");
    }
    std::printf("\n");
    if (!opt.output_dir.empty()) {
      const std::string path = opt.output_dir + "/" + safe_file_name(infos[i].name) + ".npy";
      Status s = write_npy(path, t);
      if (!s.is_ok()) {
        std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
        return 1;
      }
    }
  }
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("session %.2f ms, run %.2f ms\n", ms(t0, t1), ms(t2, t3));
  return 0;
}

}  // namespace

Runner add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a model once and write its outputs as .npy");
  sub->add_option("model", opt->model, "Model file (.onnx)")->required();
  sub->add_option("--input,-i", opt->inputs, "NAME=FILE (.npy or TensorProto .pb); repeatable");
  sub->add_option("--shape", opt->shapes,
                  "NAME=d0,d1,... shape of a random input (fixes symbolic dims; empty = scalar); repeatable");
  sub->add_option("--output-dir,-o", opt->output_dir, "Write one .npy per output here");
  sub->add_option("--threads", opt->threads, "Threads (default 1)")->check(CLI::PositiveNumber);
  sub->add_option("--seed", opt->seed, "Seed for random inputs (default 0)");
  add_optimize_option(sub, &opt->optimize);
  add_output_range_option(sub, &opt->output_ranges);
  add_limit_flags(sub, opt->limits);
  return [opt] { return run_model(*opt); };
}

}  // namespace cli
}  // namespace xonnx
