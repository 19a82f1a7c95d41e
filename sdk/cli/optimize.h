// `--optimize none|basic|all` for the commands that create sessions (run, bench, info, verify),
// and the table of what session creation did to the graph (info, bench --profile).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "runtime/passes/pass.h"
#include "runtime/passes/pipeline.h"

namespace xonnx {
namespace cli {

// Registers --optimize on `sub`, writing the parsed level to *level (its value now is the default).
void add_optimize_option(CLI::App* sub, passes::OptLevel* level);

// One line per pass that ran at session creation: runs, nodes and initializers removed, ms, and
// its notes. Prints "optimization: none" when nothing ran.
void print_optimization_report(const passes::PipelineResult& report, passes::OptLevel level);

}  // namespace cli
}  // namespace xonnx
