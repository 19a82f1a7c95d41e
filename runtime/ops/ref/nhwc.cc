// The internal NHWC ops of the layout pass (runtime/passes/layout_nhwc.h), domain
// "com.xonnx.nhwc":
//  - ToNHWC / ToNCHW: the region boundaries ([N,C,H,W] <-> [N,H,W,C], any fixed-size type; a
//    view without a copy when C == 1 or H * W == 1, the memory being the same then);
//  - the reference twins of Conv, QLinearConv, ConvTranspose, MaxPool, AveragePool,
//    GlobalAveragePool, BatchNormalization, InstanceNormalization, Resize, DepthToSpace and
//    SpaceToDepth in NHWC: transpose input 0 to NCHW, run the node's ONNX reference kernel (a
//    Conv's residual Z, the
//    Add merged into it, is added after, with broadcasting), apply the fused output range (if
//    any) with Relu/Clip semantics (NaN stays NaN), transpose output 0 back. They define the
//    semantics; the fast kernels (ops/xnnpack, ops/optimized) are the fast candidates and defer
//    to the twins for what they do not cover (NaN/inf, unexpected shapes or types);
//  - the reference twins of the own kernels' fused ops: ConvNchwInput (a Conv whose input is
//    still NCHW: no input transpose), PointwiseDepthwiseConv and StemDepthwiseConv (the two
//    Convs' twins), ConvMaxPool (the Conv's twin, then the MaxPool's), ConcatConv, ConcatMaxPool
//    and ConcatBatchNorm (the parts concatenated, then the Conv's / MaxPool's / BatchNorm's twin)
//    and BatchNormConv (the parts concatenated, the BatchNorm's twin, then the Conv's);
//  - the reference of GroupNorm (torch's GroupNorm without its affine part), computed directly.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/limits.h"
#include "runtime/core/thread_pool.h"
#include "runtime/ops/common/layout_convert.h"
#include "runtime/ops/internal_ops.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

Shape permuted_shape(const Shape& s, bool to_nhwc) {
  return to_nhwc ? Shape{s[0], s[2], s[3], s[1]} : Shape{s[0], s[3], s[1], s[2]};
}

// ---- boundaries ------------------------------------------------------------------------------

class LayoutConversionKernel final : public Kernel {
 public:
  LayoutConversionKernel(bool to_nhwc, std::string value, ThreadPool* pool)
      : to_nhwc_(to_nhwc), value_(std::move(value)), pool_(pool) {}

  Status run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (!x.defined() || x.rank() != 4) {
      return invalid_argument("layout conversion of '", value_, "' needs a 4-D tensor, got ",
                              x.defined() ? "shape " + shape_to_string(x.shape()) : std::string("no tensor"));
    }
    Shape out = permuted_shape(x.shape(), to_nhwc_);
    const int64_t c = to_nhwc_ ? x.dim(1) : x.dim(3);
    const int64_t hw = to_nhwc_ ? x.dim(2) * x.dim(3) : x.dim(1) * x.dim(2);
    if (c == 1 || hw == 1) {  // same memory in both layouts: a view
      ctx.set_output(0, x.reshaped(std::move(out)));
      return Status::ok();
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x.dtype(), std::move(out)));
    Status s = permute_layout(x, to_nhwc_, *y, *pool_);
    if (!s.is_ok()) return s.with_context("layout conversion of '" + value_ + "': ");
    return Status::ok();
  }

 private:
  bool to_nhwc_;
  std::string value_;
  ThreadPool* pool_;
};

Result<std::unique_ptr<Kernel>> create_to_nhwc(const KernelInit& init) {
  return std::unique_ptr<Kernel>(new LayoutConversionKernel(true, init.node().inputs[0], &init.thread_pool()));
}
Result<std::unique_ptr<Kernel>> create_to_nchw(const KernelInit& init) {
  return std::unique_ptr<Kernel>(new LayoutConversionKernel(false, init.node().inputs[0], &init.thread_pool()));
}

// ---- reference twins -------------------------------------------------------------------------

