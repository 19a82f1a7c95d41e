#include "sdk/cli/optimize.h"

#include <cstdio>

namespace xonnx {
namespace cli {

void add_optimize_option(CLI::App* sub, passes::OptLevel* level) {
  sub->add_option_function<std::string>(
         "--optimize",
         [level](const std::string& text) {
           auto parsed = passes::parse_opt_level(text);
           if (!parsed.is_ok()) throw CLI::ValidationError("--optimize", parsed.status().message());
           *level = *parsed;
         },
         std::string("Graph optimization at session creation: none, basic (folding, no-op/Identity removal, "
                     "float16 computed in float32, CSE, DCE) or all (also BatchNorm folding, MatMul+Add, LayerNorm, GELU fusions); default ") +
             passes::opt_level_name(*level))
      ->check(CLI::IsMember({"none", "basic", "all"}));
}

void print_optimization_report(const passes::PipelineResult& report, passes::OptLevel level) {
  std::printf("optimization: %s", passes::opt_level_name(level));
  if (report.passes.empty()) {
    std::printf("\n");
    return;
  }
  double total = 0;
  for (const passes::PassStats& p : report.passes) total += p.ms;
  std::printf(", %d round(s), %.2f ms; nodes %lld -> %lld\n", report.rounds, total,
              static_cast<long long>(report.before.nodes), static_cast<long long>(report.after.nodes));
  std::printf("  %-26s %5s %8s %8s %9s  %s\n", "pass", "runs", "-nodes", "-inits", "ms", "notes");
  for (const passes::PassStats& p : report.passes) {
    // A table row: the first few notes (session dedup makes one per merged shape constant,
    // hundreds in a transformer), every warning.
    constexpr size_t kNotesShown = 3;
    std::string notes;
    for (size_t i = 0; i < p.notes.size() && i < kNotesShown; ++i) notes += (notes.empty() ? "" : "; ") + p.notes[i];
    if (p.notes.size() > kNotesShown) notes += "; and " + std::to_string(p.notes.size() - kNotesShown) + " more";
    for (const std::string& w : p.warnings) notes += (notes.empty() ? "" : "; ") + ("warning: " + w);
    std::printf("  %-26s %5d %8lld %8lld %9.3f  %s\n", p.name.c_str(), p.runs,
                static_cast<long long>(p.before.nodes - p.after.nodes),
                static_cast<long long>(p.before.initializers - p.after.initializers), p.ms, notes.c_str());
  }
}

}  // namespace cli
}  // namespace xonnx
