// Reference kernels: layout family, part 2. Pad, CenterCropPad, DepthToSpace, SpaceToDepth,
// ReverseSequence. Registered from register_layout_ops (layout.cc).
#include <cstring>
#include <limits>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/elem_copy.h"
#include "runtime/ops/ref/layout_internal.h"
#include "runtime/ops/ref/pad_mode.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::ElemCopy;
using ref::int_list_input;
using ref::tensor_input;
using ref::strided_copy;

// For each output dimension d, maps[d][o] is the input index along d or -1 ("fill").
// Output elements with any -1 get element 0 of `fill` (or stay zero-initialised if null).
void gather_by_maps(const Tensor& x, Tensor* y, const std::vector<std::vector<int64_t>>& maps, const Tensor* fill) {
  const Shape& out_shape = y->shape();
  const int64_t total = y->numel();
  if (total <= 0) return;
  ElemCopy cp(x, y);
  const size_t rank = out_shape.size();
  if (rank == 0) {
    cp.one(0, 0);
    return;
  }
  std::unique_ptr<ElemCopy> fill_cp;
  if (fill) fill_cp = std::make_unique<ElemCopy>(*fill, y);
  const auto in_strides = ref::contiguous_strides(x.shape());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t src = 0;
    bool pad = false;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t s = maps[d][static_cast<size_t>(idx[d])];
      if (s < 0) {
        pad = true;
        break;
      }
      src += s * in_strides[d];
    }
    if (!pad) {
      cp.one(o, src);
    } else if (fill_cp) {
      fill_cp->one(o, 0);
    }
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out_shape[d]) break;
      idx[d] = 0;
    }
  }
}

// A scalar of `dtype` holding `v` (numeric types); zero for types without a conversion.
Result<Tensor> scalar_of(DataType dtype, double v) {
  XONNX_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, {}));
  if (dtype == DataType::kBool) {
    t.data<bool>()[0] = v != 0.0;
    return t;
  }
  XONNX_DISPATCH_NUMERIC(dtype, break, { t.data<T>()[0] = from_compute<T>(static_cast<compute_t<T>>(v)); });
  if (v != 0.0 && dtype_is_float(dtype) && dtype_bits(dtype) <= 8) {
    if (dtype == DataType::kFloat4E2M1) {
      subbyte_set(t.raw_data(), dtype, 0, float_to_float4e2m1(static_cast<float>(v)));
    } else {
      t.data<uint8_t>()[0] = float_to_float8(dtype, static_cast<float>(v), true);
    }
  }
  return t;
}

// ---------------------------------------------------------------- Pad
using ref::PadMode;

