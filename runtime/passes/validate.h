// The structural checks session creation makes, without creating kernels: what the converter
// runs on its input and again on its output, so it never writes (or accepts) a model the
// runtime would reject. Checked in every graph and every If/Loop/Scan body:
//   - names: graph inputs unique and named; each value produced once (no two writers);
//     every name a node or graph output reads is defined here or in an enclosing graph;
//   - order: no cycle (a node reading its own output, or a longer loop);
//   - ops: the domain is imported and the registry knows the op at that opset with that
//     number of inputs and outputs, or the model defines it as a local function;
//   - control flow: If has both branches with as many outputs as the node; Loop and Scan
//     bodies take and give as many values as the node feeds and expects.
// Function bodies are checked as graphs whose inputs are the function's inputs.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {

struct OpSpec;

// Errors name the graph path ("graph 'main' > node 'loop' (Loop) > body"), the node and the
// value, as session creation's do.
Status validate_model(const Model& model);

// The part of validate_model that session creation runs before its passes: every window
// attribute (kernel_shape, strides, dilations, pads, output_padding, output_shape of Conv, the
// pools and their kin) within +-2^31 - 1, in `g` and its bodies; `where` names the graph.
Status check_window_attributes(const Graph& g, const std::string& where);

// Names `g` reads but does not define (inputs, initializers, node outputs), including those
// its nested bodies read: the values it needs from enclosing graphs. Added to `out`.
void collect_free_names(const Graph& g, std::set<std::string>& out);
// The same for every graph attribute of `n`: what the node reads implicitly.
void collect_free_names_of_bodies(const Node& n, std::set<std::string>& out);
// Everything node `n` reads: its inputs, then the names its bodies read from outside (added to
// `captures` too when given). The `reads` of topological_order.
std::vector<std::string> node_reads(const Node& n, std::set<std::string>* captures = nullptr);

// A stable topological order of g's nodes (file order where the graph allows).
// `reads[i]`: the names node i reads (its inputs and what its subgraphs read from outside);
// `producer`: the node that writes each name. An error names up to three nodes on a cycle.
// Shared with the executor (exec/plan.cc), which orders its steps with it.
Result<std::vector<size_t>> topological_order(const Graph& g, const std::vector<std::vector<std::string>>& reads,
                                              const std::unordered_map<std::string, size_t>& producer);

// Puts the nodes of `g` and of every subgraph in that stable topological order (ONNX requires
// it; files in the wild do not always keep it, and passes that walk nodes backwards, like dead
// code removal, rely on it). A cycle is an error naming nodes on it.
Status sort_topologically(Graph& g);

}  // namespace xonnx
