// The `xonnx` CLI subcommands. Each registers its options on the CLI11 app and returns the
// process exit code when run.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <functional>

namespace xonnx {
namespace cli {

using Runner = std::function<int()>;

Runner add_bench_command(CLI::App& app);
Runner add_conformance_command(CLI::App& app);
Runner add_convert_command(CLI::App& app);
Runner add_info_command(CLI::App& app);
Runner add_run_command(CLI::App& app);
Runner add_verify_command(CLI::App& app);
Runner add_tokenize_command(CLI::App& app);
Runner add_generate_command(CLI::App& app);
Runner add_serve_command(CLI::App& app);
Runner add_models_command(CLI::App& app);

}  // namespace cli
}  // namespace xonnx
