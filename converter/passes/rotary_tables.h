// What the cos / sin operands of a decomposed rotary embedding compute, whatever way the exporter
// spelled them: rows gathered from constant [positions, head_dim] tables (torch's cached buffers),
// or computed in the graph from the positions (HF transformers >= 4.36: inv_freq @ positions,
// Concat(freqs, freqs), Cos / Sin). Both are a function of one integer positions tensor; the
// tables come out by evaluating that function on positions 0..rows-1 with the reference kernels,
// and a second evaluation on scattered positions proves it works row by row.
#pragma once

#include <cstdint>
#include <string>

#include "converter/passes/passes.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

struct RotaryTables {
  std::string positions;       // the integer value the cos / sin rows are a function of
  int64_t positions_rank = 0;  // 1: [S]; 2: [B, S]
  Tensor cos, sin;             // float32 [rows, head_dim / 2]: ORT's cos_cache / sin_cache
};

// `cos` and `sin` are the values multiplied with x and with rotate(x); x's last dim is head_dim.
// `interleaved`: the angles repeat pairwise (GPT-J) instead of by halves (rotate-half).
// `rows`: how many positions to tabulate when no constant table bounds them (0: unknown); a
// gathered table gives its own row count (capped at `rows` when that is set). The error says
// which check failed.
Result<RotaryTables> rotary_tables(const Model& model, const ShapeFacts& facts, const std::string& cos,
                                   const std::string& sin, int64_t head_dim, bool interleaved, int64_t rows);

}  // namespace convert
}  // namespace xonnx