// Input i of a node seen inside another: the outer node's input map[i] (i itself when the
// map is empty).
size_t outer_input(const std::vector<size_t>& map, size_t i) {
  return map.empty() ? i : i < map.size() ? map[i] : SIZE_MAX;
}

// The NHWC node seen as its ONNX original, for creating the ONNX reference kernel (or one
// part of a fused node, whose inputs are the outer node's `map`).
class OnnxTwinInit final : public KernelInit {
 public:
  OnnxTwinInit(const KernelInit& outer, Node node, int since, std::vector<size_t> map = {})
      : outer_(outer), node_(std::move(node)), since_(since), map_(std::move(map)) {}
  const Node& node() const override { return node_; }
  int since_version() const override { return since_; }
  int64_t opset() const override { return outer_.opset(); }
  const Tensor* constant_input(size_t i) const override { return outer_.constant_input(outer_input(map_, i)); }
  ThreadPool& thread_pool() const override { return outer_.thread_pool(); }
  Result<std::unique_ptr<Kernel>> create_reference_kernel() const override {
    return unsupported("no reference kernel for the reference kernel");
  }
  Result<std::shared_ptr<GraphBody>> subgraph(const std::string& name) const override {
    return unsupported("NHWC ops have no subgraph '", name, "'");
  }

 private:
  const KernelInit& outer_;
  Node node_;
  int since_;
  std::vector<size_t> map_;
};

// Runs a kernel on input 0 = x (in NCHW for the ONNX twin; the intermediate of a fused node)
// and the outer context's other inputs (through `map`, as OnnxTwinInit); collects its outputs.
class TwinContext final : public KernelContext {
 public:
  TwinContext(KernelContext& outer, Tensor x, std::vector<size_t> map = {})
      : outer_(outer), x_(std::move(x)), map_(std::move(map)), outs_(outer.num_outputs()) {}
  size_t num_inputs() const override { return map_.empty() ? outer_.num_inputs() : map_.size(); }
  bool has_input(size_t i) const override { return i == 0 ? true : outer_.has_input(outer_input(map_, i)); }
  const Tensor& input(size_t i) const override { return i == 0 ? x_.tensor() : outer_.input(outer_input(map_, i)); }
  const Value& input_value(size_t i) const override { return i == 0 ? x_ : outer_.input_value(outer_input(map_, i)); }
  size_t num_outputs() const override { return outer_.num_outputs(); }
  bool output_wanted(size_t i) const override { return outer_.output_wanted(i); }
  Result<Tensor*> allocate_output(size_t i, DataType dtype, Shape shape) override {
    if (i >= outs_.size()) return internal_error("output index ", i, " out of range");
    const int64_t n = shape_numel(shape), cap = outer_.limits().max_tensor_bytes;
    const int64_t bytes = n < 0 ? -1 : dtype_storage_bytes(dtype, n);
    if (bytes < 0 || bytes > cap) {  // before Tensor::allocate, which would only reserve it
      return resource_exhausted("output ", i, " of shape ", shape_to_string(shape), " ", dtype_name(dtype), " needs ",
                                describe_bytes(bytes), ", over the memory cap of ", describe_bytes(cap));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, std::move(shape)));
    outs_[i] = Value(std::move(t));
    return outs_[i].mutable_tensor();
  }
  Result<Tensor*> allocate_output_uninitialized(size_t i, DataType dtype, Shape shape) override {
    return allocate_output(i, dtype, std::move(shape));  // the fallback path: zeroing is fine
  }
  void set_output(size_t i, Tensor tensor) override {
    if (i < outs_.size()) outs_[i] = Value(std::move(tensor));
  }
  void set_output_value(size_t i, Value value) override {
    if (i < outs_.size()) outs_[i] = std::move(value);
  }
  Result<std::vector<Value>> run_subgraph(const GraphBody& graph, const std::vector<Value>& inputs) override {
    return outer_.run_subgraph(graph, inputs);
  }
  const RunLimits& limits() const override { return outer_.limits(); }
  Status check_interrupt() const override { return outer_.check_interrupt(); }
  const Value& output(size_t i) const { return outs_[i]; }

 private:
  KernelContext& outer_;
  Value x_;
  std::vector<size_t> map_;
  std::vector<Value> outs_;
};

