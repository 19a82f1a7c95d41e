// `--optimize none|basic|all` for the commands that create sessions (run, bench, info, verify),
// `--output-range` (run, bench), and the table of what session creation did to the graph (info,
// bench --profile).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "runtime/ir/output_range.h"
#include "runtime/passes/pass.h"
#include "runtime/passes/pipeline.h"

namespace xonnx {
namespace cli {

// Registers --optimize on `sub`, writing the parsed level to *level (its value now is the default).
void add_optimize_option(CLI::App* sub, passes::OptLevel* level);

// Registers --output-range NAME:AXIS:START:END (END empty: to the end; repeatable) on `sub`,
// appending to *ranges (SessionOptions::output_ranges).
void add_output_range_option(CLI::App* sub, std::vector<OutputRange>* ranges);

// One line per pass that ran at session creation: runs, nodes and initializers removed, ms, and
// its notes. Prints "optimization: none" when nothing ran.
void print_optimization_report(const passes::PipelineResult& report, passes::OptLevel level);

}  // namespace cli
}  // namespace xonnx
