// Shape rules for compute ops: elementwise/broadcast, MatMul/Gemm, Conv and pools,
// normalizations, reductions, and the com.microsoft ops the fusions emit.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "runtime/passes/shape_inference_rules.h"

namespace xonnx {
namespace passes {

namespace {

// Output 0 has input 0's type and shape.
void same_as_input(InferCtx& c) {
  const TypeInfo* t = c.in_type(0);
  if (!t || t->kind != TypeInfo::Kind::kTensor) return;
  if (t->has_shape) {
    c.set_type(0, t->elem_type, t->dims);
  } else {
    c.set_rank_unknown(0, t->elem_type);
  }
}

void same_shape_bool(InferCtx& c) {
  if (const auto* d = c.in_dims(0)) c.set_type(0, DataType::kBool, *d);
}

// Broadcast of every present input; dtype of input `dtype_from` (or bool).
void broadcast_rule(InferCtx& c, DataType dtype) {
  std::vector<Dim> out;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    const auto* d = c.in_dims(i);
    if (!d) {
      c.set_rank_unknown(0, dtype);
      return;
    }
    out = i == 0 ? *d : broadcast_dims(out, *d);
  }
  c.set_type(0, dtype, std::move(out));
}

void broadcast_same_type(InferCtx& c) { broadcast_rule(c, c.in_dtype(0)); }
void broadcast_bool(InferCtx& c) { broadcast_rule(c, DataType::kBool); }

// Torch exports expand(sizes) as Expand(x, Where(Equal(sizes, -1s), ones, sizes)) (-1 keeps a
// dim): propagating the Equal and the Where carries the sizes, symbolic ones included, into
// Expand's shape (a Llama's repeat_kv: without it K's and V's key count is unknown and the
// attention does not fuse). Bool elements are 0 / 1.

// An integer operand's elements: a constant's exact values (negatives too) or the propagated
// dims (sizes: known ones >= 0, symbolic ones unknown but never negative).
struct IntElement {
  std::optional<int64_t> exact;  // the value, when known
  Dim dim;                       // the propagated dim (a symbolic size), else unknown
};

std::optional<std::vector<IntElement>> int_elements(const InferCtx& c, size_t i) {
  const DataType dt = c.in_dtype(i);
  if (dt != DataType::kInt64 && dt != DataType::kInt32) return std::nullopt;
  std::vector<IntElement> e;
  if (const Tensor* t = c.in_constant(i)) {
    if (t->rank() > 1 || t->numel() > kMaxTrackedElements) return std::nullopt;
    for (int64_t k = 0; k < t->numel(); ++k) e.push_back({t->get_as_int64(k), Dim()});
    return e;
  }
  const std::vector<Dim>* d = c.in_elements(i);
  if (!d) return std::nullopt;
  for (const Dim& x : *d) e.push_back({x.known() ? std::optional<int64_t>(x.value) : std::nullopt, x});
  return e;
}

// Element i of a broadcast operand of `size` elements (1 broadcasts).
size_t broadcast_at(size_t size, size_t i) { return size == 1 ? 0 : i; }

void equal_rule(InferCtx& c) {
  broadcast_bool(c);
  const auto a = int_elements(c, 0), b = int_elements(c, 1);
  if (!a || !b) return;
  const size_t na = a->size(), nb = b->size();
  if (na == 0 || nb == 0 || (na != nb && na != 1 && nb != 1)) return;
  std::vector<Dim> out(std::max(na, nb));
  for (size_t i = 0; i < out.size(); ++i) {
    const IntElement &x = (*a)[broadcast_at(na, i)], &y = (*b)[broadcast_at(nb, i)];
    if (x.exact && y.exact) {
      out[i] = known_dim(*x.exact == *y.exact ? 1 : 0);
    } else if ((x.exact && *x.exact < 0 && !y.dim.param.empty()) || (y.exact && *y.exact < 0 && !x.dim.param.empty())) {
      out[i] = known_dim(0);  // a symbolic size is never negative
    } else if (!x.dim.param.empty() && x.dim.param == y.dim.param) {
      out[i] = known_dim(1);
    }
  }
  c.set_elements(0, std::move(out));
}

void where_rule(InferCtx& c) {
  broadcast_rule(c, c.in_dtype(1));
  const std::vector<Dim>* cond = c.in_elements(0);
  const std::vector<Dim>* x = c.in_elements(1);
  const std::vector<Dim>* y = c.in_elements(2);
  if (c.in_dtype(0) != DataType::kBool || !cond || !x || !y) return;
  const size_t n = std::max({cond->size(), x->size(), y->size()});
  for (size_t size : {cond->size(), x->size(), y->size()})
    if (size == 0 || (size != n && size != 1)) return;
  std::vector<Dim> out(n);
  for (size_t i = 0; i < n; ++i) {
    const Dim& k = (*cond)[broadcast_at(cond->size(), i)];
    if (k.known()) out[i] = k.value != 0 ? (*x)[broadcast_at(x->size(), i)] : (*y)[broadcast_at(y->size(), i)];
  }
  c.set_elements(0, std::move(out));
}

// Integer arithmetic on propagated shape values (Add/Sub/Mul/Div of dims).
void propagate_arith(InferCtx& c) {
  const auto* a = c.in_elements(0);
  const auto* b = c.in_elements(1);
  // Nothing to say of an empty operand (broadcasting one gives no elements, not one).
  if (!a || !b || a->empty() || b->empty() || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return;
  const std::string& op = c.node.op_type;
  const size_t n = std::max(a->size(), b->size());
  std::vector<Dim> out(n);
  for (size_t i = 0; i < n; ++i) {
    const Dim& x = (*a)[a->size() == 1 ? 0 : i];
    const Dim& y = (*b)[b->size() == 1 ? 0 : i];
    if (x.known() && y.known()) {
      int64_t r = -1;
      bool overflow = false;
      if (op == "Add") overflow = __builtin_add_overflow(x.value, y.value, &r);
      if (op == "Sub") overflow = __builtin_sub_overflow(x.value, y.value, &r);
      if (op == "Mul") overflow = __builtin_mul_overflow(x.value, y.value, &r);
      if (op == "Div" && y.value != 0) r = x.value / y.value;  // both >= 0: no overflow
      if (!overflow && r >= 0) out[i] = known_dim(r);
    } else if (op == "Add" && !x.param.empty() && !y.param.empty()) {
      out[i] = sum_dims(x, y);
    } else if ((op == "Mul" || op == "Div") && y.known() && y.value == 1) {
      out[i] = x;
    } else if (op == "Mul" && x.known() && x.value == 1) {
      out[i] = y;
    } else if ((op == "Add" || op == "Sub") && y.known() && y.value == 0) {
      out[i] = x;
    }
    if (out[i].value < -1) out[i] = Dim();  // a negative element is no dim
  }
  c.set_elements(0, std::move(out));
}

void arith_rule(InferCtx& c) {
  broadcast_same_type(c);
  if (c.in_dtype(0) == DataType::kInt64 || c.in_dtype(0) == DataType::kInt32) propagate_arith(c);
}

// ---------------------------------------------------------------- linear algebra

void matmul_rule(InferCtx& c) {
  const auto* a = c.in_dims(0);
  const auto* b = c.in_dims(1);
  const DataType dt = c.node.op_type == "MatMulInteger" ? DataType::kInt32 : c.in_dtype(0);
  if (!a || !b || a->empty() || b->empty()) {
    c.set_rank_unknown(0, dt);
    return;
  }
  std::vector<Dim> x = *a, y = *b;
  // com.microsoft FusedMatMul: transA / transB swap the last two dims of A / B (rank >= 2).
  if (c.node.op_type == "FusedMatMul") {
    if (c.attr_int("transBatchA", 0) || c.attr_int("transBatchB", 0)) {
      c.set_rank_unknown(0, dt);
      return;
    }
    if (c.attr_int("transA", 0) && x.size() >= 2) std::swap(x[x.size() - 2], x[x.size() - 1]);
    if (c.attr_int("transB", 0) && y.size() >= 2) std::swap(y[y.size() - 2], y[y.size() - 1]);
  }
  const bool vec_a = x.size() == 1, vec_b = y.size() == 1;
  if (vec_a) x.insert(x.begin(), known_dim(1));
  if (vec_b) y.push_back(known_dim(1));
  std::vector<Dim> batch =
      broadcast_dims(std::vector<Dim>(x.begin(), x.end() - 2), std::vector<Dim>(y.begin(), y.end() - 2));
  if (!vec_a) batch.push_back(x[x.size() - 2]);
  if (!vec_b) batch.push_back(y.back());
  c.set_type(0, dt, std::move(batch));
}

// RNN, GRU, LSTM: Y [seq, dirs, batch, H] and Y_h / Y_c [dirs, batch, H] (layout 1: batch
// first). Without it a recurrent model's later shapes are unknown and its output projection
// stays a MatMul and an Add (gru_lm).
void recurrent_rule(InferCtx& c) {
  const DataType dt = c.in_dtype(0);
  const auto* x = c.in_dims(0);
  const Attribute* direction = c.node.find_attr("direction");
  const bool bidirectional = direction && direction->type == AttrType::kString && direction->s == "bidirectional";
  const auto* r = c.in_dims(2);  // R [dirs, gates * H, H]
  const int64_t hidden = c.attr_int("hidden_size", r && r->size() == 3 ? (*r)[2].value : -1);
  const bool batch_first = c.attr_int("layout", 0) == 1;
  for (size_t out = 0; out < c.node.outputs.size(); ++out) {
    if (!x || x->size() != 3 || hidden <= 0) {
      c.set_rank_unknown(out, dt);
      continue;
    }
    const Dim seq = (*x)[batch_first ? 1 : 0], batch = (*x)[batch_first ? 0 : 1];
    const Dim dirs = known_dim(bidirectional ? 2 : 1), h = known_dim(hidden);
    if (out == 0) {
      c.set_type(out, dt, batch_first ? std::vector<Dim>{batch, seq, dirs, h} : std::vector<Dim>{seq, dirs, batch, h});
    } else {
      c.set_type(out, dt, batch_first ? std::vector<Dim>{batch, dirs, h} : std::vector<Dim>{dirs, batch, h});
    }
  }
}

void gemm_rule(InferCtx& c) {
  const auto* a = c.in_dims(0);
  const auto* b = c.in_dims(1);
  if (!a || !b || a->size() != 2 || b->size() != 2) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  const Dim m = c.attr_int("transA", 0) ? (*a)[1] : (*a)[0];
  const Dim n = c.attr_int("transB", 0) ? (*b)[0] : (*b)[1];
  c.set_type(0, c.in_dtype(0), {m, n});
}

// ---------------------------------------------------------------- conv / pool

// Spatial output dims of Conv / MaxPool / AveragePool / LpPool.
void window_rule(InferCtx& c, const std::vector<Dim>& x, Dim channels, const std::vector<int64_t>& kernel) {
  const size_t nsp = kernel.size();
  if (x.size() != nsp + 2) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  std::vector<int64_t> strides = c.attr_ints("strides").value_or(std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> dil = c.attr_ints("dilations").value_or(std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * nsp, 0));
  const Attribute* ap = c.node.find_attr("auto_pad");
  const std::string auto_pad = ap ? ap->s : "NOTSET";
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  if (strides.size() != nsp || dil.size() != nsp || pads.size() != 2 * nsp) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  std::vector<Dim> out = {x[0], channels};
  for (size_t i = 0; i < nsp; ++i) {
    const Dim& in = x[i + 2];
    if (!in.known() || in.value < 0 || strides[i] <= 0) {
      out.push_back(Dim());
      continue;
    }
    // Kernel, dilation, pads and strides come from the file: a step that would overflow int64,
    // or a window wider than the padded input, leaves the dim unknown (the kernel reports it).
    const int64_t s = strides[i];
    int64_t eff = 0, start = 0, span = 0, last = 0;  // eff: the dilated kernel's extent
    const bool fits = kernel[i] >= 1 && dil[i] >= 1 && !__builtin_mul_overflow(kernel[i] - 1, dil[i], &eff) &&
                      !__builtin_add_overflow(eff, 1, &eff);
    if (!fits) {
      out.push_back(Dim());
      continue;
    }
    int64_t o = -1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      o = in.value / s + (in.value % s != 0);
    } else if (auto_pad == "VALID") {
      if (in.value >= eff) o = (in.value - eff) / s + 1;
    } else if (!__builtin_add_overflow(in.value, pads[i], &start) &&
               !__builtin_add_overflow(start, pads[i + nsp], &span) && !__builtin_sub_overflow(span, eff, &span) &&
               span >= 0) {
      o = (ceil_mode ? span / s + (span % s != 0) : span / s) + 1;
      // A ceil-mode window that would start inside the end padding is dropped.
      if (ceil_mode && (__builtin_mul_overflow(o - 1, s, &last) || last >= start)) --o;
    }
    out.push_back(o >= 0 ? known_dim(o) : Dim());
  }
  c.set_type(0, c.in_dtype(0), std::move(out));
}

void conv_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const auto* w = c.in_dims(1);
  if (!x || !w || w->size() < 3) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  std::vector<int64_t> kernel;
  if (auto ks = c.attr_ints("kernel_shape")) {
    kernel = *ks;
  } else if (!all_known(std::vector<Dim>(w->begin() + 2, w->end()), &kernel)) {
    c.set_type(0, c.in_dtype(0), std::vector<Dim>(x->size()));
    return;
  }
  window_rule(c, *x, (*w)[0], kernel);
}

void pool_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  auto kernel = c.attr_ints("kernel_shape");
  if (!x || !kernel || x->size() < 2) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  window_rule(c, *x, (*x)[1], *kernel);  // MaxPool's optional indices stay unknown
}

