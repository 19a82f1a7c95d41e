// Inputs for `xonnx convert --verify` and `xonnx verify`: --input NAME=FILE, --shape
// NAME=d0,..., --seed, turned into named values with inputs.h (random where not given).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "converter/verify.h"

namespace xonnx {
namespace cli {

struct VerifyInputOptions {
  std::vector<std::string> files;   // NAME=FILE
  std::vector<std::string> shapes;  // NAME=d0,d1,...
  uint32_t seed = 0;
};

void add_verify_input_options(CLI::App* sub, VerifyInputOptions& opt);

Result<convert::NamedValues> make_verify_inputs(const std::vector<ValueInfo>& model_inputs,
                                                const VerifyInputOptions& opt);

}  // namespace cli
}  // namespace xonnx