// The fused Swish (activation = "Swish"): x * sigmoid(x), the reference's stable sigmoid.
template <typename T>
void swish_in_place(T* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const T x = p[i];
    const T s = x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
    p[i] = x * s;
  }
}

// The fused HardSwish: x * max(0, min(1, fma(x, 1/6, 1/2))), the reference's formula.
template <typename T>
void hard_swish_in_place(T* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const T x = p[i], v = std::fma(x, T(1) / T(6), T(0.5));
    p[i] = std::isnan(v) ? v : x * std::max(T(0), std::min(T(1), v));
  }
}

// Relu / Clip semantics: values below lo become lo, above hi become hi, NaN stays NaN.
template <typename T>
void clamp_range(T* p, size_t n, double lo, double hi) {
  const T l = static_cast<T>(lo), h = static_cast<T>(hi);
  for (size_t i = 0; i < n; ++i) {
    if (p[i] < l) p[i] = l;
    if (p[i] > h) p[i] = h;
  }
}

class NhwcTwinKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    Node onnx = init.node();
    onnx.domain.clear();
    onnx.opset = init.opset();
    auto k = std::unique_ptr<NhwcTwinKernel>(new NhwcTwinKernel());
    if (onnx.op_type == kConvNchwInputOp) {  // a Conv whose input is still NCHW
      onnx.op_type = "Conv";
      k->nchw_input_ = true;
    }
    k->pool_ = &init.thread_pool();
    k->op_ = onnx.op_type;
    if (onnx.op_type == "Conv" && onnx.inputs.size() > kConvResidualInput) {  // Z: added after the twin
      k->residual_ = !onnx.inputs[kConvResidualInput].empty();
      onnx.inputs.resize(kConvResidualInput);
    }
    std::vector<Attribute> kept;
    for (const Attribute& a : onnx.attributes) {
      if (a.name == "activation_min" && a.type == AttrType::kFloat) {
        k->lo_ = a.f;
        k->fused_ = true;
      } else if (a.name == "activation_max" && a.type == AttrType::kFloat) {
        k->hi_ = a.f;
        k->fused_ = true;
      } else if (a.name == "activation" && a.type == AttrType::kString) {
        if (a.s == "Swish") {
          k->activation_ = Activation::kSwish;
        } else if (a.s == "HardSwish") {
          k->activation_ = Activation::kHardSwish;
        } else {
          return unsupported("NHWC ", onnx.op_type, ": fused activation '", a.s, "'");
        }
      } else {
        kept.push_back(a);
      }
    }
    onnx.attributes = std::move(kept);
    XONNX_ASSIGN_OR_RETURN(ResolvedOp resolved, OpRegistry::global().resolve("", onnx.op_type, init.opset()));
    OnnxTwinInit twin(init, std::move(onnx), resolved.since_version);
    XONNX_ASSIGN_OR_RETURN(k->ref_, resolved.def->create(twin));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (!x.defined() || x.rank() != 4) {
      return invalid_argument("NHWC ", op_, " needs a 4-D input, got ",
                              x.defined() ? "shape " + shape_to_string(x.shape()) : std::string("no tensor"));
    }
    Tensor nchw = x;
    if (!nchw_input_) {
      XONNX_ASSIGN_OR_RETURN(nchw, Tensor::allocate(x.dtype(), permuted_shape(x.shape(), false)));
      XONNX_RETURN_IF_ERROR(permute_layout(x, false, nchw, *pool_));
    }
    TwinContext inner(ctx, std::move(nchw));
    XONNX_RETURN_IF_ERROR(ref_->run(inner));
    const Value& v = inner.output(0);
    if (!v.is_tensor() || v.tensor().rank() != 4) return internal_error("NHWC ", op_, ": no 4-D output");
    const Tensor& y = v.tensor();
    Tensor* out = nullptr;
    if (residual_) {
      XONNX_ASSIGN_OR_RETURN(Tensor conv, Tensor::allocate(y.dtype(), permuted_shape(y.shape(), true)));
      XONNX_RETURN_IF_ERROR(permute_layout(y, true, conv, *pool_));
      XONNX_ASSIGN_OR_RETURN(out, add_residual(ctx, conv));
    } else {
      XONNX_ASSIGN_OR_RETURN(out, ctx.allocate_output_uninitialized(0, y.dtype(), permuted_shape(y.shape(), true)));
      XONNX_RETURN_IF_ERROR(permute_layout(y, true, *out, *pool_));
    }
    const size_t n = static_cast<size_t>(out->numel());
    if (fused_) {
      if (out->dtype() == DataType::kFloat) clamp_range(out->data<float>(), n, lo_, hi_);
      if (out->dtype() == DataType::kDouble) clamp_range(out->data<double>(), n, lo_, hi_);
    }
    if (activation_ == Activation::kSwish) {
      if (out->dtype() == DataType::kFloat) swish_in_place(out->data<float>(), n);
      if (out->dtype() == DataType::kDouble) swish_in_place(out->data<double>(), n);
    }
    if (activation_ == Activation::kHardSwish) {
      if (out->dtype() == DataType::kFloat) hard_swish_in_place(out->data<float>(), n);
      if (out->dtype() == DataType::kDouble) hard_swish_in_place(out->data<double>(), n);
    }
    for (size_t i = 1; i < inner.num_outputs(); ++i) {
      if (ctx.output_wanted(i)) ctx.set_output_value(i, inner.output(i));
    }
    return Status::ok();
  }

 private:
  // Output 0 = conv + Z with numpy broadcasting, as the Add the layout pass merged.
  static Result<Tensor*> add_residual(KernelContext& ctx, const Tensor& conv) {
    XONNX_ASSIGN_OR_RETURN(const Tensor* z, ref::tensor_input(ctx, kConvResidualInput, "Z"));
    if (z->dtype() != conv.dtype()) {
      return invalid_argument("NHWC Conv: Z has type ", dtype_name(z->dtype()), ", the convolution ",
                              dtype_name(conv.dtype()));
    }
    XONNX_ASSIGN_OR_RETURN(const Shape shape, ref::broadcast_shapes(conv.shape(), z->shape()));
    XONNX_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, conv.dtype(), shape));
    const auto add = [&](auto tag) {
      using T = decltype(tag);
      const T* a = conv.data<T>();
      const T* b = z->data<T>();
      T* o = out->data<T>();
      ref::for_each_broadcast(shape, {conv.shape(), z->shape()},
                              [&](int64_t i, const std::vector<int64_t>& at) { o[i] = a[at[0]] + b[at[1]]; });
    };
    if (conv.dtype() == DataType::kFloat) {
      add(float{});
    } else if (conv.dtype() == DataType::kDouble) {
      add(double{});
    } else {
      return unsupported("NHWC Conv: a residual Z of type ", dtype_name(conv.dtype()));
    }
    return out;
  }

  ThreadPool* pool_ = nullptr;
  std::string op_;
  std::unique_ptr<Kernel> ref_;
  bool residual_ = false;    // Conv with Z (input 3)
  bool nchw_input_ = false;  // ConvNchwInput: input 0 is already NCHW
  bool fused_ = false;
  enum class Activation { kNone, kSwish, kHardSwish };
  Activation activation_ = Activation::kNone;  // the fused `activation`, after the range
  double lo_ = -std::numeric_limits<double>::infinity();
  double hi_ = std::numeric_limits<double>::infinity();
};

