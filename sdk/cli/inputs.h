// Model inputs for `xonnx run` and `xonnx bench`: read from .npy/.pb files (--input NAME=FILE)
// or made up (floats uniform in [-1, 1), integers and bool zero) with the model's shape, whose
// symbolic dims come from --shape NAME=d0,d1,... (an empty list is a scalar).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/core/limits.h"
#include "runtime/core/tensor.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace cli {

struct InputSpecs {
  std::map<std::string, std::string> files;  // input name -> .npy / .pb path
  std::map<std::string, Shape> shapes;       // input name -> shape for made-up data
  int64_t max_bytes = default_memory_cap();  // the largest input read or made (--max-memory)
};

// Parses NAME=FILE and NAME=d0,d1,... options against the model's inputs. Errors name the bad
// option (syntax, unknown input, negative or non-numeric dim, both given for one input).
Result<InputSpecs> parse_input_specs(const std::vector<ValueInfo>& model_inputs,
                                     const std::vector<std::string>& input_files,
                                     const std::vector<std::string>& shapes);

// Reads a serialized TensorProto (.pb) or a NumPy array (.npy) of at most max_bytes.
Result<Tensor> read_input_file(const std::string& path, int64_t max_bytes = default_memory_cap());

struct MadeInput {
  Tensor tensor;
  bool from_file = false;
};

// One tensor per model input, in order: from its file, else made up (seeded by `seed`).
Result<std::vector<MadeInput>> make_inputs(const std::vector<ValueInfo>& model_inputs, const InputSpecs& specs,
                                           uint32_t seed);

}  // namespace cli
}  // namespace xonnx
