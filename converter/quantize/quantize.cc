// The quantization entry point: option checks, the mode dispatch and the report section.
#include "converter/quantize/quantize.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "runtime/ir/graph_edit.h"
#include "converter/quantize/quantize_internal.h"
#include "converter/report.h"

namespace xonnx {
namespace convert {

Result<QuantizeMode> parse_quantize_mode(const std::string& text) {
  if (text == "int8") return QuantizeMode::kInt8;
  if (text == "int4") return QuantizeMode::kInt4;
  if (text == "fp16") return QuantizeMode::kFp16;
  if (text == "none" || text.empty()) return QuantizeMode::kNone;
  return invalid_argument("--quantize '", text, "' is not int8, int4 or fp16");
}

const char* quantize_mode_name(QuantizeMode mode) {
  switch (mode) {
    case QuantizeMode::kInt8: return "int8";
    case QuantizeMode::kInt4: return "int4";
    case QuantizeMode::kFp16: return "fp16";
    case QuantizeMode::kNone: break;
  }
  return "none";
}

Status check_quantize_options(const QuantizeOptions& o) {
  if (o.block_size < 16 || o.block_size > 256 || (o.block_size & (o.block_size - 1)) != 0) {
    return invalid_argument("block size ", o.block_size, " is not a power of two in 16..256 (use 32, 64 or 128)");
  }
  if (o.accuracy_level < 0 || o.accuracy_level > 4) {
    return invalid_argument("accuracy level ", o.accuracy_level, " is not 0..4");
  }
  if (!(o.percentile > 50.0 && o.percentile <= 100.0)) {
    return invalid_argument("percentile ", o.percentile, " is not in (50, 100]");
  }
  if (o.quantize_gather && o.mode != QuantizeMode::kInt4 && o.mode != QuantizeMode::kInt8) {
    return invalid_argument("--quantize-gather applies to --quantize int4 or int8 only");
  }
  if (!(o.target_cosine >= 0.0 && o.target_cosine <= 1.0)) {
    return invalid_argument("target cosine ", o.target_cosine, " is not in [0, 1] (0: no target)");
  }
  if (o.target_cosine > 0 && (o.mode != QuantizeMode::kInt8 || o.calibration.empty())) {
    return invalid_argument("--target-cosine applies to int8 static only (--quantize int8 with --calibration-data)");
  }
  if (o.fp16_min_bytes < 0) return invalid_argument("the fp16 size threshold is negative");
  if (o.mode == QuantizeMode::kInt8 && !o.calibration_dir.empty() && o.calibration.empty()) {
    return invalid_argument("no calibration samples were read from '", o.calibration_dir, "'");
  }
  if (o.mode != QuantizeMode::kInt8 && (!o.calibration_dir.empty() || !o.calibration.empty())) {
    return invalid_argument("--calibration-data only applies to --quantize int8");
  }
  return Status::ok();
}

bool is_excluded(const Node& node, const QuantizeOptions& options) {
  for (const std::string& e : options.exclude) {
    if (e == node.op_type || (!node.name.empty() && e == node.name)) return true;
  }
  return false;
}

Attribute int_attr(const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = value;
  return a;
}

std::string matmul_weight_blocker(const Graph& g, const GraphIndex& index, const Node& node, WeightSource* src) {
  src->name.clear();
  src->transposed = false;
  src->via_transpose.clear();
  if (node.inputs.size() < 2) return "fewer than two inputs";
  std::string w = node.inputs[1];
  // A tied lm_head: dedup made it Transpose(embedding); read the embedding in [N, K] order.
  const int producer = index.producer(w);
  if (producer >= 0) {
    const Node& p = g.nodes[static_cast<size_t>(producer)];
    const Attribute* perm = p.find_attr("perm");
    const bool swap = !perm || (perm->ints.size() == 2 && perm->ints[0] == 1 && perm->ints[1] == 0);
    if (p.domain.empty() && p.op_type == "Transpose" && swap && p.inputs.size() == 1) {
      src->via_transpose = w;
      w = p.inputs[0];
    }
  }
  for (const ValueInfo& vi : g.inputs) {
    if (vi.name == w) return "weight '" + w + "' is a graph input (overridable)";
  }
  const Tensor* t = constant_tensor(g, w);
  if (!t) return "B ('" + w + "') is computed at run time, not a constant initializer";
  if (t->dtype() != DataType::kFloat) return std::string("weight is ") + dtype_name(t->dtype()) + ", not float32";
  if (t->rank() != 2) return "weight is not 2-D (shape " + shape_to_string(t->shape()) + ")";
  if (t->numel() == 0 || !t->raw_data()) return "weight is empty";
  bool trans_b = false;
  if (node.op_type == "Gemm") {
    if (attr_int_or(node, "transA", 0) != 0) return "Gemm with transA=1";
    if (attr_float_or(node, "alpha", 1.0f) != 1.0f) return "Gemm with alpha != 1";
    if (node.inputs.size() > 2 && !node.inputs[2].empty() && attr_float_or(node, "beta", 1.0f) != 1.0f) {
      return "Gemm with beta != 1";
    }
    trans_b = attr_int_or(node, "transB", 0) != 0;
  } else if (node.inputs.size() != 2) {
    return "MatMul with an unexpected input count";
  }
  src->name = w;
  src->transposed = trans_b != !src->via_transpose.empty();
  return "";
}

void drop_dead_transposes(Graph& graph, const std::set<std::string>& outputs) {
  if (outputs.empty()) return;
  const GraphIndex index(graph);
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    dead[i] = n.op_type == "Transpose" && n.outputs.size() == 1 && outputs.count(n.outputs[0]) &&
              index.use_count(n.outputs[0]) == 0;
  }
  erase_nodes(graph, dead);
}

void drop_unused_initializers(Graph& graph) {
  const GraphIndex index(graph);
  std::vector<NamedTensor> kept;
  for (NamedTensor& t : graph.initializers) {
    if (index.use_count(t.name) > 0) kept.push_back(std::move(t));
  }
  graph.initializers = std::move(kept);
}

Result<QuantizeResult> quantize_model(Model& model, const QuantizeOptions& options) {
  XONNX_RETURN_IF_ERROR(check_quantize_options(options));
  QuantizeResult result;
  result.mode = options.mode;
  result.options = options;
  switch (options.mode) {
    case QuantizeMode::kInt4: XONNX_RETURN_IF_ERROR(quantize_int4_matmuls(model, options, result)); break;
    case QuantizeMode::kFp16: XONNX_RETURN_IF_ERROR(store_weights_as_fp16(model, options, result)); break;
    case QuantizeMode::kInt8:
      if (options.calibration.empty()) {
        XONNX_RETURN_IF_ERROR(quantize_int8_dynamic(model, options, result));
      } else if (options.target_cosine > 0) {
        XONNX_RETURN_IF_ERROR(quantize_int8_static_to_cosine(model, options, result));
      } else {
        XONNX_RETURN_IF_ERROR(quantize_int8_static(model, options, result));
      }
      break;
    case QuantizeMode::kNone: break;
  }
  XONNX_RETURN_IF_ERROR(quantize_gathers(model, options, result));  // after: a tied table's MatMul is settled
  return result;
}

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

std::string kb(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f KB", static_cast<double>(bytes) / 1024.0);
  return buf;
}

}  // namespace

