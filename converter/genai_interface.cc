// finish_genai_decoder: the fused decoder's interface in GenAI's names and order, and the figures
// genai_config.json and the report need.
#include <set>

#include "converter/genai_folder.h"
#include "runtime/ir/graph_edit.h"
#include "converter/passes/passes.h"

namespace xonnx {
namespace convert {
namespace {

bool is_fused_attention(const Node& n) { return n.domain == "com.microsoft" && n.op_type == "GroupQueryAttention"; }

// Renames the value `from` (graph input, node output, graph output) to `to` everywhere.
Status rename_value(Graph& g, const std::string& from, const std::string& to, std::vector<std::string>* log,
                    const char* what) {
  if (from == to) return Status::ok();
  std::set<std::string> taken = defined_names(g);
  for (const ValueInfo& vi : g.outputs) taken.insert(vi.name);
  if (taken.count(to)) return invalid_argument("cannot name the ", what, " '", from, "' '", to, "': the name is taken");
  replace_uses(g, from, to);
  for (Node& n : g.nodes) {
    for (std::string& o : n.outputs) {
      if (o == from) o = to;
    }
  }
  for (std::vector<ValueInfo>* list : {&g.inputs, &g.outputs, &g.value_info}) {
    for (ValueInfo& vi : *list) {
      if (vi.name == from) vi.name = to;
    }
  }
  log->push_back(std::string(what) + " '" + from + "' -> '" + to + "'");
  return Status::ok();
}

// The op type ("domain:Op") of the node producing `value` / of its one reader; "" when none.
std::string producer_op(const Graph& g, const GraphIndex& index, const std::string& value) {
  const int p = index.producer(value);
  if (p < 0) return "";
  const Node& n = g.nodes[static_cast<size_t>(p)];
  return n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type;
}

std::string reader_op(const Graph& g, const GraphIndex& index, const std::string& value) {
  const std::vector<int>& r = index.consumers(value);
  if (r.size() != 1) return "";
  const Node& n = g.nodes[static_cast<size_t>(r[0])];
  return n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type;
}

// Joins the last run's diagnostics of the fusion passes (why attention was not fused).
std::string fusion_diagnostics(const PipelineResult& p) {
  std::string out;
  for (const PassStats& s : p.passes) {
    for (const std::string& d : s.diagnostics) out += "\n  " + s.name + ": " + d;
  }
  return out;
}

}  // namespace

Result<GenaiSummary> finish_genai_decoder(Model& model, const PipelineResult& pipeline, int64_t context_length) {
  Graph& g = model.graph;
  GenaiSummary s;
  std::vector<size_t> fused;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (is_fused_attention(g.nodes[i])) fused.push_back(i);
  }
  if (fused.empty()) {
    return invalid_argument("the model is not a decoder in GenAI form: no attention block was fused into ",
                            s.attention_op, fusion_diagnostics(pipeline));
  }
  // Inputs: token ids (read by the embedding Gather), the attention mask, the past K / V of each
  // fused node in graph (= layer) order. Outputs: logits and the presents.
  std::set<std::string> past, present;
  std::string ids, mask, logits;
  for (size_t i : fused) {
    const Node& n = g.nodes[i];
    if (n.inputs.size() < 5 || n.outputs.size() < 3)
      return invalid_model(n.describe(), " has no past / present K and V");
    past.insert({n.inputs[3], n.inputs[4]});
    present.insert({n.outputs[1], n.outputs[2]});
  }
  {
    const GraphIndex index(g);
    for (const ValueInfo& vi : g.inputs) {
      if (past.count(vi.name) || g.find_initializer(vi.name)) continue;
      bool embedding = false;
      for (int r : index.consumers(vi.name)) {
        const Node& n = g.nodes[static_cast<size_t>(r)];
        embedding = embedding || (n.op_type == "Gather" && n.inputs.size() == 2 && n.inputs[1] == vi.name);
      }
      std::string& slot = embedding ? ids : mask;
      if (!slot.empty()) {
        return invalid_argument("the input '", vi.name,
                                "' is neither the token ids, the attention mask nor a past K / V");
      }
      slot = vi.name;
    }
    for (const ValueInfo& vi : g.outputs) {
      if (present.count(vi.name)) continue;
      if (!logits.empty())
        return invalid_argument("the output '", vi.name, "' is neither the logits nor a present K / V");
      logits = vi.name;
    }
    if (ids.empty() || logits.empty()) return invalid_argument("the decoder has no token-id input or no logits output");
    if (mask.empty()) return invalid_argument("the decoder has no attention_mask input");
  }
  XONNX_RETURN_IF_ERROR(rename_value(g, ids, "input_ids", &s.renamed, "input"));
  if (!mask.empty()) XONNX_RETURN_IF_ERROR(rename_value(g, mask, "attention_mask", &s.renamed, "input"));
  XONNX_RETURN_IF_ERROR(rename_value(g, logits, "logits", &s.renamed, "output"));
  // Two steps, so a past named like another layer's final name never collides.
  std::vector<std::array<std::string, 4>> kv;  // per layer: past k, past v, present k, present v
  for (size_t li = 0; li < fused.size(); ++li) {
    const Node& n = g.nodes[fused[li]];
    kv.push_back({n.inputs[3], n.inputs[4], n.outputs[1], n.outputs[2]});
  }
  for (size_t li = 0; li < kv.size(); ++li) {
    for (int j = 0; j < 4; ++j) {
      const std::string tmp = unique_name(g, "genai_kv_" + std::to_string(li) + "_" + std::to_string(j));
      std::vector<std::string> ignored;
      XONNX_RETURN_IF_ERROR(rename_value(g, kv[li][j], tmp, &ignored, "value"));
    }
  }
  for (size_t li = 0; li < kv.size(); ++li) {
    const std::string l = std::to_string(li);
    const std::string names[4] = {"past_key_values." + l + ".key", "past_key_values." + l + ".value",
                                  "present." + l + ".key", "present." + l + ".value"};
    for (int j = 0; j < 4; ++j) {
      const Node& n = g.nodes[fused[li]];
      const std::string cur = j < 2 ? n.inputs[3 + j] : n.outputs[j - 1];
      std::vector<std::string> log;
      XONNX_RETURN_IF_ERROR(rename_value(g, cur, names[j], &log, j < 2 ? "input" : "output"));
      if (kv[li][j] != names[j])
        s.renamed.push_back(std::string(j < 2 ? "input" : "output") + " '" + kv[li][j] + "' -> '" + names[j] + "'");
    }
  }
  // GenAI's order: input_ids, attention_mask, past_key_values.0.key, .0.value, ...; logits, present.0.key, ...
  auto order = [](std::vector<ValueInfo>& list, const std::vector<std::string>& names) {
    std::vector<ValueInfo> sorted;
    for (const std::string& name : names) {
      for (const ValueInfo& vi : list) {
        if (vi.name == name) sorted.push_back(vi);
      }
    }
    list = std::move(sorted);
  };
  std::vector<std::string> in_names = {"input_ids"}, out_names = {"logits"};
  if (!mask.empty()) in_names.push_back("attention_mask");
  for (size_t li = 0; li < fused.size(); ++li) {
    const std::string l = std::to_string(li);
    in_names.insert(in_names.end(), {"past_key_values." + l + ".key", "past_key_values." + l + ".value"});
    out_names.insert(out_names.end(), {"present." + l + ".key", "present." + l + ".value"});
  }
  std::vector<ValueInfo> kept_initializer_inputs;
  for (const ValueInfo& vi : g.inputs) {
    if (g.find_initializer(vi.name)) kept_initializer_inputs.push_back(vi);
  }
  order(g.inputs, in_names);
  g.inputs.insert(g.inputs.end(), kept_initializer_inputs.begin(), kept_initializer_inputs.end());
  order(g.outputs, out_names);

