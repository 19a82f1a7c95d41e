#include "runtime/ir/graph_index.h"

#include "runtime/ir/graph_edit.h"

namespace xonnx {

GraphIndex::GraphIndex(const Graph& graph) {
  for (const ValueInfo& vi : graph.inputs) inputs_.insert(vi.name);
  for (const ValueInfo& vi : graph.outputs) output_uses_[vi.name]++;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const int idx = static_cast<int>(i);
    for (const std::string& o : n.outputs) {
      if (!o.empty()) producer_[o] = idx;
    }
    for (const std::string& in : n.inputs) {
      if (!in.empty()) consumers_[in].push_back(idx);
    }
    for_each_subgraph(n, [&](const Graph& sub) {
      for (const std::string& name : outer_scope_reads(sub)) consumers_[name].push_back(idx);
    });
  }
}

int GraphIndex::producer(const std::string& value) const {
  auto it = producer_.find(value);
  return it == producer_.end() ? -1 : it->second;
}

const std::vector<int>& GraphIndex::consumers(const std::string& value) const {
  auto it = consumers_.find(value);
  return it == consumers_.end() ? none_ : it->second;
}

bool GraphIndex::is_graph_output(const std::string& value) const { return output_uses_.count(value) > 0; }

bool GraphIndex::is_graph_input(const std::string& value) const { return inputs_.count(value) > 0; }

int GraphIndex::use_count(const std::string& value) const {
  auto it = output_uses_.find(value);
  const int outputs = it == output_uses_.end() ? 0 : it->second;
  return static_cast<int>(consumers(value).size()) + outputs;
}

ValueIndex::ValueIndex(const Graph& g) : graph(g) {
  for (const NamedTensor& t : g.initializers) initializers[t.name] = &t.tensor;
  for (const ValueInfo& v : g.outputs) pinned_.insert(v.name);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      if (producer.count(o) || initializers.count(o)) has_duplicate_outputs = true;
      producer[o] = i;
    }
    for (const std::string& in : n.inputs) {
      if (!in.empty()) consumers[in].push_back(i);
    }
    for_each_subgraph(n, [&](const Graph& sub) {
      const std::set<std::string> reads = outer_scope_reads(sub);
      pinned_.insert(reads.begin(), reads.end());
    });
  }
}

const Tensor* ValueIndex::constant(const std::string& name) const {
  auto it = initializers.find(name);
  if (it != initializers.end()) return it->second;
  const int p = producer_of(name);
  if (p < 0) return nullptr;
  const Node& n = graph.nodes[static_cast<size_t>(p)];
  if (!n.domain.empty() || n.op_type != "Constant") return nullptr;
  const Attribute* v = n.find_attr("value");
  return v && v->type == AttrType::kTensor ? &v->t : nullptr;
}

int ValueIndex::producer_of(const std::string& name) const {
  auto it = producer.find(name);
  return it == producer.end() ? -1 : static_cast<int>(it->second);
}

const std::vector<size_t>& ValueIndex::readers(const std::string& name) const {
  static const std::vector<size_t> none;
  auto it = consumers.find(name);
  return it == consumers.end() ? none : it->second;
}

}  // namespace xonnx