// ConvTranspose, as the kernel sizes its output (ref/conv.cc, conv_transpose_geometry): an
// output_shape attribute, SAME padding (input * stride), or the natural size less the pads.
void conv_transpose_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const auto* w = c.in_dims(1);
  if (!x || !w || w->size() < 3 || x->size() != w->size()) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  const size_t nsp = x->size() - 2;
  const int64_t group = c.attr_int("group", 1);
  std::vector<Dim> out = {(*x)[0], (*w)[1].known() && group >= 1 ? dim_times((*w)[1].value, group) : Dim()};
  std::vector<int64_t> kernel;
  if (auto ks = c.attr_ints("kernel_shape")) {
    kernel = *ks;
  } else if (!all_known(std::vector<Dim>(w->begin() + 2, w->end()), &kernel)) {
    kernel.clear();
  }
  const std::vector<int64_t> strides = c.attr_ints("strides").value_or(std::vector<int64_t>(nsp, 1));
  const std::vector<int64_t> dil = c.attr_ints("dilations").value_or(std::vector<int64_t>(nsp, 1));
  const std::vector<int64_t> pads = c.attr_ints("pads").value_or(std::vector<int64_t>(2 * nsp, 0));
  const std::vector<int64_t> opad = c.attr_ints("output_padding").value_or(std::vector<int64_t>(nsp, 0));
  std::vector<int64_t> oshape = c.attr_ints("output_shape").value_or(std::vector<int64_t>());
  if (oshape.size() == nsp + 2) oshape.erase(oshape.begin(), oshape.begin() + 2);
  const Attribute* ap = c.node.find_attr("auto_pad");
  const std::string auto_pad = ap ? ap->s : "NOTSET";
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  const bool valid = kernel.size() == nsp && strides.size() == nsp && dil.size() == nsp && pads.size() == 2 * nsp &&
                     opad.size() == nsp && (oshape.empty() || oshape.size() == nsp);
  for (size_t i = 0; i < nsp; ++i) {
    const Dim& in = (*x)[i + 2];
    int64_t o = -1;
    if (!valid || strides[i] < 1 || dil[i] < 1 || kernel[i] < 1) {
      // the kernel reports it
    } else if (!oshape.empty()) {
      o = oshape[i];
    } else if (in.known() && same) {
      if (__builtin_mul_overflow(in.value, strides[i], &o)) o = -1;
    } else if (in.known() && in.value >= 1) {
      // stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads
      int64_t natural = 0, ek = 0;
      const bool fits = !__builtin_mul_overflow(strides[i], in.value - 1, &natural) &&
                        !__builtin_mul_overflow(kernel[i] - 1, dil[i], &ek) && !__builtin_add_overflow(ek, 1, &ek) &&
                        !__builtin_add_overflow(natural, ek, &natural) &&
                        !__builtin_add_overflow(natural, opad[i], &natural);
      const int64_t pb = auto_pad == "NOTSET" ? pads[i] : 0, pe = auto_pad == "NOTSET" ? pads[i + nsp] : 0;
      int64_t cut = 0, size = 0;
      if (fits && !__builtin_add_overflow(pb, pe, &cut) && !__builtin_sub_overflow(natural, cut, &size)) o = size;
    }
    out.push_back(o >= 0 ? known_dim(o) : Dim());
  }
  c.set_type(0, c.in_dtype(0), std::move(out));
}