Result<std::unique_ptr<Kernel>> create_pad(const KernelInit& init) {
  const int ver = init.since_version();
  XONNX_ASSIGN_OR_RETURN(std::string mode_s, init.get_string("mode", "constant"));
  PadMode mode;
  if (mode_s == "constant")
    mode = PadMode::kConstant;
  else if (mode_s == "reflect")
    mode = PadMode::kReflect;
  else if (mode_s == "edge")
    mode = PadMode::kEdge;
  else if (mode_s == "wrap" && ver >= 19)
    mode = PadMode::kWrap;
  else
    return invalid_model("unsupported Pad mode '", mode_s, "'");
  std::vector<int64_t> pads_attr;
  float value_attr = 0.0f;
  if (ver < 11) {
    const char* name = ver < 2 ? "paddings" : "pads";
    if (!init.has_attr(name)) return invalid_model("Pad-", ver, " requires the '", name, "' attribute");
    XONNX_ASSIGN_OR_RETURN(pads_attr, init.get_ints(name));
    XONNX_ASSIGN_OR_RETURN(value_attr, init.get_float("value", 0.0f));
  }
  return make_kernel([=](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    const int64_t r = static_cast<int64_t>(x->rank());
    std::vector<int64_t> pads = pads_attr;
    Tensor fill;
    if (ver >= 11) {
      XONNX_ASSIGN_OR_RETURN(pads, int_list_input(ctx, 1, "pads"));
      if (ctx.has_input(2) && ctx.input(2).defined() && ctx.input(2).numel() > 0) {
        fill = ctx.input(2);
        if (fill.dtype() != x->dtype()) {
          return invalid_argument("constant_value has type ", dtype_name(fill.dtype()), ", data has ",
                                  dtype_name(x->dtype()));
        }
      }
    }
    if (!fill.defined()) {
      if (x->dtype() == DataType::kString) {
        fill = Tensor::scalar<std::string>("");
      } else {
        XONNX_ASSIGN_OR_RETURN(fill, scalar_of(x->dtype(), ver < 11 ? value_attr : 0.0));
      }
    }
    std::vector<int64_t> axes;
    if (ver >= 18 && ctx.has_input(3)) {
      XONNX_ASSIGN_OR_RETURN(axes, int_list_input(ctx, 3, "axes"));
    } else {
      for (int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    const size_t na = axes.size();
    if (pads.size() != 2 * na) {
      return invalid_argument("pads has ", pads.size(), " entries, expected ", 2 * na,
                              " (2 per padded axis, input rank ", r, ")");
    }
    std::vector<int64_t> begin(static_cast<size_t>(r), 0), end(static_cast<size_t>(r), 0);
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (size_t i = 0; i < na; ++i) {
      XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], r, "axes value"));
      if (seen[static_cast<size_t>(a)]) return invalid_argument("axes has duplicate axis ", axes[i]);
      seen[static_cast<size_t>(a)] = true;
      begin[static_cast<size_t>(a)] = pads[i];
      end[static_cast<size_t>(a)] = pads[i + na];
    }
    Shape out_shape(static_cast<size_t>(r));
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(r));
    Tensor* y = nullptr;
    if (r == 0) {
      XONNX_ASSIGN_OR_RETURN(y, ctx.allocate_output(0, x->dtype(), {}));
    }
    for (size_t d = 0; d < static_cast<size_t>(r); ++d) {
      const int64_t dim = x->dim(d);
      if (begin[d] < -dim || end[d] < -dim) {
        return invalid_argument("pads ", begin[d], ", ", end[d], " remove more than the ", dim, " elements of axis ",
                                d);
      }
      // Negative pads crop first; the remaining [crop_b, dim - crop_e) is then padded.
      const int64_t crop_b = begin[d] < 0 ? -begin[d] : 0;
      const int64_t crop_e = end[d] < 0 ? -end[d] : 0;
      const int64_t pad_b = begin[d] > 0 ? begin[d] : 0;
      const int64_t pad_e = end[d] > 0 ? end[d] : 0;
      const int64_t n = dim - crop_b - crop_e;
      if (n < 0) {
        return invalid_argument("pads ", begin[d], ", ", end[d], " remove more than the ", dim, " elements of axis ",
                                d);
      }
      if (pad_b > std::numeric_limits<int32_t>::max() || pad_e > std::numeric_limits<int32_t>::max()) {
        return invalid_argument("pads too large");
      }
      const int64_t out = n + pad_b + pad_e;
      if (n == 0 && out > 0 && mode != PadMode::kConstant) {
        return invalid_argument("cannot pad empty axis ", d, " in '", mode_s, "' mode");
      }
      out_shape[d] = out;
      if (d + 1 == static_cast<size_t>(r)) {
        XONNX_ASSIGN_OR_RETURN(y, ctx.allocate_output(0, x->dtype(), out_shape));
        if (y->numel() == 0) return Status::ok();
      }
    }
    for (size_t d = 0; d < static_cast<size_t>(r); ++d) {
      const int64_t crop_b = begin[d] < 0 ? -begin[d] : 0;
      const int64_t pad_b = begin[d] > 0 ? begin[d] : 0;
      const int64_t n = x->dim(d) - crop_b - (end[d] < 0 ? -end[d] : 0);
      const int64_t out = out_shape[d];
      auto& m = maps[d];
      m.resize(static_cast<size_t>(out));
      for (int64_t o = 0; o < out; ++o) {
        const int64_t c = n == 0 ? -1 : ref::pad_source(mode, o - pad_b, n);
        m[static_cast<size_t>(o)] = c < 0 ? -1 : c + crop_b;  // -1: the constant fill
      }
    }
    gather_by_maps(*x, y, maps, &fill);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- CenterCropPad
Result<std::unique_ptr<Kernel>> create_center_crop_pad(const KernelInit& init) {
  const bool has_axes = init.has_attr("axes");
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> axes_attr, init.get_ints("axes"));
  return make_kernel([has_axes, axes_attr](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input_data"));
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> shape, int_list_input(ctx, 1, "shape"));
    const int64_t r = static_cast<int64_t>(x->rank());
    std::vector<int64_t> axes = axes_attr;
    if (!has_axes) {
      axes.clear();
      for (int64_t i = 0; i < r; ++i) axes.push_back(i);
    }
    if (shape.size() != axes.size()) {
      return invalid_argument("shape has ", shape.size(), " entries, expected ", axes.size());
    }
    Shape out_shape = x->shape();
    std::vector<bool> seen(static_cast<size_t>(r), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], r, "axes value"));
      if (seen[static_cast<size_t>(a)]) return invalid_argument("axes has duplicate axis ", axes[i]);
      seen[static_cast<size_t>(a)] = true;
      if (shape[i] < 0) return invalid_argument("shape has a negative value ", shape[i]);
      out_shape[static_cast<size_t>(a)] = shape[i];
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    if (y->numel() == 0) return Status::ok();
    std::vector<std::vector<int64_t>> maps(static_cast<size_t>(r));
    for (size_t d = 0; d < static_cast<size_t>(r); ++d) {
      const int64_t dim = x->dim(d), target = out_shape[d];
      auto& m = maps[d];
      m.resize(static_cast<size_t>(target));
      for (int64_t o = 0; o < target; ++o) {
        if (target <= dim) {
          m[static_cast<size_t>(o)] = o + (dim - target) / 2;
        } else {
          const int64_t c = o - (target - dim) / 2;
          m[static_cast<size_t>(o)] = c >= 0 && c < dim ? c : -1;
        }
      }
    }
    gather_by_maps(*x, y, maps, nullptr);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- DepthToSpace / SpaceToDepth
