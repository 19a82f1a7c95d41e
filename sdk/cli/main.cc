// xonnx: command-line front end of the runtime (run, info, bench, conformance, convert, verify,
// tokenize, generate, serve, models).
#include <cstdio>
#include <map>

#include "sdk/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"xonnx: run ONNX models on edge devices"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "xonnx 0.1.0");
  std::map<CLI::App*, xonnx::cli::Runner> runners;
  auto add = [&](xonnx::cli::Runner (*fn)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    xonnx::cli::Runner r = fn(app);
    runners[app.get_subcommands({})[before]] = r;
  };
  add(xonnx::cli::add_run_command);
  add(xonnx::cli::add_info_command);
  add(xonnx::cli::add_bench_command);
  add(xonnx::cli::add_conformance_command);
  add(xonnx::cli::add_convert_command);
  add(xonnx::cli::add_verify_command);
  add(xonnx::cli::add_tokenize_command);
  add(xonnx::cli::add_generate_command);
  add(xonnx::cli::add_serve_command);
  add(xonnx::cli::add_models_command);
  CLI11_PARSE(app, argc, argv);
  for (auto& [sub, runner] : runners) {
    if (sub->parsed()) return runner();
  }
  return 2;
}
