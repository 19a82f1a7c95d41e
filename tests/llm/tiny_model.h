// The shipped tiny LLM (tests/models_llm/tiny) as the generation tests read it: its folder and
// ground_truth.json (PyTorch's greedy ids and perplexity), parsed once per test binary.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace xonnx::test {

inline const std::string kTiny = std::string(XONNX_TEST_LLM_DIR) + "/tiny";

inline const nlohmann::json& tiny_ground_truth() {
  static const nlohmann::json j = [] {
    std::ifstream f(kTiny + "/ground_truth.json");
    return nlohmann::json::parse(f);
  }();
  return j;
}

}  // namespace xonnx::test