// Resize (opsets 10-19) and Upsample (9), as the kernels size the output (ref/resize.cc):
// floor(input * scale) per axis, or `sizes` when the policy is stretch. Scales or sizes that
// are not constants, a crop-and-resize roi and the aspect-ratio policies leave those dims unknown.
void resize_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  if (!x) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  std::vector<Dim> out(x->size());
  const auto give = [&] { c.set_type(0, c.in_dtype(0), out); };
  const Attribute* mode = c.node.find_attr("coordinate_transformation_mode");
  const Attribute* policy = c.node.find_attr("keep_aspect_ratio_policy");
  if (mode && mode->s == "tf_crop_and_resize") return give();
  std::vector<int64_t> axes;
  if (auto a = c.attr_ints("axes")) {
    for (int64_t v : *a) {
      const int64_t n = norm_axis(v, rank);
      if (n < 0 || std::find(axes.begin(), axes.end(), n) != axes.end()) return give();
      axes.push_back(n);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  out = *x;  // axes not resized keep their dims
  const bool upsample_or_10 = c.node.op_type == "Upsample" || c.opset < 11;
  const Tensor* scales = c.in_constant(upsample_or_10 ? 1 : 2);
  if (scales && scales->numel() == 0) scales = nullptr;
  if (scales) {
    if (scales->dtype() != DataType::kFloat || scales->numel() != static_cast<int64_t>(axes.size()))
      return c.set_type(0, c.in_dtype(0), std::vector<Dim>(x->size()));
    for (size_t i = 0; i < axes.size(); ++i) {
      const double s = scales->data<float>()[i];
      Dim& d = out[static_cast<size_t>(axes[i])];
      const double len = d.known() ? static_cast<double>(d.value) * s : -1.0;
      d = s > 0.0 && std::isfinite(s) && len >= 0.0 && len < 9.0e15 ? known_dim(static_cast<int64_t>(std::floor(len)))
                                                                    : Dim();
    }
    return give();
  }
  const std::optional<std::vector<int64_t>> sizes = upsample_or_10 ? std::nullopt : c.in_ints(3);
  const bool stretch = !policy || policy->s == "stretch";
  for (size_t i = 0; i < axes.size(); ++i) {
    const bool known = sizes && sizes->size() == axes.size() && stretch && (*sizes)[i] >= 0;
    out[static_cast<size_t>(axes[i])] = known ? known_dim((*sizes)[i]) : Dim();
  }
  give();
}

// DepthToSpace [N, C, H, W] -> [N, C / b^2, H * b, W * b]; SpaceToDepth the inverse.
void depth_space_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const int64_t b = c.attr_int("blocksize", 0);
  if (!x || x->size() != 4 || b < 1 || b > (int64_t{1} << 20)) {
    c.set_type(0, c.in_dtype(0), std::vector<Dim>(4));
    return;
  }
  const bool to_space = c.node.op_type == "DepthToSpace";
  const Dim &n = (*x)[0], &ch = (*x)[1], &h = (*x)[2], &w = (*x)[3];
  const int64_t bb = b * b;
  const auto grow = [&](const Dim& d) { return d.known() ? dim_times(d.value, b) : Dim(); };
  const auto shrink = [&](const Dim& d, int64_t by) {
    return d.known() && d.value % by == 0 ? known_dim(d.value / by) : Dim();
  };
  if (to_space) {
    c.set_type(0, c.in_dtype(0), {n, shrink(ch, bb), grow(h), grow(w)});
  } else {
    c.set_type(0, c.in_dtype(0), {n, ch.known() ? dim_times(ch.value, bb) : Dim(), shrink(h, b), shrink(w, b)});
  }
}