// The parts (input 0, then inputs from `rest` on) of a ConcatConv / ConcatMaxPool /
// ConcatBatchNorm concatenated on the NHWC channel axis; an error naming the part when they do
// not concatenate.
Result<Tensor> concat_channels(const KernelContext& ctx, size_t rest) {
  std::vector<const Tensor*> parts{&ctx.input(0)};
  for (size_t i = rest; i < ctx.num_inputs(); ++i) parts.push_back(&ctx.input(i));
  const Tensor& first = *parts[0];
  int64_t channels = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const Tensor& p = *parts[k];
    if (!p.defined() || p.rank() != 4 || p.dtype() != first.dtype() || p.dim(0) != first.dim(0) ||
        p.dim(1) != first.dim(1) || p.dim(2) != first.dim(2) || p.dtype() == DataType::kString ||
        dtype_bits(p.dtype()) % 8 != 0)
      return invalid_argument("part ", k, " (", p.defined() ? shape_to_string(p.shape()) : std::string("no tensor"),
                              ") does not concatenate with part 0 (",
                              first.defined() ? shape_to_string(first.shape()) : std::string("no tensor"),
                              ") on the NHWC channel axis");
    channels += p.dim(3);
  }
  XONNX_ASSIGN_OR_RETURN(Tensor joined,
                         Tensor::allocate(first.dtype(), {first.dim(0), first.dim(1), first.dim(2), channels}));
  const size_t es = static_cast<size_t>(dtype_bits(first.dtype()) / 8);
  const int64_t pixels = first.dim(0) * first.dim(1) * first.dim(2);
  char* out = static_cast<char*>(joined.raw_data());
  for (int64_t px = 0; px < pixels; ++px) {
    for (const Tensor* p : parts) {
      const size_t bytes = static_cast<size_t>(p->dim(3)) * es;
      std::memcpy(out, static_cast<const char*>(p->raw_data()) + static_cast<size_t>(px) * bytes, bytes);
      out += bytes;
    }
  }
  return joined;
}

