#include "runtime/passes/pipeline.h"

#include <chrono>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/shape_inference.h"
#include "runtime/passes/validate.h"

namespace xonnx {
namespace passes {
namespace {

int64_t tensor_bytes(const Tensor& t) {
  if (t.dtype() != DataType::kString) return static_cast<int64_t>(t.nbytes());
  int64_t n = 0;
  for (int64_t i = 0; i < t.numel(); ++i) n += static_cast<int64_t>(t.string_data()[i].size());
  return n;
}

void count_graph(const Graph& g, ModelCounts& c) {
  c.nodes += static_cast<int64_t>(g.nodes.size());
  c.initializers += static_cast<int64_t>(g.initializers.size());
  for (const NamedTensor& t : g.initializers) c.initializer_bytes += tensor_bytes(t.tensor);
  for (const Node& n : g.nodes) for_each_subgraph(n, [&c](const Graph& sub) { count_graph(sub, c); });
}

void histogram_nodes(const std::vector<Node>& nodes, std::map<std::string, int64_t>& h);

void histogram_graph(const Graph& g, std::map<std::string, int64_t>& h) { histogram_nodes(g.nodes, h); }

void histogram_nodes(const std::vector<Node>& nodes, std::map<std::string, int64_t>& h) {
  for (const Node& n : nodes) {
    ++h[n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type];
    for_each_subgraph(n, [&h](const Graph& sub) { histogram_graph(sub, h); });
  }
}

ModelCounts operator-(const ModelCounts& a, const ModelCounts& b) {
  return {a.nodes - b.nodes, a.initializers - b.initializers, a.initializer_bytes - b.initializer_bytes};
}
ModelCounts operator+(const ModelCounts& a, const ModelCounts& b) {
  return {a.nodes + b.nodes, a.initializers + b.initializers, a.initializer_bytes + b.initializer_bytes};
}

}  // namespace

const ShapeFacts& PassContext::shape_facts(const Model& model) {
  if (!shapes) shapes = std::make_shared<const ShapeFacts>(infer_shapes(model));
  return *shapes;
}

ModelCounts count_model(const Model& model) {
  ModelCounts c;
  count_graph(model.graph, c);
  for (const FunctionDef& f : model.functions) c.nodes += static_cast<int64_t>(f.nodes.size());
  return c;
}

std::map<std::string, int64_t> op_histogram(const Model& model) {
  std::map<std::string, int64_t> h;
  histogram_graph(model.graph, h);
  // Function bodies count too: at level 0 they are written back unchanged.
  for (const FunctionDef& f : model.functions) histogram_nodes(f.nodes, h);
  return h;
}

Result<PipelineResult> run_pipeline(Model& model, const std::vector<PassDef>& table, const PassOptions& options,
                                    const ProgressFn& progress, int max_rounds) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // Passes walk nodes in order (dead-code removal backwards): an unsorted file would lose nodes.
  XONNX_RETURN_IF_ERROR(sort_topologically(model.graph));
  PipelineResult result;
  result.before = count_model(model);
  result.ops_before = op_histogram(model);
  std::vector<const PassDef*> active;
  for (const PassDef& p : table) {
    if (p.run && options.level >= p.min_level && (!p.genai_only || options.genai.enabled)) active.push_back(&p);
  }
  result.passes.resize(active.size());
  for (size_t i = 0; i < active.size(); ++i) result.passes[i].name = active[i]->name;

  ModelCounts current = result.before;
  // Shape inference is most of what a pass that finds nothing costs: the facts carry over
  // between passes while none changes the model.
  std::shared_ptr<const ShapeFacts> shapes;
  bool changed = !active.empty();
  while (changed && result.rounds < max_rounds) {
    changed = false;
    ++result.rounds;
    for (size_t i = 0; i < active.size(); ++i) {
      PassStats& stats = result.passes[i];
      if (progress) progress(result.rounds, i, active.size(), active[i]->name);
      if (stats.runs == 0) stats.before = stats.after = current;
      PassContext ctx(options);
      ctx.shapes = shapes;
      const auto t0 = Clock::now();
      Result<bool> r = active[i]->run(model, ctx);
      stats.ms += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      ++stats.runs;
      if (!r.is_ok()) {
        return r.status().with_context(std::string("pass '") + active[i]->name + "': ");
      }
      for (std::string& n : ctx.notes) stats.notes.push_back(std::move(n));
      for (std::string& w : ctx.warnings) stats.warnings.push_back(std::move(w));
      stats.diagnostics = std::move(ctx.diagnostics);
      stats.bytes_saved += ctx.bytes_saved;
      shapes = *r ? nullptr : std::move(ctx.shapes);
      if (*r) {
        ++stats.changed_runs;
        changed = true;
        const ModelCounts now = count_model(model);
        stats.after = stats.after + (now - current);
        current = now;
      }
    }
  }
  if (changed) {
    result.reached_fixed_point = false;
    result.warnings.push_back("no fixed point after " + std::to_string(max_rounds) +
                              " rounds: a pass keeps reporting changes (the model is still valid)");
  }
  result.after = count_model(model);
  result.ops_after = op_histogram(model);
  result.shapes = std::move(shapes);
  result.ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return result;
}

}  // namespace passes
}  // namespace xonnx
