#include "sdk/cli/optimize.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

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
         std::string(
             "Graph optimization at session creation: none, basic (folding, no-op/Identity removal, "
             "float16 computed in float32, CSE, DCE) or all (also BatchNorm folding, MatMul+Add, LayerNorm, GELU fusions); default ") +
             passes::opt_level_name(*level))
      ->check(CLI::IsMember({"none", "basic", "all"}));
}

namespace {

// NAME:AXIS:START:END, the last three fields split off from the right (a name may hold ':').
OutputRange parse_output_range(const std::string& text) {
  const auto fail = [&](const std::string& why) {
    throw CLI::ValidationError("--output-range",
                               "'" + text + "' " + why + " (NAME:AXIS:START:END, END empty: to the end)");
  };
  std::vector<std::string> fields;
  size_t end = text.size();
  for (int i = 0; i < 3; ++i) {
    const size_t colon = end == 0 ? std::string::npos : text.rfind(':', end - 1);
    if (colon == std::string::npos) fail("has fewer than four fields");
    fields.insert(fields.begin(), text.substr(colon + 1, end - colon - 1));
    end = colon;
  }
  OutputRange r;
  r.output = text.substr(0, end);
  if (r.output.empty()) fail("names no output");
  const auto integer = [&](const std::string& field, const char* what) {
    char* stop = nullptr;
    errno = 0;
    const long long v = std::strtoll(field.c_str(), &stop, 10);
    if (field.empty() || *stop != '\0' || errno == ERANGE)
      fail(std::string("has ") + what + " '" + field + "', not an integer");
    return static_cast<int64_t>(v);
  };
  r.axis = integer(fields[0], "axis");
  r.start = integer(fields[1], "start");
  r.end = fields[2].empty() ? INT64_MAX : integer(fields[2], "end");
  return r;
}

}  // namespace

void add_output_range_option(CLI::App* sub, std::vector<OutputRange>* ranges) {
  sub->add_option_function<std::vector<std::string>>(
      "--output-range",
      [ranges](const std::vector<std::string>& texts) {
        for (const std::string& t : texts) ranges->push_back(parse_output_range(t));
      },
      "NAME:AXIS:START:END: compute only rows [START, END) of AXIS of output NAME (ONNX Slice bounds; END empty: to "
      "the end; a language model's last position: logits:1:-1:); repeatable");
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