  // Figures for genai_config.json and the report.
  const ShapeFacts facts = infer_shapes(model);
  const GraphIndex index(g);
  for (const Node& n : g.nodes) {
    if (n.op_type == "Gather" && n.inputs.size() == 2 && n.inputs[1] == "input_ids") {
      if (const Tensor* table = constant_tensor(g, n.inputs[0])) {
        if (table->rank() == 2) s.hidden = table->dim(1);
      }
    }
  }
  if (const std::vector<Dim>* d = facts.dims("logits"); d && !d->empty() && d->back().known())
    s.vocab = d->back().value;
  int64_t cache_rows = 0;
  for (size_t li = 0; li < fused.size(); ++li) {
    const Node& n = g.nodes[fused[li]];
    GenaiLayer l;
    l.attention = n.name;
    l.past_key = n.inputs[3];
    l.past_value = n.inputs[4];
    l.present_key = n.outputs[1];
    l.present_value = n.outputs[2];
    const std::vector<Dim>* pd = facts.dims(l.past_key);
    if (pd && pd->size() == 4 && (*pd)[1].known() && (*pd)[3].known()) {
      l.kv_heads = (*pd)[1].value;
      l.head_size = (*pd)[3].value;
    }
    l.heads = attr_int_or(n, "num_heads", 0);
    l.kv_heads = attr_int_or(n, "kv_num_heads", l.kv_heads);
    l.scale = attr_float_or(n, "scale", 0);
    l.rotary = attr_int_or(n, "do_rotary", 0) != 0;
    l.interleaved = attr_int_or(n, "rotary_interleaved", 0) != 0;
    if (l.rotary && n.inputs.size() > 7) {
      if (const Tensor* cos = constant_tensor(g, n.inputs[7])) cache_rows = cos->dim(0);
    }
    const bool packed = n.inputs[1].empty();
    l.projections =
        packed ? "packed QKV " + producer_op(g, index, n.inputs[0]) : "Q, K, V " + producer_op(g, index, n.inputs[0]);
    const int q = index.producer(n.inputs[0]);
    if (q >= 0) l.input_norm = producer_op(g, index, g.nodes[static_cast<size_t>(q)].inputs[0]);
    // attention output -> [Transpose / Reshape] -> output projection -> the next norm.
    std::string v = n.outputs[0];
    for (int hops = 0; hops < 4; ++hops) {
      const std::vector<int>& r = index.consumers(v);
      if (r.size() != 1) break;
      const Node& next = g.nodes[static_cast<size_t>(r[0])];
      v = next.outputs.empty() ? "" : next.outputs[0];
      if (next.op_type == "MatMul" || next.op_type == "MatMulNBits") {
        l.output_norm = reader_op(g, index, v);
        break;
      }
    }
    s.layers.push_back(std::move(l));
  }
  if (context_length > 0) {
    s.context_length = context_length;
    if (cache_rows > 0 && cache_rows < context_length) {
      s.notes.push_back("context length " + std::to_string(context_length) + " capped at the rotary tables' " +
                        std::to_string(cache_rows) + " rows");
      s.context_length = cache_rows;
    }
  } else if (cache_rows > 0) {
    s.context_length = cache_rows;
    s.notes.push_back("context length " + std::to_string(cache_rows) + ": the rotary tables' rows");
  } else {
    return invalid_argument("the context length is unknown (no rotary tables): give --context-length");
  }
  return s;
}

}  // namespace convert
}  // namespace xonnx
