// GenAI pass: every decomposed causal self-attention block with a KV cache (attention_match.h),
// its rotary embeddings (fused before by fuse-rotary-embedding) included, becomes one
// com.microsoft GroupQueryAttention in ORT GenAI's CPU form:
//   GroupQueryAttention(q_in, k_in, v_in, past_k, past_v, seqlens_k, total_sequence_length
//                       [, cos_cache, sin_cache]) -> (out, present_k, present_v)
// with num_heads / kv_num_heads / scale from the block, do_rotary and rotary_interleaved from its
// rotary embedding, local_window_size -1. seqlens_k and total_sequence_length are computed once
// from the attention_mask input as GenAI's model builder does (Cast<int32>(ReduceSum(mask, 1) - 1),
// Cast<int32>(Shape(mask)[1])); an attention_mask input is added when the model has none. The
// past inputs and present outputs keep their names and become what GenAI binds with
// past_present_share_buffer: one max-length buffer per layer, seqlens_k saying how much is valid.
//
// All or nothing: every attention Softmax must match and pass the probe checks
// (attention_probe.h), and afterwards nothing but the fused ops may read the past inputs (their
// length is the buffer's, not the cache's); else the model is left as it was and every failed
// check is reported. Runs only with --genai (attention "gqa").
#include <set>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "converter/passes/attention_match.h"
#include "converter/passes/attention_probe.h"
#include "converter/passes/genai_util.h"
#include "converter/passes/passes.h"

