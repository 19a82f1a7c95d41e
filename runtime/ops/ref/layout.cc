// Reference kernels: layout family, part 1. Transpose, Concat, Split, Slice, Tile, Trilu.
// (Pad, CenterCropPad, DepthToSpace, SpaceToDepth, ReverseSequence are in layout_pad.cc.)
//
// Every op copies elements of any type (strings, bool, fp16, float8, sub-byte) without
// interpreting them.
#include <cstring>
#include <limits>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/elem_copy.h"
#include "runtime/ops/ref/layout_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

using ref::ElemCopy;
using ref::int_list_input;
using ref::tensor_input;
using ref::strided_copy;

// ---------------------------------------------------------------- Transpose
Result<std::unique_ptr<Kernel>> create_transpose(const KernelInit& init) {
  const bool has_perm = init.has_attr("perm");
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> perm_attr, init.get_ints("perm"));
  return make_kernel([has_perm, perm_attr](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    const size_t r = x->rank();
    Shape perm = perm_attr;
    if (!has_perm) {
      perm.resize(r);
      for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
    }
    if (perm.size() != r) {
      return invalid_argument("perm ", shape_to_string(perm), " has ", perm.size(), " entries, input rank is ", r);
    }
    Shape seen(r, 0);
    for (int64_t& p : perm) {
      if (p < 0) p += static_cast<int64_t>(r);  // tolerated by most runtimes
      if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<size_t>(p)]) {
        return invalid_argument("perm ", shape_to_string(perm_attr), " is not a permutation of 0..",
                                static_cast<int64_t>(r) - 1);
      }
      seen[static_cast<size_t>(p)] = true;
    }
    const auto in_strides = ref::contiguous_strides(x->shape());
    Shape out_shape(r);
    Shape strides(r);
    for (size_t i = 0; i < r; ++i) {
      out_shape[i] = x->dim(static_cast<size_t>(perm[i]));
      strides[i] = in_strides[static_cast<size_t>(perm[i])];
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    strided_copy(ElemCopy(*x, y), out_shape, strides, 0);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Concat
Result<std::unique_ptr<Kernel>> create_concat(const KernelInit& init) {
  const int ver = init.since_version();
  if (ver >= 4 && !init.has_attr("axis")) return invalid_model("Concat requires the 'axis' attribute");
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", 1));
  return make_kernel([axis](KernelContext& ctx) -> Status {
    // Inputs are walked by index (no list of them is built): run() must not allocate.
    const Tensor* first_ptr = nullptr;
    for (size_t i = 0; i < ctx.num_inputs() && !first_ptr; ++i) {
      if (!ctx.has_input(i)) continue;
      XONNX_ASSIGN_OR_RETURN(first_ptr, tensor_input(ctx, i, "inputs"));
    }
    if (!first_ptr) return invalid_argument("Concat needs at least one input");
    const Tensor& first = *first_ptr;
    const int64_t r = static_cast<int64_t>(first.rank());
    if (r == 0) return invalid_argument("Concat inputs must have rank >= 1");
    XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, r));
    Shape out_shape = first.shape();
    out_shape[static_cast<size_t>(a)] = 0;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) {
      if (!ctx.has_input(k)) continue;
      XONNX_ASSIGN_OR_RETURN(const Tensor* tp, tensor_input(ctx, k, "inputs"));
      const Tensor& t = *tp;
      if (t.dtype() != first.dtype()) {
        return invalid_argument("input ", k, " has type ", dtype_name(t.dtype()), ", input 0 has ",
                                dtype_name(first.dtype()));
      }
      if (static_cast<int64_t>(t.rank()) != r) {
        return invalid_argument("input ", k, " has shape ", shape_to_string(t.shape()), ", input 0 has ",
                                shape_to_string(first.shape()), " (ranks differ)");
      }
      for (int64_t d = 0; d < r; ++d) {
        if (d != a && t.dim(static_cast<size_t>(d)) != first.dim(static_cast<size_t>(d))) {
          return invalid_argument("input ", k, " has shape ", shape_to_string(t.shape()), ", input 0 has ",
                                  shape_to_string(first.shape()), " (only axis ", a, " may differ)");
        }
      }
      out_shape[static_cast<size_t>(a)] += t.dim(static_cast<size_t>(a));
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, first.dtype(), out_shape));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= out_shape[static_cast<size_t>(d)];
    for (int64_t d = a + 1; d < r; ++d) inner *= out_shape[static_cast<size_t>(d)];
    const int64_t out_row = out_shape[static_cast<size_t>(a)] * inner;
    int64_t col = 0;
    for (size_t k = 0; k < ctx.num_inputs(); ++k) {
      if (!ctx.has_input(k)) continue;
      const Tensor& t = ctx.input(k);
      const int64_t row = t.dim(static_cast<size_t>(a)) * inner;
      ElemCopy cp(t, y);
      for (int64_t o = 0; o < outer; ++o) cp.run(o * out_row + col, o * row, row);
      col += row;
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Split
Result<std::unique_ptr<Kernel>> create_split(const KernelInit& init) {
  const int ver = init.since_version();
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", 0));
  std::vector<int64_t> split_attr;
  if (ver < 13) {
    XONNX_ASSIGN_OR_RETURN(split_attr, init.get_ints("split"));
  }
  const bool has_num_outputs = ver >= 18 && init.has_attr("num_outputs");
  XONNX_ASSIGN_OR_RETURN(int64_t num_outputs, init.get_int("num_outputs", 0));
  if (has_num_outputs && num_outputs < 1) {
    return invalid_model("attribute 'num_outputs' must be >= 1, got ", num_outputs);
  }
  if (has_num_outputs && num_outputs != static_cast<int64_t>(init.num_outputs())) {
    return invalid_model("attribute 'num_outputs' is ", num_outputs, " but the node has ", init.num_outputs(),
                         " outputs");
  }
  // Split-1 takes the sizes as an optional second input; Split-13+ too.
  const bool split_from_input = ver == 1 || ver >= 13;
  return make_kernel([ver, axis, split_attr, split_from_input](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    const int64_t r = static_cast<int64_t>(x->rank());
    XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, r));
    const int64_t dim = x->dim(static_cast<size_t>(a));
    const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
    Shape split = split_attr;
    if (split_from_input && ctx.has_input(1)) {
      XONNX_ASSIGN_OR_RETURN(split, int_list_input(ctx, 1, "split"));
    }
    if (!split.empty()) {
      if (static_cast<int64_t>(split.size()) != n_out) {
        return invalid_argument("split has ", split.size(), " entries but the node has ", n_out, " outputs");
      }
      int64_t sum = 0;
      for (int64_t s : split) {
        if (s < 0) return invalid_argument("split has a negative size ", s);
        if (s > dim - sum)
          return invalid_argument("split sizes ", shape_to_string(split), " exceed axis ", a, "'s size ", dim);
        sum += s;
      }
      if (sum != dim) {
        return invalid_argument("split sizes ", shape_to_string(split), " sum to ", sum, ", but axis ", a, " has size ",
                                dim);
      }
    } else {
      if (n_out < 1) return invalid_argument("Split needs at least one output");
      if (dim % n_out == 0) {
        split.assign(static_cast<size_t>(n_out), dim / n_out);
      } else {
        if (ver < 18) {
          return invalid_argument("axis ", a, " of size ", dim, " cannot be split evenly into ", n_out, " outputs");
        }
        const int64_t chunk = dim / n_out + 1;
        split.assign(static_cast<size_t>(n_out), chunk);
        split.back() = dim - chunk * (n_out - 1);
        if (split.back() < 0) {
          return invalid_argument("axis ", a, " of size ", dim, " cannot be split into ", n_out, " chunks of ", chunk);
        }
      }
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x->dim(static_cast<size_t>(d));
    for (int64_t d = a + 1; d < r; ++d) inner *= x->dim(static_cast<size_t>(d));
    int64_t pos = 0;
    for (int64_t k = 0; k < n_out; ++k) {
      const int64_t len = split[static_cast<size_t>(k)];
      if (ctx.output_wanted(static_cast<size_t>(k))) {
        Shape s = x->shape();
        s[static_cast<size_t>(a)] = len;
        XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(static_cast<size_t>(k), x->dtype(), s));
        ElemCopy cp(*x, y);
        for (int64_t o = 0; o < outer; ++o) cp.run(o * len * inner, (o * dim + pos) * inner, len * inner);
      }
      pos += len;
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Slice
Result<std::unique_ptr<Kernel>> create_slice(const KernelInit& init) {
  const int ver = init.since_version();
  std::vector<int64_t> starts_attr, ends_attr, axes_attr;
  bool has_axes_attr = false;
  if (ver < 10) {
    XONNX_ASSIGN_OR_RETURN(starts_attr, init.get_ints("starts"));
    XONNX_ASSIGN_OR_RETURN(ends_attr, init.get_ints("ends"));
    has_axes_attr = init.has_attr("axes");
    XONNX_ASSIGN_OR_RETURN(axes_attr, init.get_ints("axes"));
    if (!init.has_attr("starts") || !init.has_attr("ends")) {
      return invalid_model("Slice-1 requires the 'starts' and 'ends' attributes");
    }
  }
  return make_kernel([=](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "data"));
    const int64_t r = static_cast<int64_t>(x->rank());
    Shape starts = starts_attr, ends = ends_attr, axes = axes_attr, steps;
    bool has_axes = has_axes_attr;
    if (ver >= 10) {
      XONNX_ASSIGN_OR_RETURN(starts, int_list_input(ctx, 1, "starts"));
      XONNX_ASSIGN_OR_RETURN(ends, int_list_input(ctx, 2, "ends"));
      if (ctx.has_input(3)) {
        XONNX_ASSIGN_OR_RETURN(axes, int_list_input(ctx, 3, "axes"));
        has_axes = true;
      }
      if (ctx.has_input(4)) {
        XONNX_ASSIGN_OR_RETURN(steps, int_list_input(ctx, 4, "steps"));
      }
    }
    if (starts.size() != ends.size()) {
      return invalid_argument("starts has ", starts.size(), " entries, ends has ", ends.size());
    }
    const size_t n = starts.size();
    if (!has_axes) {
      axes.resize(n);
      for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
    }
    if (steps.empty()) steps.assign(n, 1);
    if (axes.size() != n || steps.size() != n) {
      return invalid_argument("starts/ends/axes/steps lengths differ (", n, ", ", n, ", ", axes.size(), ", ",
                              steps.size(), ")");
    }
    Shape out_shape = x->shape();
    Shape start_of(static_cast<size_t>(r), 0), step_of(static_cast<size_t>(r), 1);
    Shape seen(static_cast<size_t>(r), 0);
    for (size_t i = 0; i < n; ++i) {
      XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], r, "axes value"));
      const size_t au = static_cast<size_t>(a);
      if (seen[au]) return invalid_argument("axes has duplicate axis ", axes[i]);
      seen[au] = true;
      const int64_t dim = x->dim(au);
      const int64_t step = steps[i];
      if (step == 0) return invalid_argument("steps must not be 0 (axis ", a, ")");
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s += dim;  // cannot overflow: dim >= 0
      if (e < 0) e += dim;
      int64_t len;
      if (step > 0) {
        s = s < 0 ? 0 : (s > dim ? dim : s);
        e = e < 0 ? 0 : (e > dim ? dim : e);
        len = e > s ? (e - s - 1) / step + 1 : 0;
      } else {
        // -INT64_MIN overflows; any step <= -dim gives the same result.
        const int64_t neg = step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step;
        s = s < 0 ? 0 : (s > dim - 1 ? dim - 1 : s);
        e = e < -1 ? -1 : (e > dim - 1 ? dim - 1 : e);
        len = s > e ? (s - e - 1) / neg + 1 : 0;
      }
      out_shape[au] = len;
      start_of[au] = s;
      step_of[au] = step;
    }
    const auto in_strides = ref::contiguous_strides(x->shape());
    Shape strides(static_cast<size_t>(r));
    int64_t base = 0;
    for (size_t d = 0; d < static_cast<size_t>(r); ++d) {
      // a step is only applied when the output has more than one element along d (no overflow)
      strides[d] = out_shape[d] > 1 ? in_strides[d] * step_of[d] : 0;
      if (out_shape[d] > 0) base += start_of[d] * in_strides[d];
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    strided_copy(ElemCopy(*x, y), out_shape, strides, base);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Tile
Result<std::unique_ptr<Kernel>> create_tile(const KernelInit& init) {
  const int ver = init.since_version();
  return make_kernel([ver](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    const size_t r = x->rank();
    Shape repeats;
    if (ver < 6) {
      // Tile-1: inputs (input, tiles, axis): repeat `tiles` times along `axis`.
      XONNX_ASSIGN_OR_RETURN(const Tensor* tiles, tensor_input(ctx, 1, "tiles"));
      XONNX_ASSIGN_OR_RETURN(const Tensor* axis_t, tensor_input(ctx, 2, "axis"));
      if (tiles->numel() != 1 || axis_t->numel() != 1) {
        return invalid_argument("tiles and axis must be scalars");
      }
      XONNX_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis_t->get_as_int64(0), static_cast<int64_t>(r)));
      repeats.assign(r, 1);
      repeats[static_cast<size_t>(a)] = tiles->get_as_int64(0);
    } else {
      XONNX_ASSIGN_OR_RETURN(repeats, int_list_input(ctx, 1, "repeats"));
    }
    if (repeats.size() != r) {
      return invalid_argument("repeats has ", repeats.size(), " entries, input rank is ", r);
    }
    Shape out_shape(r), view_shape(2 * r);
    Shape view_strides(2 * r);
    const auto in_strides = ref::contiguous_strides(x->shape());
    for (size_t d = 0; d < r; ++d) {
      if (repeats[d] < 0) return invalid_argument("repeats has a negative value ", repeats[d]);
      if (repeats[d] > 0 && x->dim(d) > std::numeric_limits<int64_t>::max() / repeats[d]) {
        return invalid_argument("Tile output shape overflows");
      }
      out_shape[d] = x->dim(d) * repeats[d];
      view_shape[2 * d] = repeats[d];
      view_shape[2 * d + 1] = x->dim(d);
      view_strides[2 * d] = 0;
      view_strides[2 * d + 1] = in_strides[d];
    }
    if (shape_numel(out_shape) < 0) return invalid_argument("Tile output shape overflows");
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    strided_copy(ElemCopy(*x, y), view_shape, view_strides, 0);
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Trilu
Result<std::unique_ptr<Kernel>> create_trilu(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t upper, init.get_int("upper", 1));
  return make_kernel([upper](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Tensor* x, tensor_input(ctx, 0, "input"));
    if (x->rank() < 2) {
      return invalid_argument("input must have rank >= 2, got shape ", shape_to_string(x->shape()));
    }
    int64_t k = 0;
    if (ctx.has_input(1)) {
      XONNX_ASSIGN_OR_RETURN(const Tensor* kt, tensor_input(ctx, 1, "k"));
      if (kt->numel() != 1 || !dtype_is_integer(kt->dtype())) {
        return invalid_argument("k must be an integer scalar");
      }
      k = kt->get_as_int64(0);
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
    const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
    // clamp k so that i + k cannot overflow; beyond +-(rows + cols) the result is the same
    const int64_t lim = rows + cols + 1;
    k = k > lim ? lim : (k < -lim ? -lim : k);
    const int64_t mats = rows * cols == 0 ? 0 : x->numel() / (rows * cols);
    ElemCopy cp(*x, y);
    // Elements not kept stay zero-initialised (empty strings, false, +0.0).
    for (int64_t m = 0; m < mats; ++m) {
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t row = (m * rows + i) * cols;
        // keep j - i >= k (upper) or j - i <= k (lower)
        int64_t lo, hi;  // kept columns [lo, hi)
        if (upper) {
          const int64_t j0 = i + k;
          lo = j0 < 0 ? 0 : (j0 > cols ? cols : j0);
          hi = cols;
        } else {
          const int64_t j1 = i + k + 1;
          lo = 0;
          hi = j1 < 0 ? 0 : (j1 > cols ? cols : j1);
        }
        cp.run(row + lo, row + lo, hi - lo);
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_layout_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Transpose", 1, kLatestVersion, create_transpose);
  XONNX_REGISTER(registry, "", "Concat", 1, kLatestVersion, create_concat);
  XONNX_REGISTER(registry, "", "Split", 1, kLatestVersion, create_split);
  XONNX_REGISTER(registry, "", "Slice", 1, kLatestVersion, create_slice);
  XONNX_REGISTER(registry, "", "Tile", 1, kLatestVersion, create_tile);
  XONNX_REGISTER(registry, "", "Trilu", 14, kLatestVersion, create_trilu);
  register_layout_pad_ops(registry);
}

}  // namespace xonnx
