#include "converter/report.h"

#include <cstdio>
#include <set>
#include <sstream>

namespace xonnx {
namespace convert {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

template <typename T>
std::string arrow(T before, T after) {
  std::ostringstream os;
  os << before << " → " << after;
  return os.str();
}

std::string bytes_arrow(int64_t before, int64_t after) { return human_bytes(before) + " → " + human_bytes(after); }

void summary(std::ostringstream& os, const ConvertResult& r) {
  const PipelineResult& p = r.pipeline;
  os << "# Conversion report\n\n";
  os << "| | |\n|---|---|\n";
  os << "| input | `" << r.input_path << "` (" << human_bytes(r.input_file_bytes) << ") |\n";
  os << "| output | `" << r.output_path << "` (" << human_bytes(r.write.model_bytes) << ")";
  if (!r.write.external_path.empty()) {
    os << " + `" << r.write.external_path << "` (" << human_bytes(r.write.external_bytes) << ", "
       << r.write.external_tensors << " tensors, 4096-byte aligned"
       << (r.write.external_forced ? ", forced: over 2 GB" : "") << ")";
  }
  os << " |\n";
  os << "| level | " << r.options.level << " |\n";
  os << "| nodes | " << arrow(p.before.nodes, p.after.nodes) << " |\n";
  os << "| initializers | " << arrow(p.before.initializers, p.after.initializers) << " |\n";
  os << "| initializer bytes | " << bytes_arrow(p.before.initializer_bytes, p.after.initializer_bytes) << " |\n";
  os << "| rounds | " << p.rounds << (p.reached_fixed_point ? " (fixed point)" : " (cap hit)") << " |\n";
  os << "| time | load " << fixed(r.load_ms, 1) << " ms, passes " << fixed(p.ms, 1) << " ms, write "
     << fixed(r.write_ms, 1) << " ms";
  if (r.verified) os << ", verify " << fixed(r.verify_ms, 1) << " ms";
  os << ", total " << fixed(r.total_ms, 1) << " ms |\n\n";
}

void pass_table(std::ostringstream& os, const PipelineResult& p) {
  os << "## Passes\n\n";
  if (p.passes.empty()) {
    os << "No passes ran at this level.\n\n";
    return;
  }
  os << "| pass | runs (changed) | nodes | initializers | initializer bytes | time |\n"
        "|---|---:|---:|---:|---:|---:|\n";
  for (const PassStats& s : p.passes) {
    os << "| " << s.name << " | " << s.runs << " (" << s.changed_runs << ") | " << arrow(s.before.nodes, s.after.nodes)
       << " | " << arrow(s.before.initializers, s.after.initializers) << " | "
       << bytes_arrow(s.before.initializer_bytes, s.after.initializer_bytes) << " | " << fixed(s.ms, 2) << " ms |\n";
  }
  os << "\nBefore → after counts a pass's own changes over all rounds, starting from the model "
        "it first saw.\n\n";
}

void histogram(std::ostringstream& os, const PipelineResult& p) {
  os << "## Operators\n\n| op | before | after |\n|---|---:|---:|\n";
  std::set<std::string> ops;
  for (const auto& [op, n] : p.ops_before) ops.insert(op);
  for (const auto& [op, n] : p.ops_after) ops.insert(op);
  for (const std::string& op : ops) {
    auto b = p.ops_before.find(op);
    auto a = p.ops_after.find(op);
    os << "| " << markdown_cell(op) << " | " << (b == p.ops_before.end() ? 0 : b->second) << " | "
       << (a == p.ops_after.end() ? 0 : a->second) << " |\n";
  }
  os << "\n";
}

void notes(std::ostringstream& os, const PipelineResult& p) {
  bool any_notes = false;
  for (const PassStats& s : p.passes) any_notes = any_notes || !s.notes.empty() || s.bytes_saved;
  if (any_notes) {
    os << "## What the passes did\n\n";
    for (const PassStats& s : p.passes) {
      if (s.notes.empty() && !s.bytes_saved) continue;
      os << "### " << s.name << "\n\n";
      if (s.bytes_saved) os << "Bytes saved: " << human_bytes(s.bytes_saved) << "\n\n";
      for (const std::string& n : s.notes) os << "- " << n << "\n";
      os << "\n";
    }
  }
  std::vector<std::string> warnings = p.warnings;
  for (const PassStats& s : p.passes) {
    for (const std::string& w : s.warnings) warnings.push_back(s.name + ": " + w);
  }
  os << "## Warnings and limits\n\n";
  if (warnings.empty()) os << "None.\n";
  for (const std::string& w : warnings) os << "- " << w << "\n";
  os << "\n";
}

}  // namespace

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string human_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes < 0) return "-" + human_bytes(-bytes);
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (b < 1024.0 * 1024) return fixed(b / 1024, 1) + " KB";
  if (b < 1024.0 * 1024 * 1024) return fixed(b / (1024.0 * 1024), 1) + " MB";
  return fixed(b / (1024.0 * 1024 * 1024), 2) + " GB";
}

std::string make_report(const ConvertResult& r) {
  std::ostringstream os;
  summary(os, r);
  pass_table(os, r.pipeline);
  histogram(os, r.pipeline);
  notes(os, r.pipeline);
  if (r.verified) {
    os << "## Verification\n\nThe input and the written output run in the xonnx runtime on the same "
          "inputs; differences are output − input.\n\n";
    os << verify_markdown(r.verification, r.verify_options);
    os << "\nResult: " << (r.verification.ok() ? "**all outputs match**" : "**outputs differ**") << "\n";
  }
  if (r.quantization.mode != QuantizeMode::kNone) os << "\n" << quantize_markdown(r.quantization);
  if (r.quant_verified) {
    os << "\n## Verification (quantized vs original)\n\n" << quant_verify_markdown(r.quant_verification);
    os << "\nResult: "
       << (r.quant_verification.ok() ? "**all outputs above the cosine threshold**"
                                     : "**some outputs below the cosine threshold**")
       << "\n";
  }
  return os.str();
}

}  // namespace convert
}  // namespace xonnx
