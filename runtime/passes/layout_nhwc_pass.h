// The NHWC layout pass's state (layout_nhwc.h), shared by its source files: layout_nhwc.cc
// (regions, boundaries), layout_activations.cc (activation fusion), layout_nhwc_fusions.cc (the
// rewrites for the own kernels: PointwiseDepthwiseConv, ConvNchwInput, ConcatConv /
// ConcatMaxPool, ConvMaxPool), layout_conv1d.cc, layout_group_norm.cc. Internal to the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/passes/layout_nhwc.h"
#include "runtime/ir/graph.h"

namespace xonnx {
namespace layout_internal {

// An element-wise op with one data input whose result does not depend on the layout (the op
// list's kLayoutAgnostic trait, runtime/ops/ops.def).
bool layout_agnostic_unary(const Node& n);

// n's attribute `name` when it has that type, else null.
const Attribute* attr_of(const Node& n, const char* name, AttrType type);

// x * Sigmoid(x) -> Swish(x), x * HardSigmoid(x) (alpha 1/6, beta 1/2) -> HardSwish(x) where
// the gate has no other reader (layout_activations.cc). Returns how many.
int fuse_gated_activations(Graph& g, int64_t onnx_opset);

// Rewrites 1-D Convs / MaxPools / AveragePools as 2-D ones of height 1 between an Unsqueeze and
// a Squeeze, moved apart across element-wise ops (layout_conv1d.cc). Returns how many.
int lift_1d_convolutions(Graph& g, int64_t onnx_opset);

class NhwcPass {
 public:
  NhwcPass(Graph& g, int64_t onnx_opset, const NhwcLayoutOptions& options)
      : g_(g), opset_(onnx_opset), options_(options) {}
  Result<NhwcLayoutStats> run();

