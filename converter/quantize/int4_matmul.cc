// int4 weight-only quantization: MatMul(A, W) and Gemm(A, W[, C]) with a constant float32 2-D W
// become com.microsoft::MatMulNBits(A, W_q4, scales[, zero_points]) (+ Add(C) for Gemm's bias).
// A weight read by several nodes is quantized once; the float copy goes when nothing reads it.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "runtime/ir/graph_edit.h"
#include "converter/quantize/quantize_internal.h"

namespace xonnx {
namespace convert {
namespace {

struct QuantizedWeight {
  std::string packed, scales, zero_points;  // initializer names
  int64_t k = 0, n = 0;
};

Tensor bytes_tensor(const std::vector<uint8_t>& v, Shape shape) {
  return Tensor::from_vector<uint8_t>(v, std::move(shape));
}

Result<QuantizedWeight> quantize_weight(Graph& g, const std::string& name, const Tensor& w, bool transposed,
                                        const QuantizeOptions& opt, QuantizedNode& info) {
  QuantizedWeight q;
  q.k = transposed ? w.dim(1) : w.dim(0);
  q.n = transposed ? w.dim(0) : w.dim(1);
  const float* data = w.data<float>();
  Int4Blocks b = quantize_int4_blockwise(data, q.k, q.n, transposed, opt.block_size, opt.symmetric);
  const std::vector<float> back = dequantize_int4_blockwise(b);
  double max_err = 0;
  for (int64_t kk = 0; kk < q.k; ++kk) {
    for (int64_t nn = 0; nn < q.n; ++nn) {
      const float orig = transposed ? data[nn * q.k + kk] : data[kk * q.n + nn];
      if (std::isfinite(orig)) max_err = std::max(max_err, std::fabs(static_cast<double>(orig - back[kk * q.n + nn])));
    }
  }
  const auto mm = std::minmax_element(b.scales.begin(), b.scales.end());
  info.scale_min = *mm.first;
  info.scale_max = *mm.second;
  info.max_abs_error = max_err;
  info.bytes_before = w.numel() * 4;
  info.bytes_after = static_cast<int64_t>(b.packed.size() + b.scales.size() * 4 + b.zero_points.size());
  const std::string tag = "_Q4B" + std::to_string(opt.block_size) + (transposed ? "_T" : "");
  q.packed = add_initializer(g, name + tag, bytes_tensor(b.packed, {q.n, b.blocks, opt.block_size / 2}));
  q.scales = add_initializer(g, name + tag + "_scales", Tensor::from_vector<float>(b.scales, {q.n * b.blocks}));
  if (!b.zero_points.empty()) {
    q.zero_points = add_initializer(g, name + tag + "_zp",
                                    bytes_tensor(b.zero_points, {static_cast<int64_t>(b.zero_points.size())}));
  }
  return q;
}

}  // namespace

Status quantize_int4_matmuls(Model& model, const QuantizeOptions& opt, QuantizeResult& result) {
  Graph& g = model.graph;
  std::map<std::string, QuantizedWeight> done;  // weight name (+ "|T") -> its quantized form
  std::vector<Node> rewritten;
  rewritten.reserve(g.nodes.size());
  const GraphIndex index(g);
  std::set<std::string> bypassed;  // Transpose outputs no longer read
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node node = g.nodes[i];
    const bool candidate = node.domain.empty() && (node.op_type == "MatMul" || node.op_type == "Gemm");
    if (!candidate) {
      rewritten.push_back(std::move(node));
      continue;
    }
    WeightSource src;
    std::string why = is_excluded(node, opt) ? "excluded (--exclude)" : matmul_weight_blocker(g, index, node, &src);
    if (!why.empty()) {
      result.skipped.push_back({node.describe(), why});
      rewritten.push_back(std::move(node));
      continue;
    }
    const std::string& weight = src.name;
    const bool transposed = src.transposed;
    if (!src.via_transpose.empty()) bypassed.insert(src.via_transpose);
    const std::string key = weight + (transposed ? "|T" : "");
    QuantizedNode info;
    info.node = node.describe();
    info.weight = weight;
    auto it = done.find(key);
    if (it == done.end()) {
      const Tensor w = *constant_tensor(g, weight);  // a copy: add_initializer may reallocate
      XONNX_ASSIGN_OR_RETURN(QuantizedWeight q, quantize_weight(g, weight, w, transposed, opt, info));
      it = done.emplace(key, q).first;
      result.weight_bytes_before += info.bytes_before;
      result.weight_bytes_after += info.bytes_after;
    } else {
      info.as = "(shares the weight quantized above) ";
    }
    const QuantizedWeight& q = it->second;
    Node nb;
    nb.name = node.name.empty() ? std::string() : node.name + "_Q4";
    nb.op_type = "MatMulNBits";
    nb.domain = kMsDomain;
    nb.inputs = {node.inputs[0], q.packed, q.scales};
    if (!q.zero_points.empty()) nb.inputs.push_back(q.zero_points);
    nb.attributes = {int_attr("K", q.k), int_attr("N", q.n), int_attr("bits", 4),
                     int_attr("block_size", opt.block_size)};
    if (opt.accuracy_level > 0) nb.attributes.push_back(int_attr("accuracy_level", opt.accuracy_level));
    const bool has_bias = node.op_type == "Gemm" && node.inputs.size() > 2 && !node.inputs[2].empty();
    if (has_bias) {
      const std::string product = unique_name(g, node.outputs[0] + "_nobias");
      nb.outputs = {product};
      Node add;
      add.name = node.name.empty() ? std::string() : node.name + "_bias";
      add.op_type = "Add";
      add.inputs = {product, node.inputs[2]};
      add.outputs = {node.outputs[0]};
      rewritten.push_back(std::move(nb));
      rewritten.push_back(std::move(add));
    } else {
      nb.outputs = {node.outputs[0]};
      rewritten.push_back(std::move(nb));
    }
    info.as += "MatMulNBits 4-bit, block " + std::to_string(opt.block_size) + ", K=" + std::to_string(q.k) +
               " N=" + std::to_string(q.n) + (opt.symmetric ? ", symmetric" : ", zero points") +
               (has_bias ? " + Add(bias)" : "");
    result.quantized.push_back(std::move(info));
    changed = true;
  }
  g.nodes = std::move(rewritten);
  if (changed) {
    model.opset_imports.emplace(kMsDomain, 1);
    drop_dead_transposes(g, bypassed);
    drop_unused_initializers(g);
  }
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
