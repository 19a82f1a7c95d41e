// Helpers shared by the quantization rewrites (converter/quantize/*.cc); not a public API.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ir/graph_edit.h"

#include "converter/quantize/quantize.h"

namespace xonnx {
namespace convert {

constexpr const char* kMsDomain = "com.microsoft";

// Nibble `index` of packed 4-bit codes: the low half of a byte first, as MatMulNBits stores them.
inline void put_nibble(uint8_t* bytes, int64_t index, uint8_t v) {
  uint8_t& b = bytes[index >> 1];
  b = (index & 1) ? static_cast<uint8_t>((b & 0x0F) | (v << 4)) : static_cast<uint8_t>((b & 0xF0) | (v & 0x0F));
}
inline uint8_t get_nibble(const uint8_t* bytes, int64_t index) {
  return static_cast<uint8_t>((bytes[index >> 1] >> ((index & 1) * 4)) & 0x0F);
}

// A node of the ONNX domain with these inputs and outputs, no attributes.
inline Node make_node(const std::string& name, const char* op, std::vector<std::string> in,
                      std::vector<std::string> out) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// The node's name or op type is listed in options.exclude.
bool is_excluded(const Node& node, const QuantizeOptions& options);
Attribute int_attr(const std::string& name, int64_t value);
// The largest int8 weight code: 127, or 64 with options.reduce_range.
inline long int8_weight_max(const QuantizeOptions& options) { return options.reduce_range ? 64 : 127; }
struct WeightSource {
  std::string name;           // the constant float32 2-D initializer
  bool transposed = false;    // it holds W as [N, K] (Gemm transB=1, or read through a Transpose)
  std::string via_transpose;  // the Transpose output the node read ("" if none)
};
// Why MatMul / Gemm `node` cannot have its weight (input 1) quantized ("" when it can): the
// weight must be a constant float32 2-D initializer, possibly through a 2-D Transpose (a tied
// lm_head after weight dedup); Gemm needs transA 0, alpha 1, beta 1 (with C).
std::string matmul_weight_blocker(const Graph& g, const GraphIndex& index, const Node& node, WeightSource* src);
// Removes the Transpose nodes producing `outputs` that nothing reads any more.
void drop_dead_transposes(Graph& graph, const std::set<std::string>& outputs);
// Removes main-graph initializers nothing reads any more (nodes, subgraphs, graph outputs).
void drop_unused_initializers(Graph& graph);

Status quantize_int4_matmuls(Model& model, const QuantizeOptions& options, QuantizeResult& result);
struct Calibration;  // calibration.h
// int8 static (int8_static.cc). `calibrated`: ranges and means measured by calibrate_int8_static
// for these options or fewer exclusions (the cosine search reuses one calibration); null: measured here.
Status quantize_int8_static(Model& model, const QuantizeOptions& options, QuantizeResult& result,
                            const Calibration* calibrated = nullptr);
Result<Calibration> calibrate_int8_static(const Model& model, const QuantizeOptions& options);
// The indices of the nodes int8 static would quantize, in graph order.
std::vector<size_t> int8_static_targets(const Model& model, const QuantizeOptions& options);
// int8 static with options.target_cosine: keeps the nodes whose quantization costs the most in
// float until the outputs reach the target (cosine_search.cc).
Status quantize_int8_static_to_cosine(Model& model, const QuantizeOptions& options, QuantizeResult& result);
Status quantize_int8_dynamic(Model& model, const QuantizeOptions& options, QuantizeResult& result);
Status quantize_gathers(Model& model, const QuantizeOptions& options, QuantizeResult& result);  // gather_blocks.cc
Status store_weights_as_fp16(Model& model, const QuantizeOptions& options, QuantizeResult& result);

}  // namespace convert
}  // namespace xonnx
