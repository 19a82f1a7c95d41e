// xonnx: command-line front end of the runtime (run, info, bench, conformance, convert, verify,
// tokenize, generate, serve, models). Exit codes: 0 success, 1 a model, run or check failed,
// 2 bad arguments (docs/cli.md).
#include <cstdio>
#include <exception>
#include <map>
#include <new>

#include "sdk/cli/commands.h"
#include "sdk/include/xonnx/version.h"

int main(int argc, char** argv) {
  CLI::App app{"xonnx: run ONNX models on edge devices"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "xonnx " XONNX_VERSION_STRING);
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // app.exit prints the help, the version or the error; CLI11's own codes for argument errors
    // (105-109 ...) all become 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (auto& [sub, runner] : runners) {
    if (!sub->parsed()) continue;
    // The runtime returns errors as values, but a model can still exhaust memory in code that
    // allocates freely (protobuf, the converter): report it instead of "terminate called".
    try {
      return runner();
    } catch (const std::bad_alloc&) {
      std::fprintf(stderr, "error: RESOURCE_EXHAUSTED: out of memory\n");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: INTERNAL: unexpected exception: %s\n", e.what());
    }
    return 1;
  }
  return 2;
}