// Two NHWC twins in a row: the first on the node's input 0 (and its inputs `first_map`), the
// second on the first's output (and the node's inputs `second_map`). With `parts_from` > 0, the
// first reads input 0 and the inputs from `parts_from` on concatenated (concat_channels).
class TwoStageTwin final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init, Node first, std::vector<size_t> first_map,
                                                Node second, std::vector<size_t> second_map, size_t parts_from = 0) {
    auto k = std::unique_ptr<TwoStageTwin>(new TwoStageTwin());
    k->op_ = init.node().op_type;
    k->first_name_ = first.op_type;
    k->first_map_ = std::move(first_map);
    k->second_map_ = std::move(second_map);
    k->parts_from_ = parts_from;
    XONNX_ASSIGN_OR_RETURN(k->first_, NhwcTwinKernel::create(OnnxTwinInit(init, std::move(first), 1, k->first_map_)));
    XONNX_ASSIGN_OR_RETURN(k->second_,
                           NhwcTwinKernel::create(OnnxTwinInit(init, std::move(second), 1, k->second_map_)));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) override {
    Tensor x = ctx.input(0);
    if (parts_from_ > 0) {
      XONNX_ASSIGN_OR_RETURN(x, concat_channels(ctx, parts_from_));
    }
    TwinContext first(ctx, std::move(x), first_map_);
    XONNX_RETURN_IF_ERROR(first_->run(first));
    if (!first.output(0).is_tensor()) return internal_error(op_, ": its ", first_name_, " gave no tensor");
    TwinContext second(ctx, first.output(0).tensor(), second_map_);
    XONNX_RETURN_IF_ERROR(second_->run(second));
    if (!second.output(0).is_tensor()) return internal_error(op_, ": no output tensor");
    ctx.set_output(0, second.output(0).tensor());
    return Status::ok();
  }

 private:
  std::string op_, first_name_;
  std::vector<size_t> first_map_, second_map_;
  size_t parts_from_ = 0;
  std::unique_ptr<Kernel> first_, second_;
};

// A part of a fused node: the NHWC op `op`, named after the node + "/" + suffix, with the
// node's attributes that `take` selects (and may rename).
Node fused_part(const Node& fused, const std::string& op, const std::string& suffix, std::vector<std::string> inputs,
                const std::function<bool(Attribute&)>& take) {
  Node part;
  part.name = fused.name + "/" + suffix;
  part.op_type = op;
  part.domain = kNhwcDomain;
  part.inputs = std::move(inputs);
  for (Attribute a : fused.attributes)
    if (take(a)) part.attributes.push_back(std::move(a));
  return part;
}

