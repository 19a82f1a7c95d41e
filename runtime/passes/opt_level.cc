// Optimization levels and the converter's stamp: compiled in every build, with or without the
// graph-pass library (the C API, the CLI and the session parse and show them either way).
#include "runtime/passes/pass.h"
#include "runtime/passes/session_passes.h"

namespace xonnx {
namespace passes {

const char* opt_level_name(OptLevel level) {
  switch (level) {
    case OptLevel::kNone: return "none";
    case OptLevel::kBasic: return "basic";
    case OptLevel::kAll: return "all";
  }
  return "?";
}

Result<OptLevel> parse_opt_level(const std::string& text) {
  if (text == "none" || text == "0") return OptLevel::kNone;
  if (text == "basic" || text == "1") return OptLevel::kBasic;
  if (text == "all" || text == "2") return OptLevel::kAll;
  return invalid_argument("optimization level '", text, "': expected none, basic or all");
}

std::string converted_level(const Model& model) {
  for (const auto& [key, value] : model.metadata_props) {
    if (key == kConvertedMetadataKey) return value;
  }
  return "";
}

void stamp_converted(Model& model, OptLevel level) {
  for (auto& [key, value] : model.metadata_props) {
    if (key == kConvertedMetadataKey) {
      value = opt_level_name(level);
      return;
    }
  }
  model.metadata_props.emplace_back(kConvertedMetadataKey, opt_level_name(level));
}

}  // namespace passes
}  // namespace xonnx