std::string quantize_markdown(const QuantizeResult& r) {
  std::ostringstream os;
  os << "## Quantization (" << quantize_mode_name(r.mode) << ")\n\n";
  if (r.mode == QuantizeMode::kInt4) {
    os << "Block size " << r.options.block_size << ", "
       << (r.options.symmetric ? "symmetric (zero point 8)" : "per-block zero points");
    if (r.options.accuracy_level > 0) os << ", accuracy_level " << r.options.accuracy_level;
    os << ".\n\n";
  }
  os << r.quantized.size() << " rewritten, " << r.skipped.size() << " skipped; rewritten weights "
     << kb(r.weight_bytes_before) << " → " << kb(r.weight_bytes_after) << ".\n\n";
  if (!r.quantized.empty()) {
    os << "| node | weight | as | bytes | scale min | scale max | max abs error |\n|---|---|---|---:|---:|---:|---:|\n";
    for (const QuantizedNode& q : r.quantized) {
      os << "| " << markdown_cell(q.node) << " | `" << markdown_cell(q.weight) << "` | " << markdown_cell(q.as) << " | "
         << kb(q.bytes_before) << " → " << kb(q.bytes_after) << " | ";
      if (r.mode != QuantizeMode::kFp16) {
        os << num(q.scale_min) << " | " << num(q.scale_max) << " | " << num(q.max_abs_error) << " |\n";
      } else {
        os << " | | |\n";
      }
    }
  }
  if (r.search.ran) {
    const CosineSearch& c = r.search;
    auto cos = [](double v) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.5f", v);
      return std::string(buf);
    };
    const size_t samples = r.options.calibration.size();
    os << "\nTarget cosine " << cos(c.target) << ", the smallest float output's on "
       << (static_cast<size_t>(c.held_out_samples) < samples
               ? std::to_string(c.held_out_samples) + " of " + std::to_string(samples) +
                     " calibration samples, quantized with ranges from the others"
               : std::string("the calibration sample, quantized with ranges from it"))
       << ". Every candidate quantized: " << cos(c.cosine_all_quantized) << "; " << c.kept_float.size() << " of "
       << c.candidates << " kept in float: " << cos(c.cosine) << " (" << c.trials << " trial models, " << num(c.seconds)
       << " s).\n";
    if (!c.kept_float.empty()) {
      os << "\n| kept in float | cosine with it alone quantized |\n|---|---:|\n";
      for (const CosineSearch::Kept& k : c.kept_float)
        os << "| " << markdown_cell(k.node) << " | " << cos(k.cosine_alone) << " |\n";
    }
  }
  if (!r.skipped.empty()) {
    os << "\nSkipped:\n\n| node | why |\n|---|---|\n";
    for (const SkippedNode& s : r.skipped)
      os << "| " << markdown_cell(s.node) << " | " << markdown_cell(s.why) << " |\n";
  }
  return os.str();
}

}  // namespace convert
}  // namespace xonnx