// Whether `a` is named prefix + x; if so it is renamed x.
bool strip_prefix(Attribute& a, const std::string& prefix) {
  if (a.name.compare(0, prefix.size(), prefix) != 0) return false;
  a.name = a.name.substr(prefix.size());
  return true;
}

// The reference of the layout pass's PointwiseDepthwiseConv (X, W_pw, B_pw, W_dw, B_dw): the
// twin of its 1x1 Conv (the pointwise_* output range and activation) into a temporary, then
// the twin of its depthwise Conv on that (the node's other attributes).
Result<std::unique_ptr<Kernel>> create_pointwise_depthwise_twin(const KernelInit& init) {
  const Node& fused = init.node();
  const std::string prefix = "pointwise_";
  Node pw = fused_part(fused, "Conv", "pointwise",
                       {fused.inputs[0], fused.inputs[1], init.has_input(2) ? fused.inputs[2] : ""},
                       [&](Attribute& a) { return strip_prefix(a, prefix); });
  Node dw = fused_part(fused, "Conv", "depthwise",
                       {fused.name + "/pointwise_output", fused.inputs[3], init.has_input(4) ? fused.inputs[4] : ""},
                       [&](Attribute& a) { return a.name.compare(0, prefix.size(), prefix) != 0; });
  return TwoStageTwin::create(init, std::move(pw), {0, 1, 2}, std::move(dw), {0, 3, 4});
}

// The reference of the layout pass's ConvMaxPool (X, W, B): the Conv's twin (ConvNchwInput's
// with nchw_input = 1), then the MaxPool's (the pool_* attributes) on its output.
Result<std::unique_ptr<Kernel>> create_conv_max_pool_twin(const KernelInit& init) {
  const Node& fused = init.node();
  const std::string prefix = "pool_";
  XONNX_ASSIGN_OR_RETURN(const int64_t nchw_input, init.get_int("nchw_input", 0));
  Node conv =
      fused_part(fused, nchw_input == 1 ? kConvNchwInputOp : "Conv", "conv",
                 {fused.inputs[0], fused.inputs[1], init.has_input(2) ? fused.inputs[2] : ""},
                 [&](Attribute& a) { return a.name.compare(0, prefix.size(), prefix) != 0 && a.name != "nchw_input"; });
  Node pool = fused_part(fused, "MaxPool", "pool", {fused.name + "/conv_output"},
                         [&](Attribute& a) { return strip_prefix(a, prefix); });
  return TwoStageTwin::create(init, std::move(conv), {0, 1, 2}, std::move(pool), {0});
}

// The reference of the layout pass's StemDepthwiseConv (X, W, B, W_dw, B_dw): the image
// Conv's twin (its stem_* attributes; ConvNchwInput's with nchw_input = 1) into a temporary,
// then the depthwise Conv's twin on that (the node's other attributes).
Result<std::unique_ptr<Kernel>> create_stem_depthwise_twin(const KernelInit& init) {
  const Node& fused = init.node();
  const std::string prefix = "stem_";
  XONNX_ASSIGN_OR_RETURN(const int64_t nchw_input, init.get_int("nchw_input", 0));
  Node stem = fused_part(fused, nchw_input == 1 ? kConvNchwInputOp : "Conv", "stem",
                         {fused.inputs[0], fused.inputs[1], init.has_input(2) ? fused.inputs[2] : ""},
                         [&](Attribute& a) { return strip_prefix(a, prefix); });
  Node dw =
      fused_part(fused, "Conv", "depthwise",
                 {fused.name + "/stem_output", fused.inputs[3], init.has_input(4) ? fused.inputs[4] : ""},
                 [&](Attribute& a) { return a.name.compare(0, prefix.size(), prefix) != 0 && a.name != "nchw_input"; });
  return TwoStageTwin::create(init, std::move(stem), {0, 1, 2}, std::move(dw), {0, 3, 4});
}