 private:
  enum class Role { kNone, kNhwcOp, kAgnostic };
  int64_t opset_of(const Node& n) const { return n.opset != 0 ? n.opset : opset_; }
  bool index(std::vector<size_t>& order);
  const Tensor* constant(const std::string& name) const;
  // A plain Conv's constant weight; nullptr for any other node (whatever its inputs).
  const Tensor* conv_weight(const Node& n) const;
  // A Conv / ConvTranspose on a float input with a constant float 4-D W and bias vector (if any).
  bool float_2d_conv(const Node& n) const;
  std::string constant_root(const std::string& name) const;
  bool known_non_float(const std::string& name) const;
  bool scalar_constant(const std::string& name) const;
  bool dynamic_quantization_param(const std::string& name) const;
  bool is_region(const std::string& name) const { return region_.count(name) != 0; }
  // A region value, or an NCHW value an NHWC op already reads through a ToNHWC: either way its
  // NHWC twin exists, and another region node may read that twin for free.
  bool has_twin(const std::string& name) const { return is_region(name) || entering_.count(name) != 0; }
  // After classification: a Resize, ConvTranspose or DequantizeLinear whose output no region
  // node reads goes back to NCHW.
  void keep_widening_exits_nchw(const std::vector<size_t>& order);
  Role classify(size_t i);
  bool per_channel_constant(const std::string& name, Shape& nhwc_shape) const;
  bool fusable_activation(const Node& act, float& lo, float& hi) const;
  bool inference_batch_norm(const Node& n) const;
  // `inputs` inputs, the first a float map and the rest constant float vectors (a per-channel
  // scale, shift, mean...), and one output.
  bool channel_affine(const Node& n, size_t inputs) const;
  bool pads_batch_only(const Node& n) const;
  void try_fuse(size_t conv);
  // The rewrites for the own kernels (layout_nhwc_fusions.cc): merge_for_own_kernels() after
  // classification, rewrite_merged() on each region node as it is emitted (renamed to `nhwc`).
  void merge_for_own_kernels(const std::vector<size_t>& order, NhwcLayoutStats& stats);
  void rewrite_merged(size_t i, Node& n, const std::unordered_map<std::string, std::string>& nhwc) const;
  // Node i becomes part of the node that reads it: dropped, and counted as merged.
  void merge_into_reader(size_t i) {
    fused_away_[i] = true;
    merged_.insert(i);
  }
  int fuse_pointwise_depthwise(const std::vector<size_t>& order);
  int fuse_concats(const std::vector<size_t>& order);
  int64_t region_channels(const std::string& value, int depth = 0) const;
  int read_images_in_nchw();
  int image_conv_read_only_by(size_t j) const;
  void take_image_conv(size_t c, const std::unordered_map<std::string, std::string>& nhwc, const char* op,
                       Node& n) const;
  int fuse_stem_pools(const std::vector<size_t>& order);
  int fuse_stem_depthwise(const std::vector<size_t>& order);
  int fuse_norm_convs(const std::vector<size_t>& order);
  int fuse_residual_adds(const std::vector<size_t>& order);
  std::string fresh(const std::string& base);
  // Channel Slices and channel shuffles in the region (layout_relabel.cc): their axes, shape
  // and perm operands re-labelled for NHWC.
  struct Relabel {
    int input = -1;             // the constant input replaced (shape, axes), or -1
    Tensor constant;            // its NHWC value
    std::vector<int64_t> perm;  // a Transpose's NHWC perm (empty: unchanged)
    int64_t axis = -1;          // the NHWC value of its `axis` attribute (Split), or -1
  };
  // torch's permutes between NCHW and channels-last around a LayerNorm or Linear (ConvNeXt,
  // Swin) run as Identities (identities_): Transpose [0, 3, 1, 2] of channels-last data enters
  // the region (the data is its output's NHWC twin), Transpose [0, 2, 3, 1] of a region value
  // leaves it as its NHWC twin.
  bool channels_last_entry(size_t i) const;
  bool channels_last_exit(size_t i) const;
  // A Shape of a region value reads its NHWC twin's shape, gathered back into NCHW order (a
  // U-Net's Resize to its skip's size): no ToNCHW copies the tensor for its dims.
  bool shape_of_region(size_t i) const;
  void emit_shape_of_twin(const Node& shape, const std::string& twin, std::vector<Node>& out);
  // A Reduce* of a region value whose result has the same shape and memory in both layouts
  // (keepdims = 0 with the kept dims in the same order, or all but N reduced: torch's
  // x.mean([2, 3]) before a classifier) reads the NHWC twin over the re-labelled axes, which it
  // returns in `nhwc_axes`: no ToNCHW copies the map for it.
  bool reduce_of_region(size_t i, std::vector<int64_t>& nhwc_axes) const;
  void emit_reduce_of_twin(const Node& reduce, const std::string& twin, const std::vector<int64_t>& nhwc_axes,
                           std::vector<Node>& out);
  // A detection head's view + permute of a region value: Reshape [N, C, H, W] -> [N, a..., H,
  // W] (constant, splitting C), read only by a Transpose. The Reshape reads the NHWC twin as
  // [N, H, W, a...] and the Transpose's perm composes with that move (SSD's and RetinaNet's
  // [0, 3, 4, 1, 2] becomes an Identity): no ToNCHW copies the map for them.
  struct SplitExit {
    std::vector<int64_t> twin_shape;  // the Reshape's shape on the NHWC twin
    size_t transpose = 0;
    std::vector<int64_t> perm;  // the Transpose's perm over that Reshape's output
  };
  bool channel_split_exit(size_t i, SplitExit& e) const;
  void emit_split_exit(size_t i, const std::string& twin, Node& n);
  // Its Transpose with the composed perm: an Identity where that keeps every axis.
  static void emit_split_exit_transpose(const std::vector<int64_t>& perm, Node& n);
  // torch's GroupNorm: Reshape `first` of a region value to [N, G, -1] (constant), read only by
  // an InstanceNormalization of unit scale and zero bias, read only by a Reshape back to the
  // value's shape (Shape of it, or its constant dims). The last Reshape becomes the NHWC
  // GroupNorm of the value (layout_group_norm.cc); the other two go.
  bool fuse_group_norm(size_t first);
  // The Mul(gamma) and Add(beta) of C constants after GroupNorm or InstanceNormalization `norm`,
  // each alone reading what is before it, become its gamma and beta inputs, or fold into its
  // scale and B (it then writes the Add's output).
  void absorb_channel_affine(size_t norm, int64_t channels);
  bool relabeled(size_t i);
  bool relabel_slice(size_t i);
  bool relabel_pad(size_t i);
  bool relabel_split(size_t i);
  // Reshape `first` to 5-D -> its one reader, a Transpose [0, 2, 1, 3, 4] -> its one reader, a
  // Reshape to 4-D, shapes constant: the ops of a channel shuffle and of a clip's view switch.
  struct SwapChain {
    std::vector<int64_t> five, four;  // the two Reshapes' shapes
    int transpose = -1, join = -1;    // the Transpose and the last Reshape
  };
  bool swap_chain(size_t first, SwapChain& c) const;
  bool relabel_channel_shuffle(size_t first);
  bool relabel_clip_view(size_t first);
  void apply_relabel(size_t i, Node& n);
  // The one node reading `value` (no graph output, no subgraph capture), or -1.
  int sole_reader(const std::string& value) const;
  bool constant_ints(const std::string& name, std::vector<int64_t>& out) const;
  Node boundary(const char* op, const std::string& in, const std::string& out, bool unit) const;

