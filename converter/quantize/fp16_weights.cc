// fp16 weight storage: a float32 initializer of >= options.fp16_min_bytes becomes a float16
// initializer read by a Cast(to=FLOAT) that produces the original name, so every reader (and
// the model's interface) is unchanged; the file halves its weight bytes. Values beyond float16's
// range are clamped to +-65504 (counted in the report).
#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/ir/graph_edit.h"
#include "converter/quantize/quantize_internal.h"

namespace xonnx {
namespace convert {

Status store_weights_as_fp16(Model& model, const QuantizeOptions& opt, QuantizeResult& result) {
  Graph& g = model.graph;
  std::set<std::string> graph_inputs;
  for (const ValueInfo& vi : g.inputs) graph_inputs.insert(vi.name);
  const GraphIndex index(g);
  std::vector<Node> casts;
  std::vector<NamedTensor> kept;
  std::vector<NamedTensor> converted;
  for (NamedTensor& init : g.initializers) {
    const Tensor& t = init.tensor;
    const bool candidate = t.dtype() == DataType::kFloat && t.raw_data() &&
                           static_cast<int64_t>(t.nbytes()) >= opt.fp16_min_bytes && !graph_inputs.count(init.name);
    if (!candidate) {
      kept.push_back(std::move(init));
      continue;
    }
    std::string excluded_by;
    for (int c : index.consumers(init.name)) {
      if (is_excluded(g.nodes[static_cast<size_t>(c)], opt)) excluded_by = g.nodes[static_cast<size_t>(c)].describe();
    }
    if (!excluded_by.empty()) {
      result.skipped.push_back({"initializer '" + init.name + "'", "read by excluded " + excluded_by});
      kept.push_back(std::move(init));
      continue;
    }
    std::vector<Float16> half(static_cast<size_t>(t.numel()));
    const float* src = t.data<float>();
    int64_t clamped = 0;
    for (size_t i = 0; i < half.size(); ++i) {
      float v = src[i];
      if (std::isfinite(v) && std::fabs(v) > 65504.0f) {
        v = std::copysign(65504.0f, v);
        ++clamped;
      }
      half[i] = Float16{float_to_half(v)};
    }
    QuantizedNode info;
    info.node = "initializer '" + init.name + "'";
    info.weight = init.name;
    info.as = "float16 + Cast";
    if (clamped) info.as += " (" + std::to_string(clamped) + " values clamped to +-65504)";
    info.bytes_before = static_cast<int64_t>(t.nbytes());
    info.bytes_after = info.bytes_before / 2;
    result.weight_bytes_before += info.bytes_before;
    result.weight_bytes_after += info.bytes_after;
    result.quantized.push_back(std::move(info));
    NamedTensor h{init.name + "_fp16", Tensor::from_vector<Float16>(half, t.shape())};
    Node cast;
    cast.name = init.name + "_cast";
    cast.op_type = "Cast";
    cast.inputs = {h.name};
    cast.outputs = {init.name};
    cast.attributes = {int_attr("to", static_cast<int64_t>(DataType::kFloat))};
    casts.push_back(std::move(cast));
    converted.push_back(std::move(h));
  }
  g.initializers = std::move(kept);
  // Fresh names now that the originals are gone from the initializer list (they stay node outputs).
  for (size_t i = 0; i < converted.size(); ++i) {
    const std::string fresh = unique_name(g, converted[i].name);
    casts[i].inputs[0] = fresh;
    converted[i].name = fresh;
    g.initializers.push_back(std::move(converted[i]));
  }
  // The casts run first: they read only initializers.
  g.nodes.insert(g.nodes.begin(), std::make_move_iterator(casts.begin()), std::make_move_iterator(casts.end()));
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
