// Outputs a caller reads only a range of: a language model's logits at the last position, while
// a prompt computes every position's. The graph gets a Slice in front of each such output, so
// that session creation's narrow-selected-rows pass can move the cut up through the row-wise ops
// that produce it (the LM head then runs for one row instead of the prompt's length).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {

// Rows [start, end) of `axis` of graph output `output`, with ONNX Slice's meaning of negative
// and past-the-end bounds: {"logits", 1, -1, INT64_MAX} is the last position.
struct OutputRange {
  std::string output;
  int64_t axis = 0;
  int64_t start = 0;
  int64_t end = INT64_MAX;
};

// Renames each output's value inside the graph and computes the output as a Slice of it; the
// output's declared dim along `axis` becomes the range's count where the extent is known, else
// unknown. Errors name the range: no such output, an output no node computes (a graph input or
// a constant), an axis outside the declared rank, a range listed twice.
Status apply_output_ranges(Model& model, const std::vector<OutputRange>& ranges);

}  // namespace xonnx