  Graph& g_;
  int64_t opset_;
  NhwcLayoutOptions options_;
  std::unordered_map<std::string, size_t> producer_;
  std::unordered_map<std::string, std::vector<size_t>> consumers_;
  std::set<std::string> graph_outputs_;
  std::set<std::string> subgraph_reads_;
  std::unordered_map<std::string, const Tensor*> initializers_;
  std::unordered_map<std::string, DataType> elem_types_;
  std::unordered_map<std::string, std::vector<Dim>> dims4_;  // value_info of rank 4
  std::unordered_set<std::string> names_;

  std::vector<Role> role_;
  std::vector<bool> fused_away_;
  std::unordered_map<size_t, size_t> pointwise_of_;  // depthwise Conv -> the 1x1 Conv merged into it
  std::unordered_map<size_t, size_t> concat_of_;     // 1x1 Conv / MaxPool -> the Concat merged into it
  std::unordered_set<size_t> merged_;                // nodes merged into another (not activations)
  std::unordered_set<size_t> nchw_input_;            // Convs that read their entering input in NCHW
  std::unordered_map<size_t, size_t> stem_of_;       // MaxPool -> the image Conv merged into it
  std::unordered_map<size_t, size_t> stem_dw_of_;    // depthwise Conv -> the image Conv merged into it
  std::unordered_map<size_t, size_t> norm_of_;       // 1x1 Conv -> the BatchNormalization merged into it
  std::unordered_set<std::string> region_;           // values produced in NHWC
  std::unordered_set<std::string> unit_;             // region values known to be [N,1,1,C]
  std::unordered_set<std::string> entering_;
  std::unordered_map<std::string, std::string> const_nhwc_;  // constant -> its re-labelled twin
  std::vector<NamedTensor> new_initializers_;
  std::unordered_map<size_t, Relabel> relabel_;
  std::unordered_set<size_t> group_norms_;                       // last Reshapes rewritten as GroupNorm
  std::unordered_set<size_t> identities_;                        // channels-last entries and exits, emitted as Identity
  std::unordered_map<size_t, SplitExit> split_exits_;            // Reshape -> its rewrite (channel_split_exit)
  std::unordered_map<size_t, std::vector<int64_t>> exit_perms_;  // its Transpose -> the composed perm
};

}  // namespace layout_internal
}  // namespace xonnx
