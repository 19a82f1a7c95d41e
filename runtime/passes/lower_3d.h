// lower_3d's parts (passes.h: lower_3d), shared by its two files: lower_3d.cc (each 3-D Conv
// and MaxPool lowered where it stands, any batch) and lower_3d_frames.cc (a one-clip video
// net held in frames between them). Internal to the graph-pass library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {
namespace lower3d {

// A rank-5 node's window geometry and its input's static dims.
struct Window3d {
  int64_t n_dims[5];  // X's dims; [0] may be unknown (-1)
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t out[3];  // D', H', W'
};

// Reads X's dims and the window attributes of `n` (kernel `k` when kernel_shape is absent):
// false when the node is not taken.
bool window_of(const Node& n, const ShapeFacts& facts, std::vector<int64_t> k, bool ceil, Window3d& win);

// The nodes and constants one run of the pass adds, with fresh names.
class Lowering {
 public:
  explicit Lowering(Graph& g) : g_(g), names_(g) {}

  std::string fresh(const std::string& base) { return names_.fresh(base); }
  std::string ints(const std::string& base, std::vector<int64_t> v) {
    const std::string name = names_.fresh(base);
    const int64_t n = static_cast<int64_t>(v.size());
    initializers_.push_back({name, Tensor::from_vector<int64_t>(v, {n})});
    return name;
  }
  std::string constant(const std::string& base, Tensor t) {
    const std::string name = names_.fresh(base);
    initializers_.push_back({name, std::move(t)});
    return name;
  }
  // Appends `op` reading `inputs` to `nodes`; returns its output (`out`, or a fresh name from `base`).
  std::string add(std::vector<Node>& nodes, const char* op, std::vector<std::string> inputs, const std::string& base,
                  std::vector<Attribute> attrs = {}, std::string out = "") {
    Node n;
    n.op_type = op;
    n.outputs = {out.empty() ? names_.fresh(base) : out};
    n.name = n.outputs[0] + "/" + op;
    n.inputs = std::move(inputs);
    n.attributes = std::move(attrs);
    nodes.push_back(std::move(n));
    return nodes.back().outputs[0];
  }
  std::string reshape(std::vector<Node>& nodes, const std::string& x, std::vector<int64_t> shape,
                      const std::string& base, std::string out = "") {
    return add(nodes, "Reshape", {x, ints(base + "_shape", std::move(shape))}, base, {}, std::move(out));
  }
  // The kd taps of `win`'s frame window over axis `axis` of `x` (rank `rank`, `d` frames):
  // Pad of that axis by (pads[0], what the last window needs), then per tap t a Slice of frames
  // t l, t l + s, ... (l the dilation, s the stride; D' of them), or the padded frames
  // themselves where that is all of them. Names from `base`.
  std::vector<std::string> frame_taps(std::vector<Node>& nodes, const std::string& x, int64_t axis, int64_t rank,
                                      int64_t d, const Window3d& win, const std::string& base);
  void commit() {
    for (NamedTensor& t : initializers_) g_.initializers.push_back(std::move(t));
  }

 private:
  Graph& g_;
  NameAllocator names_;
  std::vector<NamedTensor> initializers_;
};

// Lowers the 3-D Convs and MaxPools of one clip (N = 1, every dim known) and the element-wise
// ops, Concats and BatchNorms between them into frames [D, C, H, W] (lower_3d_frames.cc).
// Adds the counts of Convs and MaxPools lowered; returns whether the graph changed.
bool lower_clips_in_frames(Graph& g, const ShapeFacts& facts, Lowering& low, int& convs, int& pools);

}  // namespace lower3d
}  // namespace passes
}  // namespace xonnx