void global_pool_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  if (!x || x->size() < 2) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  std::vector<Dim> out = {(*x)[0], (*x)[1]};
  for (size_t i = 2; i < x->size(); ++i) out.push_back(known_dim(1));
  c.set_type(0, c.in_dtype(0), std::move(out));
}

// ---------------------------------------------------------------- reductions

void reduce_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const std::string& op = c.node.op_type;
  const bool arg = op == "ArgMax" || op == "ArgMin";
  const DataType dt = arg ? DataType::kInt64 : c.in_dtype(0);
  if (!x) {
    c.set_rank_unknown(0, dt);
    return;
  }
  const bool keep = c.attr_int("keepdims", 1) != 0;
  const int64_t rank = static_cast<int64_t>(x->size());
  std::vector<int64_t> axes;
  bool all = false;
  if (arg) {
    axes = {c.attr_int("axis", 0)};
  } else if (auto a = c.attr_ints("axes")) {
    axes = *a;
  } else if (c.has_input(1)) {
    auto v = c.in_ints(1);
    if (!v) {
      c.set_rank_unknown(0, dt);
      if (keep) c.set_type(0, dt, std::vector<Dim>(x->size()));
      return;
    }
    axes = *v;
  }
  if (axes.empty()) {
    if (c.attr_int("noop_with_empty_axes", 0) != 0) {
      c.set_type(0, dt, *x);
      return;
    }
    all = true;
  }
  std::set<int64_t> reduced;
  for (int64_t a : axes) {
    const int64_t n = norm_axis(a, rank);
    if (n < 0) return;
    reduced.insert(n);
  }
  std::vector<Dim> out;
  for (int64_t i = 0; i < rank; ++i) {
    if (all || reduced.count(i)) {
      if (keep) out.push_back(known_dim(1));
    } else {
      out.push_back((*x)[i]);
    }
  }
  c.set_type(0, dt, std::move(out));
}