// The references of the layout pass's ConcatConv (part 0, W, B, parts 1..), ConcatMaxPool (the
// parts) and ConcatBatchNorm (part 0, scale, B, mean, var, parts 1..): the parts concatenated,
// then the NHWC Conv / MaxPool / BatchNormalization twin on that.
class ConcatTwin final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    Node inner = init.node();
    const std::string op = inner.op_type;
    auto k = std::unique_ptr<ConcatTwin>(new ConcatTwin());
    k->inner_op_ = op == kConcatConvOp ? "Conv" : op == kConcatBatchNormOp ? "BatchNormalization" : "MaxPool";
    k->rest_ = op == kConcatConvOp ? 3 : op == kConcatBatchNormOp ? 5 : 1;  // the inner node's inputs
    inner.op_type = k->inner_op_;
    inner.inputs.resize(k->rest_);
    for (size_t i = 0; i < k->rest_; ++i) k->map_.push_back(i);
    XONNX_ASSIGN_OR_RETURN(k->inner_, NhwcTwinKernel::create(OnnxTwinInit(init, std::move(inner), 1, k->map_)));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) override {
    XONNX_ASSIGN_OR_RETURN(Tensor joined, concat_channels(ctx, rest_));
    TwinContext inner(ctx, std::move(joined), map_);
    XONNX_RETURN_IF_ERROR(inner_->run(inner));
    if (!inner.output(0).is_tensor()) return internal_error("the concatenated parts' ", inner_op_, " gave no tensor");
    ctx.set_output(0, inner.output(0).tensor());
    return Status::ok();
  }

 private:
  const char* inner_op_ = "MaxPool";
  size_t rest_ = 1;          // the input index where parts 1.. start
  std::vector<size_t> map_;  // the inner node's inputs in the outer one
  std::unique_ptr<Kernel> inner_;
};

// The reference of the layout pass's GroupNorm (torch's GroupNorm) on NHWC data [N, H, W, C]:
// per image and group of C / G consecutive channels, (x - mean) / sqrt(var + epsilon) over all
// its pixels' values, as InstanceNormalization of the [N, G, -1] view computes it (population
// variance), in double; then, given gamma and beta [C], times gamma and plus beta in float, as
// the Mul and Add after the view did.
Result<std::unique_ptr<Kernel>> create_group_norm_twin(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(const int64_t groups, init.require_int("groups"));
  XONNX_ASSIGN_OR_RETURN(const float epsilon, init.get_float("epsilon", 1e-5f));
  if (groups < 1) return invalid_model("GroupNorm: groups must be positive, got ", groups);
  return make_kernel([groups, epsilon](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, ref::tensor_input(ctx, 0, "X"));
    if (x->dtype() != DataType::kFloat || x->rank() != 4)
      return invalid_argument("GroupNorm: X must be a 4-D float tensor, got ", shape_to_string(x->shape()));
    const int64_t n = x->dim(0), pixels = x->dim(1) * x->dim(2), c = x->dim(3);
    if (c % groups != 0) return invalid_argument("GroupNorm: ", c, " channels in ", groups, " groups");
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, x->shape()));
    const int64_t cg = c / groups;
    const float* gamma = nullptr;
    const float* beta = nullptr;
    if (ctx.num_inputs() > 1) {
      XONNX_ASSIGN_OR_RETURN(const Tensor* s, ref::tensor_input(ctx, 1, "gamma"));
      XONNX_ASSIGN_OR_RETURN(const Tensor* b, ref::tensor_input(ctx, 2, "beta"));
      if (s->dtype() != DataType::kFloat || s->shape() != Shape{c} || b->dtype() != DataType::kFloat ||
          b->shape() != Shape{c})
        return invalid_argument("GroupNorm: gamma and beta must be float [", c, "], got ", shape_to_string(s->shape()),
                                " and ", shape_to_string(b->shape()));
      gamma = s->data<float>();
      beta = b->data<float>();
    }
    for (int64_t img = 0; img < n; ++img) {
      const float* in = x->data<float>() + img * pixels * c;
      float* out = y->data<float>() + img * pixels * c;
      for (int64_t g = 0; g < groups; ++g) {
        double sum = 0;
        for (int64_t p = 0; p < pixels; ++p)
          for (int64_t k = 0; k < cg; ++k) sum += in[p * c + g * cg + k];
        const double count = static_cast<double>(pixels * cg), mean = sum / count;
        double squares = 0;
        for (int64_t p = 0; p < pixels; ++p)
          for (int64_t k = 0; k < cg; ++k) squares += (in[p * c + g * cg + k] - mean) * (in[p * c + g * cg + k] - mean);
        const double rstd = 1.0 / std::sqrt(squares / count + static_cast<double>(epsilon));
        for (int64_t p = 0; p < pixels; ++p)
          for (int64_t k = 0; k < cg; ++k) {
            const int64_t ch = g * cg + k;
            float v = static_cast<float>((in[p * c + ch] - mean) * rstd);
            if (gamma) v = v * gamma[ch] + beta[ch];
            out[p * c + ch] = v;
          }
      }
    }
    return Status::ok();
  });
}

