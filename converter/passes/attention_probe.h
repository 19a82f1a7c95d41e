// What a matched attention block computes, checked on probe inputs: a decoder's inputs are made
// up for a few (batch, cached, new) token counts, as ORT GenAI feeds them for unpadded batches
// (input_ids, attention_mask all ones over past + new, past K/V of `past` rows, position_ids
// past..past + new - 1), and the block's computed values must be what the fused op assumes:
// the Reshape / Expand targets split and merge heads, the mask is causal (key j visible to query
// i exactly when j <= past + i), the rotary positions are past + i.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "converter/passes/attention_match.h"
#include "converter/value_probe.h"

namespace xonnx {
namespace convert {

// The decoder's graph inputs by role.
struct DecoderInputs {
  std::string input_ids;                                    // int64 [B, S], read by the embedding Gather
  std::string attention_mask;                               // int64 [B, past + S]; "" when the model has none
  std::string position_ids;                                 // int64 [B, S]; "" when none
  std::map<std::string, std::pair<int64_t, int64_t>> past;  // past K/V input -> (heads, head size)
};

// Assigns roles to the graph inputs; `past` are the K/V inputs the matches read. Fails on an input
// with no role (or past inputs whose heads / head size are not fixed numbers).
Result<DecoderInputs> decoder_inputs(const Graph& g, const GraphIndex& index, const ShapeFacts& facts,
                                     const std::set<std::string>& past);

struct AttentionShape {
  int64_t heads = 0, kv_heads = 0, head_size = 0;
};

class DecoderProbes {
 public:
  DecoderProbes(const Model& model, const ShapeFacts& facts, const DecoderInputs& io);
  // Checks `m` on every probe case; the error names the value and the case that disagree.
  Result<AttentionShape> check(const AttentionMatch& m);

 private:
  struct Case {
    int64_t batch, past, seq;
    Probe probe;
    std::unique_ptr<ValueProbe> values;
  };
  Result<std::vector<int64_t>> ints(Case& c, const std::string& value);
  Status check_mask(Case& c, const AttentionMatch& m, int64_t heads);
  Status check_positions(Case& c, const RotaryUse& r);

  const Model& model_;
  const ShapeFacts& facts_;
  std::vector<Case> cases_;
};

}  // namespace convert
}  // namespace xonnx