namespace xonnx {
namespace convert {
namespace {

constexpr const char* kMaskSubgraph = "/model/attn_mask_reformat/attn_mask_subgraph";

struct Layer {
  AttentionMatch match;
  AttentionShape shape;
};

// "/layers.3/self_attn/Softmax" -> "/layers.3/self_attn/GroupQueryAttention".
std::string fused_name(const Node& softmax, size_t layer) {
  const size_t slash = softmax.name.rfind('/');
  if (slash == std::string::npos) return "GroupQueryAttention_" + std::to_string(layer);
  return softmax.name.substr(0, slash) + "/GroupQueryAttention";
}

// seqlens_k and total_sequence_length from the mask, as ORT GenAI's builder computes them.
void add_length_nodes(Graph& g, int64_t opset, const std::string& mask, DataType mask_type, std::string* seqlens_k,
                      std::string* total) {
  const std::string p = kMaskSubgraph;
  Tensor one_1d =
      mask_type == DataType::kInt32 ? Tensor::from_vector<int32_t>({1}, {1}) : Tensor::from_vector<int64_t>({1}, {1});
  const std::string one = add_initializer(g, "/model/constants/INT64/1D/1", one_1d);
  const std::string axis1 =
      add_initializer(g, "/model/constants/INT64/1D/axis1", Tensor::from_vector<int64_t>({1}, {1}));
  const std::string index1 = add_initializer(g, "/model/constants/INT64/0D/1", Tensor::scalar<int64_t>(1));
  std::vector<Node> nodes;
  if (opset >= 13) {
    nodes.push_back(genai::make_node("ReduceSum", "", p + "/ReduceSum", {mask, axis1}, {p + "/ReduceSum/output_0"}));
  } else {
    nodes.push_back(genai::make_node("ReduceSum", "", p + "/ReduceSum", {mask}, {p + "/ReduceSum/output_0"},
                                     {genai::ints_attribute("axes", {1})}));
  }
  nodes.push_back(genai::make_node("Sub", "", p + "/Sub", {p + "/ReduceSum/output_0", one}, {p + "/Sub/output_0"}));
  nodes.push_back(genai::make_node("Cast", "", p + "/Sub/Cast", {p + "/Sub/output_0"}, {p + "/Sub/Cast/output_0"},
                                   {genai::int_attribute("to", static_cast<int64_t>(DataType::kInt32))}));
  nodes.push_back(genai::make_node("Shape", "", p + "/Shape", {mask}, {p + "/Shape/output_0"}));
  nodes.push_back(genai::make_node("Gather", "", p + "/Gather", {p + "/Shape/output_0", index1},
                                   {p + "/Gather/output_0"}, {genai::int_attribute("axis", 0)}));
  nodes.push_back(genai::make_node("Cast", "", p + "/Gather/Cast", {p + "/Gather/output_0"},
                                   {p + "/Gather/Cast/output_0"},
                                   {genai::int_attribute("to", static_cast<int64_t>(DataType::kInt32))}));
  *seqlens_k = p + "/Sub/Cast/output_0";
  *total = p + "/Gather/Cast/output_0";
  g.nodes.insert(g.nodes.begin(), nodes.begin(), nodes.end());
}

std::string describe_layer(size_t i, const Layer& l) {
  const AttentionMatch& m = l.match;
  std::string s = "layer " + std::to_string(i) + ": attention (" + m.present_k + ", " + m.present_v +
                  ") -> GroupQueryAttention: " + std::to_string(l.shape.heads) + " heads, " +
                  std::to_string(l.shape.kv_heads) + " KV heads, head size " + std::to_string(l.shape.head_size) +
                  ", scale " + std::to_string(m.scale) + ", " +
                  (m.mask_kind == AttentionMatch::Mask::kAdditive ? "additive" : "boolean") + " causal mask";
  if (m.q_rotary.present)
    s += std::string(", rotary inside (") + (m.q_rotary.interleaved ? "interleaved" : "rotate-half") + ")";
  if (m.k_repeat.present()) s += ", repeat_kv removed";
  return s;
}

// Rewrites `model` (a copy) with the fused layers; the error says what makes the result unsound.
Status rewrite(Model& model, std::vector<Layer>& layers, const DecoderInputs& io, PassContext& ctx) {
  Graph& g = model.graph;
  const int64_t opset = genai::onnx_opset(model);
  std::string mask = io.attention_mask;
  DataType mask_type = DataType::kInt64;
  if (mask.empty()) {
    // GenAI feeds an attention_mask [batch, total]: the lengths come from it.
    mask = unique_name(g, "attention_mask");
    ValueInfo vi;
    vi.name = mask;
    vi.type.kind = TypeInfo::Kind::kTensor;
    vi.type.elem_type = DataType::kInt64;
    vi.type.has_shape = true;
    const ValueInfo* ids = find_value_info(g, io.input_ids);
    Dim batch = ids && !ids->type.dims.empty() ? ids->type.dims[0] : Dim{-1, "batch_size"};
    vi.type.dims = {batch, Dim{-1, "total_sequence_length"}};
    g.inputs.push_back(vi);
    ctx.note("added the input '" + mask + "' (int64 [batch, total]): GroupQueryAttention's lengths come from it");
  } else if (const ValueInfo* vi = find_value_info(g, mask)) {
    mask_type = vi->type.elem_type;
  }
  std::vector<bool> dead(g.nodes.size(), false);
  for (const Layer& l : layers) {
    for (int i : l.match.nodes) dead[static_cast<size_t>(i)] = true;
  }
  std::string seqlens_k, total;
  std::vector<Node> gqa;
  for (size_t li = 0; li < layers.size(); ++li) {
    const Layer& l = layers[li];
    const AttentionMatch& m = l.match;
    std::vector<std::string> inputs = {m.q.in, m.k.in, m.v.in, m.past_k, m.past_v, "", ""};
    if (m.q_rotary.present) {
      inputs.push_back(m.q_rotary.cos_cache);
      inputs.push_back(m.q_rotary.sin_cache);
    }
    gqa.push_back(genai::make_node(
        "GroupQueryAttention", "com.microsoft", fused_name(g.nodes[static_cast<size_t>(m.softmax)], li), inputs,
        {m.output, m.present_k, m.present_v},
        {genai::int_attribute("num_heads", l.shape.heads), genai::int_attribute("kv_num_heads", l.shape.kv_heads),
         genai::float_attribute("scale", static_cast<float>(m.scale)), genai::int_attribute("local_window_size", -1),
         genai::float_attribute("softcap", 0.0f), genai::int_attribute("do_rotary", m.q_rotary.present ? 1 : 0),
         genai::int_attribute("rotary_interleaved", m.q_rotary.interleaved ? 1 : 0)}));
  }
  erase_nodes(g, dead);
  add_length_nodes(g, opset, mask, mask_type, &seqlens_k, &total);
  for (Node& n : gqa) {
    n.inputs[5] = seqlens_k;
    n.inputs[6] = total;
    g.nodes.push_back(std::move(n));
  }
  XONNX_RETURN_IF_ERROR(genai::sort_topologically(g));
  PassContext local(ctx.options);
  XONNX_ASSIGN_OR_RETURN(bool ignored, dead_code_elimination(model, local));
  (void)ignored;
  // Nothing but the fused ops may read a past input or a present: with a shared buffer their
  // length is the buffer's.
  std::set<std::string> kv;
  for (const Layer& l : layers) kv.insert({l.match.past_k, l.match.past_v, l.match.present_k, l.match.present_v});
  for (const Node& n : g.nodes) {
    if (n.op_type == "GroupQueryAttention" && n.domain == "com.microsoft") continue;
    for (const std::string& in : n.inputs) {
      if (kv.count(in))
        return invalid_argument(n.describe(), " still reads '", in,
                                "' after the fusion (its length would be the KV buffer's)");
    }
  }
  // Inputs nothing reads any more (position ids) go: GenAI feeds only what the model declares.
  const GraphIndex index(g);
  for (size_t i = g.inputs.size(); i-- > 0;) {
    const std::string name = g.inputs[i].name;
    if (name == io.position_ids && index.use_count(name) == 0) {
      g.inputs.erase(g.inputs.begin() + static_cast<std::ptrdiff_t>(i));
      ctx.note("removed the input '" + name + "': GroupQueryAttention derives the positions from seqlens_k");
    }
  }
  model.opset_imports.emplace("com.microsoft", 1);
  return Status::ok();
}

}  // namespace

Result<bool> fuse_group_query_attention(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  const ShapeFacts facts = infer_shapes(model);
  const GraphIndex index(g);
  std::vector<Layer> layers;
  std::vector<std::string> failures;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Layer l;
    std::string why;
    if (match_attention(g, index, facts, static_cast<int>(i), &l.match, &why)) {
      layers.push_back(std::move(l));
    } else if (!why.empty()) {
      failures.push_back("attention at " + g.nodes[i].describe() + " not fused: " + why);
    }
  }
  if (layers.empty() && failures.empty()) return false;
  auto give_up = [&ctx, &failures](const std::string& reason) -> Result<bool> {
    for (const std::string& f : failures) ctx.diagnose(f);
    if (!reason.empty()) ctx.diagnose(reason);
    return false;
  };
  if (!failures.empty())
    return give_up(
        "GroupQueryAttention: no layer fused (all or nothing: a half-fused model could not share its KV buffers)");
  std::set<std::string> past;
  for (const Layer& l : layers) past.insert({l.match.past_k, l.match.past_v});
  auto io = decoder_inputs(g, index, facts, past);
  if (!io.is_ok()) return give_up("GroupQueryAttention not fused: " + io.status().message());
  DecoderProbes probes(model, facts, *io);
  for (size_t i = 0; i < layers.size(); ++i) {
    Layer& l = layers[i];
    auto shape = probes.check(l.match);
    const std::string where =
        "attention at " + g.nodes[static_cast<size_t>(l.match.softmax)].describe() + " not fused: ";
    if (!shape.is_ok()) {
      failures.push_back(where + shape.status().message());
      continue;
    }
    l.shape = *shape;
    for (const std::string& p : {l.match.past_k, l.match.past_v}) {
      const auto& kv = io->past.at(p);
      if (kv.first != l.shape.kv_heads || kv.second != l.shape.head_size) {
        failures.push_back(where + "the past input '" + p + "' is declared with " + std::to_string(kv.first) +
                           " heads of " + std::to_string(kv.second) + ", the block has " +
                           std::to_string(l.shape.kv_heads) + " of " + std::to_string(l.shape.head_size));
      }
    }
  }
  if (!failures.empty()) return give_up("GroupQueryAttention: no layer fused (all or nothing)");
  Model fused = clone_model(model);
  Status st = rewrite(fused, layers, *io, ctx);
  if (!st.is_ok()) return give_up("GroupQueryAttention not fused: " + st.message());
  model = std::move(fused);
  for (size_t i = 0; i < layers.size(); ++i) ctx.note(describe_layer(i, layers[i]));
  return true;
}

}  // namespace convert
}  // namespace xonnx