// The reference of the layout pass's BatchNormConv (part 0, scale, B, mean, var, W, B_conv,
// parts 1..): the parts concatenated, the BatchNormalization's twin (its norm_* attributes) on
// them, then the 1x1 Conv's twin (the node's other attributes) on that.
Result<std::unique_ptr<Kernel>> create_norm_conv_twin(const KernelInit& init) {
  const Node& fused = init.node();
  const std::string prefix = "norm_";
  Node norm = fused_part(fused, "BatchNormalization", "norm",
                         {fused.inputs[0], fused.inputs[1], fused.inputs[2], fused.inputs[3], fused.inputs[4]},
                         [&](Attribute& a) { return strip_prefix(a, prefix); });
  Node conv = fused_part(fused, "Conv", "conv",
                         {fused.name + "/norm_output", fused.inputs[5], init.has_input(6) ? fused.inputs[6] : ""},
                         [&](Attribute& a) { return a.name.compare(0, prefix.size(), prefix) != 0; });
  return TwoStageTwin::create(init, std::move(norm), {0, 1, 2, 3, 4}, std::move(conv), {0, 5, 6}, 7);
}

}  // namespace

void register_nhwc_ops(OpRegistry& registry) {
  constexpr const char* d = kNhwcDomain;
  XONNX_REGISTER(registry, d, "ToNHWC", 1, kLatestVersion, create_to_nhwc, Backend::kReference);
  XONNX_REGISTER(registry, d, "ToNCHW", 1, kLatestVersion, create_to_nchw, Backend::kReference);
  XONNX_REGISTER(registry, d, "Conv", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "QLinearConv", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "MaxPool", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "AveragePool", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "GlobalAveragePool", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "BatchNormalization", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "InstanceNormalization", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "Resize", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "DepthToSpace", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "SpaceToDepth", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, kConvNchwInputOp, 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, "ConvTranspose", 1, kLatestVersion, NhwcTwinKernel::create, Backend::kReference);
  XONNX_REGISTER(registry, d, kConcatConvOp, 1, kLatestVersion, ConcatTwin::create, Backend::kReference);
  XONNX_REGISTER(registry, d, kConcatMaxPoolOp, 1, kLatestVersion, ConcatTwin::create, Backend::kReference);
  XONNX_REGISTER(registry, d, kConcatBatchNormOp, 1, kLatestVersion, ConcatTwin::create, Backend::kReference);
  XONNX_REGISTER(registry, d, kBatchNormConvOp, 1, kLatestVersion, create_norm_conv_twin, Backend::kReference);
  XONNX_REGISTER(registry, d, kConvMaxPoolOp, 1, kLatestVersion, create_conv_max_pool_twin, Backend::kReference);
  XONNX_REGISTER(registry, d, kPointwiseDepthwiseOp, 1, kLatestVersion, create_pointwise_depthwise_twin,
                 Backend::kReference);
  XONNX_REGISTER(registry, d, kStemDepthwiseOp, 1, kLatestVersion, create_stem_depthwise_twin, Backend::kReference);
  XONNX_REGISTER(registry, d, kGroupNormOp, 1, kLatestVersion, create_group_norm_twin, Backend::kReference);
}

}  // namespace xonnx
