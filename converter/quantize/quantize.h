// Weight quantization in the converter (`xonnx convert --quantize int4|fp16`): rewrites a loaded,
// optimized model in place after the pass pipeline and before the writer.
//   int4: MatMul / Gemm with a constant 2-D float weight -> com.microsoft::MatMulNBits (bits 4,
//         block-wise along K, symmetric by default), laid out as ONNX Runtime's contrib-op spec says.
//   int8: with calibration samples, static QDQ as ORT's quantize_static (Conv / MatMul / Gemm);
//         without, dynamic, as ORT's quantize_dynamic: MatMul / Gemm weights int8,
//         activations quantized at run time (DynamicQuantizeLinear + MatMulInteger).
//   fp16: float initializers of >= 1 KB stored as float16, with a Cast(to=float) after each.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace convert {

using NamedValues = std::vector<std::pair<std::string, Value>>;  // as in verify.h

enum class QuantizeMode { kNone, kInt8, kInt4, kFp16 };

struct QuantizeOptions {
  QuantizeMode mode = QuantizeMode::kNone;
  int64_t block_size = 32;               // int4: 16, 32, 64 or 128 (a power of two >= 16)
  bool symmetric = true;                 // int4: zero point 8 implied; false: per-block zero points
  int64_t accuracy_level = 0;            // int4: written to MatMulNBits when > 0 (0 = unset)
  std::vector<std::string> exclude;      // node names or op types kept in float
  int64_t fp16_min_bytes = 1024;         // fp16: smaller initializers stay float32
  std::string calibration_dir;           // int8 static: where the samples came from (for messages)
  std::vector<NamedValues> calibration;  // int8: non-empty selects static QDQ (else dynamic)
  // int8 static: activation ranges from min-max, or clipped to the central `percentile` % of values.
  bool percentile_calibration = false;
  double percentile = 99.999;
  bool per_channel = true;  // int8: one weight scale per output column (else per tensor)
  // int8 static: each quantized node's bias takes back the shift of its outputs' mean that the
  // weights' rounding causes, from its input's channel means over the calibration samples.
  bool bias_correction = true;
  // int8: weights in [-64, 64] (7 bits) instead of [-127, 127]. ONNX Runtime's u8s8 kernels on
  // x86 without VNNI add pairs of uint8 x int8 products in int16 (vpmaddubsw), which saturates
  // above 32767 with full-range weights; 2 x 255 x 64 fits. ORT's quantizer calls it reduce_range.
  bool reduce_range = false;
  // int8 static: when > 0, the nodes whose quantization costs the most stay in float until every
  // float output's cosine similarity to the float model reaches this (at most 1) on each of the
  // second half of the calibration samples, quantized with ranges from the first half (on the
  // one sample when there is one); 0: every eligible node is quantized (cosine_search.cc).
  double target_cosine = 0;
  // The threads of the runs that search for those nodes (at least 1).
  int search_threads = 1;
  // int4 / int8: also Gather tables (embeddings) -> com.microsoft GatherBlockQuantized (4 / 8 bits).
  bool quantize_gather = false;
};

// "int4" -> kInt4 ...; an error names the accepted values.
Result<QuantizeMode> parse_quantize_mode(const std::string& text);
const char* quantize_mode_name(QuantizeMode mode);
Status check_quantize_options(const QuantizeOptions& options);

struct QuantizedNode {
  std::string node;    // "node 'x' (MatMul)"
  std::string weight;  // the float initializer it read
  std::string as;      // "MatMulNBits 4-bit, block 32, K=384 N=1536" / "float16 + Cast"
  int64_t bytes_before = 0, bytes_after = 0;
  double scale_min = 0, scale_max = 0;  // int4: over all blocks
  double max_abs_error = 0;             // int4: max |w - dequantized w|
};

struct SkippedNode {
  std::string node;
  std::string why;
};

// What int8 static's search for options.target_cosine did.
struct CosineSearch {
  bool ran = false;
  double target = 0;
  int64_t held_out_samples = 0;     // the calibration samples trials are judged on
  double cosine_all_quantized = 1;  // the smallest output cosine over those, before
  double cosine = 1;                // the same with `kept_float` in float
  int64_t candidates = 0;           // the nodes int8 static would quantize
  int64_t trials = 0;               // quantized models built and run
  double seconds = 0;
  struct Kept {
    std::string node;
    double cosine_alone = 1;  // the model's cosine with only this node quantized
  };
  std::vector<Kept> kept_float;  // most damaging first
};

struct QuantizeResult {
  QuantizeMode mode = QuantizeMode::kNone;
  QuantizeOptions options;
  std::vector<QuantizedNode> quantized;
  std::vector<SkippedNode> skipped;
  int64_t weight_bytes_before = 0, weight_bytes_after = 0;  // of the rewritten weights only
  CosineSearch search;
};

// Rewrites `model` (its main graph; subgraphs are left alone) per options.mode. kNone is a no-op.
Result<QuantizeResult> quantize_model(Model& model, const QuantizeOptions& options);

// The report section (markdown).
std::string quantize_markdown(const QuantizeResult& result);

// --- the int4 block layout, exposed for tests ---

// W is [K, N] (row-major, w[k * N + n]) or, with `transposed`, [N, K]. Per ORT's MatMulNBits:
// packed is uint8 [N, blocks, block_size / 2] with element k of a block in the low nibble for
// even k; scales [N * blocks]; zero_points (asymmetric only) uint8 [N * ceil(blocks / 2)], block
// b of column n in byte n * ceil(blocks / 2) + b / 2, low nibble for even b. K is padded with the
// zero point (dequantizes to 0).
struct Int4Blocks {
  int64_t k = 0, n = 0, block_size = 0, blocks = 0;
  std::vector<uint8_t> packed;
  std::vector<float> scales;
  std::vector<uint8_t> zero_points;  // empty when symmetric
};
Int4Blocks quantize_int4_blockwise(const float* w, int64_t k, int64_t n, bool transposed, int64_t block_size,
                                   bool symmetric);
// The float [K, N] weight the blocks represent.
std::vector<float> dequantize_int4_blockwise(const Int4Blocks& q);

}  // namespace convert
}  // namespace xonnx