Result<std::unique_ptr<Kernel>> create_depth_to_space(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t b, init.require_int("blocksize"));
  if (b < 1 || b > (int64_t{1} << 20)) return invalid_model("blocksize must be in [1, 2^20], got ", b);
  XONNX_ASSIGN_OR_RETURN(std::string mode, init.get_string("mode", "DCR"));
  if (mode != "DCR" && mode != "CRD") return invalid_model("mode must be DCR or CRD, got '", mode, "'");
  const bool crd = mode == "CRD";
  return make_kernel([b, crd](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    if (x->rank() != 4) return invalid_argument("input must be 4-D, got ", shape_to_string(x->shape()));
    const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3);
    if (C % (b * b) != 0) {
      return invalid_argument("channels ", C, " not divisible by blocksize^2 = ", b * b);
    }
    const int64_t c2 = C / (b * b);
    if (H > std::numeric_limits<int64_t>::max() / b || W > std::numeric_limits<int64_t>::max() / b) {
      return invalid_argument("output shape overflows");
    }
    const int64_t sN = C * H * W, sC = crd ? b * b * H * W : H * W;
    const int64_t sB1 = crd ? b * H * W : b * c2 * H * W, sB2 = crd ? H * W : c2 * H * W;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), {N, c2, H * b, W * b}));
    // output viewed as [N, C', H, b1, W, b2]
    strided_copy(ElemCopy(*x, y), {N, c2, H, b, W, b}, {sN, sC, W, sB1, 1, sB2}, 0);
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_space_to_depth(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t b, init.require_int("blocksize"));
  if (b < 1 || b > (int64_t{1} << 20)) return invalid_model("blocksize must be in [1, 2^20], got ", b);
  return make_kernel([b](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    if (x->rank() != 4) return invalid_argument("input must be 4-D, got ", shape_to_string(x->shape()));
    const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3);
    if (H % b != 0 || W % b != 0) {
      return invalid_argument("spatial dims ", H, "x", W, " not divisible by blocksize ", b);
    }
    const int64_t h2 = H / b, w2 = W / b;
    if (C > std::numeric_limits<int64_t>::max() / (b * b)) return invalid_argument("output shape overflows");
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), {N, C * b * b, h2, w2}));
    // input viewed as [N, C, H', b1, W', b2]; output order [N, b1, b2, C, H', W']
    strided_copy(ElemCopy(*x, y), {N, b, b, C, h2, w2}, {C * H * W, W, 1, H * W, b * W, b}, 0);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- ReverseSequence
Result<std::unique_ptr<Kernel>> create_reverse_sequence(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t time_axis, init.get_int("time_axis", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t batch_axis, init.get_int("batch_axis", 1));
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0))) {
    return invalid_model("time_axis/batch_axis must be 0/1 or 1/0, got ", time_axis, "/", batch_axis);
  }
  return make_kernel([time_axis, batch_axis](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> lens, int_list_input(ctx, 1, "sequence_lens"));
    if (x->rank() < 2) return invalid_argument("input must have rank >= 2, got ", shape_to_string(x->shape()));
    const int64_t T = x->dim(static_cast<size_t>(time_axis));
    const int64_t B = x->dim(static_cast<size_t>(batch_axis));
    if (static_cast<int64_t>(lens.size()) != B) {
      return invalid_argument("sequence_lens has ", lens.size(), " entries, batch size is ", B);
    }
    for (int64_t l : lens) {
      if (l < 0 || l > T) return invalid_argument("sequence_lens value ", l, " is outside [0, ", T, "]");
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    const auto strides = ref::contiguous_strides(x->shape());
    const int64_t inner = strides[1];
    const int64_t st = strides[static_cast<size_t>(time_axis)], sb = strides[static_cast<size_t>(batch_axis)];
    ElemCopy cp(*x, y);
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t t = 0; t < T; ++t) {
        const int64_t src_t = t < len ? len - 1 - t : t;
        cp.run(t * st + b * sb, src_t * st + b * sb, inner);
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_layout_pad_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Pad", 1, kLatestVersion, create_pad);
  XONNX_REGISTER(registry, "", "CenterCropPad", 18, kLatestVersion, create_center_crop_pad);
  XONNX_REGISTER(registry, "", "DepthToSpace", 1, kLatestVersion, create_depth_to_space);
  XONNX_REGISTER(registry, "", "SpaceToDepth", 1, kLatestVersion, create_space_to_depth);
  XONNX_REGISTER(registry, "", "ReverseSequence", 10, kLatestVersion, create_reverse_sequence);
}

}  // namespace xonnx