// ---------------------------------------------------------------- misc nn

void layer_norm_rule(InferCtx& c) {
  same_as_input(c);
  const auto* x = c.in_dims(0);
  if (!x || c.node.outputs.size() < 2) return;
  const int64_t rank = static_cast<int64_t>(x->size());
  const int64_t axis = norm_axis(c.attr_int("axis", -1), rank);
  if (axis < 0) return;
  std::vector<Dim> stat(x->begin(), x->end());
  for (int64_t i = axis; i < rank; ++i) stat[i] = known_dim(1);
  const DataType st = c.in_dtype(0) == DataType::kDouble ? DataType::kDouble : DataType::kFloat;
  for (size_t o = 1; o < c.node.outputs.size(); ++o) c.set_type(o, st, stat);
}

void dropout_rule(InferCtx& c) {
  same_as_input(c);
  if (const auto* x = c.in_dims(0)) c.set_type(1, DataType::kBool, *x);
}

void topk_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  if (!x) return;
  const int64_t axis = norm_axis(c.attr_int("axis", -1), static_cast<int64_t>(x->size()));
  if (axis < 0) return;
  std::vector<Dim> out = *x;
  auto k =
      c.opset >= 10 ? c.in_ints(1) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{c.attr_int("k", -1)});
  out[axis] = k && k->size() == 1 && (*k)[0] >= 0 ? known_dim((*k)[0]) : Dim();
  c.set_type(0, c.in_dtype(0), out);
  c.set_type(1, DataType::kInt64, out);
}

