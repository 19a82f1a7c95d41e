// Quantized embeddings (`--quantize-gather`): Gather(table, indices) with a constant float32 2-D
// table [V, D] at axis 0 becomes com.microsoft::GatherBlockQuantized(codes, indices, scales[V,
// ceil(D / block)][, zero_points]) with gather_axis 0, quantize_axis 1, as ONNX Runtime's CPU kernel
// reads it: uint8 codes packed along D (bits 4: two per byte, low nibble first, so D must be
// even; bits 8: one per byte), default zero point 2^(bits-1). int4 mode reuses the MatMulNBits
// block quantizer (int4_blocks.cc), int8 mode quantizes symmetric 8-bit blocks. A table read by
// several Gathers is quantized once; its float copy goes when nothing else reads it (a tied
// lm_head the MatMul rewrite left in float keeps it).
#include <algorithm>
#include <cmath>
#include <map>

#include "runtime/ir/graph_edit.h"
#include "converter/quantize/quantize_internal.h"

namespace xonnx {
namespace convert {
namespace {

struct QuantizedTable {
  std::string codes, scales, zero_points;  // initializer names
};

// The blocks as GatherBlockQuantized stores them, plus the dequantized table for the report.
struct TableBlocks {
  std::vector<uint8_t> codes, zero_points;
  std::vector<float> scales, back;  // back: [V, D] dequantized
};

// 4 bits: the MatMulNBits quantizer on the table as W^T ([N, K] = [V, D]); its rows are padded to
// whole blocks, GatherBlockQuantized's are not, so the codes are repacked row by row.
TableBlocks quantize_table_int4(const float* t, int64_t v, int64_t d, int64_t block, bool symmetric) {
  const Int4Blocks q = quantize_int4_blockwise(t, d, v, /*transposed=*/true, block, symmetric);
  TableBlocks out;
  out.codes.assign(static_cast<size_t>(v * d / 2), 0);
  const int64_t padded = q.blocks * block;
  for (int64_t r = 0; r < v; ++r) {
    for (int64_t c = 0; c < d; ++c)
      put_nibble(out.codes.data(), r * d + c, get_nibble(q.packed.data(), r * padded + c));
  }
  out.scales = q.scales;            // [V * blocks], row-major [V, blocks]
  out.zero_points = q.zero_points;  // [V, ceil(blocks / 2)], low nibble first: the same layout
  const std::vector<float> back_kn = dequantize_int4_blockwise(q);  // [D, V]
  out.back.resize(static_cast<size_t>(v * d));
  for (int64_t r = 0; r < v; ++r) {
    for (int64_t c = 0; c < d; ++c) out.back[r * d + c] = back_kn[c * v + r];
  }
  return out;
}

// 8 bits, symmetric around the default zero point 128: scale = max(-min / 128, max / 127).
TableBlocks quantize_table_int8(const float* t, int64_t v, int64_t d, int64_t block) {
  const int64_t blocks = (d + block - 1) / block;
  TableBlocks out;
  out.codes.assign(static_cast<size_t>(v * d), 128);
  out.scales.assign(static_cast<size_t>(v * blocks), 1.0f);
  out.back.assign(static_cast<size_t>(v * d), 0.0f);
  for (int64_t r = 0; r < v; ++r) {
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t c0 = b * block, c1 = std::min(d, c0 + block);
      float lo = 0.0f, hi = 0.0f;
      for (int64_t c = c0; c < c1; ++c) {
        const float x = t[r * d + c];
        if (std::isfinite(x)) {
          lo = std::min(lo, x);
          hi = std::max(hi, x);
        }
      }
      float scale = std::max(-lo / 128.0f, hi / 127.0f);
      if (!(scale > 0) || !std::isfinite(scale)) scale = 1.0f;  // all-zero block
      out.scales[r * blocks + b] = scale;
      for (int64_t c = c0; c < c1; ++c) {
        const float x = t[r * d + c];
        const int code =
            std::isnan(x) ? 128 : std::min(255, std::max(0, static_cast<int>(std::lround(x / scale)) + 128));
        out.codes[r * d + c] = static_cast<uint8_t>(code);
        out.back[r * d + c] = static_cast<float>(code - 128) * scale;
      }
    }
  }
  return out;
}

// Gathers from computed values or non-float constants (shape arithmetic) are no embeddings:
// not listed as skipped.
bool is_float_table_gather(const Graph& g, const Node& node) {
  if (node.inputs.empty()) return false;
  for (const ValueInfo& vi : g.inputs) {
    if (vi.name == node.inputs[0]) return true;  // reported: an overridable table
  }
  const Tensor* t = constant_tensor(g, node.inputs[0]);
  return t && t->dtype() == DataType::kFloat;
}

// Why Gather `node` cannot read a quantized table ("" when it can).
std::string gather_table_blocker(const Graph& g, const Node& node, int64_t bits) {
  if (node.inputs.size() != 2) return "Gather with an unexpected input count";
  const std::string& name = node.inputs[0];
  for (const ValueInfo& vi : g.inputs) {
    if (vi.name == name) return "table '" + name + "' is a graph input (overridable)";
  }
  const Tensor* t = constant_tensor(g, name);
  if (!t) return "table '" + name + "' is computed at run time, not a constant initializer";
  if (t->dtype() != DataType::kFloat) return std::string("table is ") + dtype_name(t->dtype()) + ", not float32";
  if (t->rank() != 2) return "table is not 2-D (shape " + shape_to_string(t->shape()) + ")";
  if (t->numel() == 0 || !t->raw_data()) return "table is empty";
  const int64_t axis = attr_int_or(node, "axis", 0);
  if (axis != 0 && axis != -2) return "Gather along axis " + std::to_string(axis) + ", not 0";
  if (bits == 4 && t->dim(1) % 2 != 0) {
    return "row length " + std::to_string(t->dim(1)) + " is odd (4-bit codes are packed two per byte per row)";
  }
  return "";
}

QuantizedTable add_table(Graph& g, const std::string& name, const Tensor& table, int64_t bits,
                         const QuantizeOptions& opt, QuantizedNode& info) {
  const int64_t v = table.dim(0), d = table.dim(1);
  const int64_t blocks = (d + opt.block_size - 1) / opt.block_size;
  const float* t = table.data<float>();
  const TableBlocks q = bits == 4 ? quantize_table_int4(t, v, d, opt.block_size, opt.symmetric)
                                  : quantize_table_int8(t, v, d, opt.block_size);
  double max_err = 0;
  for (size_t i = 0; i < q.back.size(); ++i) {
    if (std::isfinite(t[i])) max_err = std::max(max_err, std::fabs(static_cast<double>(t[i]) - q.back[i]));
  }
  const auto mm = std::minmax_element(q.scales.begin(), q.scales.end());
  info.scale_min = *mm.first;
  info.scale_max = *mm.second;
  info.max_abs_error = max_err;
  info.bytes_before = table.numel() * 4;
  info.bytes_after = static_cast<int64_t>(q.codes.size() + q.scales.size() * 4 + q.zero_points.size());
  const std::string tag = "_GBQ" + std::to_string(bits) + "B" + std::to_string(opt.block_size);
  QuantizedTable out;
  out.codes = add_initializer(g, name + tag, Tensor::from_vector<uint8_t>(q.codes, {v, d * bits / 8}));
  out.scales = add_initializer(g, name + tag + "_scales", Tensor::from_vector<float>(q.scales, {v, blocks}));
  if (!q.zero_points.empty()) {
    out.zero_points =
        add_initializer(g, name + tag + "_zp", Tensor::from_vector<uint8_t>(q.zero_points, {v, (blocks + 1) / 2}));
  }
  return out;
}

}  // namespace

Status quantize_gathers(Model& model, const QuantizeOptions& opt, QuantizeResult& result) {
  if (!opt.quantize_gather) return Status::ok();
  const int64_t bits = opt.mode == QuantizeMode::kInt8 ? 8 : 4;
  const bool symmetric = bits == 8 || opt.symmetric;
  Graph& g = model.graph;
  std::map<std::string, QuantizedTable> done;  // table name -> its quantized form
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!g.nodes[i].domain.empty() || g.nodes[i].op_type != "Gather" || !is_float_table_gather(g, g.nodes[i])) continue;
    const std::string why =
        is_excluded(g.nodes[i], opt) ? "excluded (--exclude)" : gather_table_blocker(g, g.nodes[i], bits);
    if (!why.empty()) {
      result.skipped.push_back({g.nodes[i].describe(), why});
      continue;
    }
    const std::string table = g.nodes[i].inputs[0];
    QuantizedNode info;
    info.node = g.nodes[i].describe();
    info.weight = table;
    auto it = done.find(table);
    if (it == done.end()) {
      const Tensor t = *constant_tensor(g, table);  // a copy: add_initializer may reallocate
      it = done.emplace(table, add_table(g, table, t, bits, opt, info)).first;
      // A tied table the MatMul rewrite already counted adds only its new copy.
      const bool counted = std::any_of(result.quantized.begin(), result.quantized.end(),
                                       [&](const QuantizedNode& q) { return q.weight == table; });
      if (!counted) result.weight_bytes_before += info.bytes_before;
      result.weight_bytes_after += info.bytes_after;
    } else {
      info.as = "(shares the table quantized above) ";
    }
    const Tensor& shape_of = *constant_tensor(g, table);
    info.as += "GatherBlockQuantized " + std::to_string(bits) + "-bit, block " + std::to_string(opt.block_size) +
               ", V=" + std::to_string(shape_of.dim(0)) + " D=" + std::to_string(shape_of.dim(1)) +
               (symmetric ? ", symmetric" : ", zero points");
    Node& node = g.nodes[i];
    const QuantizedTable& q = it->second;
    if (!node.name.empty()) node.name += "_Q" + std::to_string(bits);
    node.op_type = "GatherBlockQuantized";
    node.domain = kMsDomain;
    node.inputs = {q.codes, node.inputs[1], q.scales};
    if (!q.zero_points.empty()) node.inputs.push_back(q.zero_points);
    node.attributes = {int_attr("gather_axis", 0), int_attr("quantize_axis", 1), int_attr("block_size", opt.block_size),
                       int_attr("bits", bits)};
    result.quantized.push_back(std::move(info));
    changed = true;
  }
  if (changed) {
    model.opset_imports.emplace(kMsDomain, 1);
    drop_unused_initializers(g);
  }
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
