// The passes session creation runs (SessionOptions::optimization), in order. The converter runs
// the same functions from converter/pass_list.cc.
#include "runtime/passes/pass.h"
#include "runtime/passes/passes.h"

namespace xonnx {
namespace passes {

const std::vector<PassDef>& session_pass_list() {
  static const std::vector<PassDef> passes = {
      {"constants-to-initializers", 1, constants_to_initializers},
      {"constant-folding", 1, constant_folding},
      {"remove-noop", 1, remove_noop},
      {"transpose-reshape-pairs", 1, collapse_transpose_reshape_pairs},
      {"fuse-batchnorm", 2, fuse_batchnorm},
      {"fuse-matmul-add", 2, fuse_matmul_add},
      {"fuse-layernorm", 2, fuse_layernorm},
      {"fuse-gelu", 2, fuse_gelu},
      {"cse", 1, common_subexpression_elimination},
      {"dead-code", 1, dead_code_elimination},
  };
  return passes;
}

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

}  // namespace passes
}  // namespace xonnx