void cast_like_rule(InferCtx& c) {
  const DataType to = c.in_dtype(1);
  if (const auto* x = c.in_dims(0)) {
    c.set_type(0, to, *x);
  } else {
    c.set_rank_unknown(0, to);
  }
}

}  // namespace

void add_elementwise_rules(RuleTable& t) {
  for (const char* op : {"Relu",
                         "Sigmoid",
                         "Tanh",
                         "Exp",
                         "Log",
                         "Sqrt",
                         "Erf",
                         "Neg",
                         "Abs",
                         "Reciprocal",
                         "Floor",
                         "Ceil",
                         "Round",
                         "Sin",
                         "Cos",
                         "Tan",
                         "Asin",
                         "Acos",
                         "Atan",
                         "Sinh",
                         "Cosh",
                         "Asinh",
                         "Acosh",
                         "Atanh",
                         "Identity",
                         "Softmax",
                         "LogSoftmax",
                         "Hardmax",
                         "LeakyRelu",
                         "Elu",
                         "Selu",
                         "Celu",
                         "HardSigmoid",
                         "HardSwish",
                         "Gelu",
                         "Softplus",
                         "Softsign",
                         "Clip",
                         "Mish",
                         "Sign",
                         "ThresholdedRelu",
                         "Shrink",
                         "CumSum",
                         "Trilu",
                         "BatchNormalization",
                         "InstanceNormalization",
                         "LpNormalization",
                         "GroupNormalization",
                         "MeanVarianceNormalization",
                         "LRN",
                         "BitwiseNot"}) {
    t[op] = same_as_input;
  }
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) t[op] = arith_rule;
  for (const char* op :
       {"Pow", "Max", "Min", "Sum", "Mean", "Mod", "BitShift", "PRelu", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    t[op] = broadcast_same_type;
  }
  for (const char* op : {"And", "Or", "Xor", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    t[op] = broadcast_bool;
  t["Equal"] = equal_rule;
  for (const char* op : {"Not", "IsNaN", "IsInf"}) t[op] = same_shape_bool;
  t["Where"] = where_rule;
  t["CastLike"] = cast_like_rule;
}

void add_nn_rules(RuleTable& t) {
  t["MatMul"] = matmul_rule;
  t["MatMulInteger"] = matmul_rule;
  t["Gemm"] = gemm_rule;
  for (const char* op : {"RNN", "GRU", "LSTM"}) t[op] = recurrent_rule;
  t["Conv"] = conv_rule;
  for (const char* op : {"MaxPool", "AveragePool", "LpPool"}) t[op] = pool_rule;
  t["ConvTranspose"] = conv_transpose_rule;
  for (const char* op : {"Resize", "Upsample"}) t[op] = resize_rule;
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) t[op] = depth_space_rule;
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"}) {
    t[op] = global_pool_rule;
  }
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin"}) {
    t[op] = reduce_rule;
  }
  t["LayerNormalization"] = layer_norm_rule;
  t["Dropout"] = dropout_rule;
  t["TopK"] = topk_rule;
}

void add_contrib_rules(RuleTable& t) {
  for (const char* op : {"Gelu", "FastGelu", "QuickGelu"}) t[op] = same_as_input;
  t["BiasGelu"] = broadcast_same_type;
  t["FusedMatMul"] = matmul_rule;
}

}  // namespace passes
}  // namespace xonnx
