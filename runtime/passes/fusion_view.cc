#include "runtime/passes/fusion_view.h"

#include <set>

namespace xonnx {
namespace passes {

FusionView::FusionView(Graph& graph)
    : graph_(graph), index_(graph), claimed_(graph.nodes.size(), false), dead_(graph.nodes.size(), false) {}

bool FusionView::is(int i, const char* op) const {
  if (i < 0 || static_cast<size_t>(i) >= graph_.nodes.size() || claimed_[static_cast<size_t>(i)]) {
    return false;
  }
  const Node& n = node(i);
  if (!n.domain.empty() || n.op_type != op || n.outputs.empty() || n.outputs[0].empty() || n.inputs.empty() ||
      n.inputs[0].empty()) {
    return false;
  }
  // Arity guards so matchers may index inputs freely (the loader does not check arity).
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "MatMul"};
  static const std::set<std::string> kUnary = {"Erf", "Sqrt", "Relu", "Neg", "Reciprocal"};
  if (kBinary.count(n.op_type)) return n.inputs.size() == 2 && !n.inputs[1].empty();
  if (kUnary.count(n.op_type)) return n.inputs.size() == 1;
  return true;
}

int FusionView::sole_producer(const std::string& value) const {
  if (value.empty() || index_.use_count(value) != 1 || index_.is_graph_output(value)) return -1;
  const int p = index_.producer(value);
  return p >= 0 && !claimed_[static_cast<size_t>(p)] ? p : -1;
}

int FusionView::sole_consumer(const std::string& value) const {
  if (value.empty() || index_.use_count(value) != 1 || index_.is_graph_output(value)) return -1;
  const std::vector<int>& readers = index_.consumers(value);
  if (readers.size() != 1 || claimed_[static_cast<size_t>(readers[0])]) return -1;
  return readers[0];
}

bool FusionView::is_const(const std::string& name, double value, double tol) const {
  return is_float_constant(graph_, name, value, tol);
}

std::string FusionView::other_input(int i, const std::string& known) const {
  const Node& n = node(i);
  if (n.inputs.size() != 2) return "";
  if (n.inputs[0] == known) return n.inputs[1];
  if (n.inputs[1] == known) return n.inputs[0];
  return "";
}

bool FusionView::other_is_const(int i, double value, double tol, std::string* x) const {
  const Node& n = node(i);
  if (n.inputs.size() != 2) return false;
  if (is_const(n.inputs[1], value, tol)) {
    *x = n.inputs[0];
    return true;
  }
  if (is_const(n.inputs[0], value, tol)) {
    *x = n.inputs[1];
    return true;
  }
  return false;
}

bool FusionView::other_is_const_given(int i, const std::string& known, double value, double tol) const {
  const std::string other = other_input(i, known);
  return !other.empty() && is_const(other, value, tol);
}

bool FusionView::claim(const std::vector<int>& nodes) {
  for (int i : nodes) {
    if (i < 0 || claimed_[static_cast<size_t>(i)]) return false;
  }
  for (int i : nodes) claimed_[static_cast<size_t>(i)] = true;
  return true;
}

void FusionView::replace(const std::vector<int>& nodes, int at, Node replacement) {
  std::vector<Node> one;
  one.push_back(std::move(replacement));
  replace(nodes, at, std::move(one));
}

void FusionView::replace(const std::vector<int>& nodes, int at, std::vector<Node> replacement) {
  for (int i : nodes) dead_[static_cast<size_t>(i)] = true;
  dead_[static_cast<size_t>(at)] = false;
  replacements_[at] = std::move(replacement);
}

void FusionView::commit() {
  std::vector<Node> kept;
  kept.reserve(graph_.nodes.size());
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    auto r = replacements_.find(static_cast<int>(i));
    if (r != replacements_.end()) {
      for (Node& node : r->second) kept.push_back(std::move(node));
    } else if (!dead_[i]) {
      kept.push_back(std::move(graph_.nodes[i]));
    }
  }
  graph_.nodes = std::move(kept);
  replacements_.clear();
  dead_.assign(graph_.nodes.size(), false);
  claimed_.assign(graph_.nodes.size(), false);
}

}  // namespace passes
}  // namespace xonnx
