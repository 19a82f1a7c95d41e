// Shape rules for data-movement and shape-computing ops, with data propagation of small integer
// tensors (Shape -> Gather/Slice -> Unsqueeze -> Concat -> Reshape chains).
#include <algorithm>
#include <climits>
#include <cmath>
#include <set>

#include "runtime/passes/shape_inference_rules.h"
#include "runtime/core/checked.h"

namespace xonnx {
namespace passes {

namespace {

// Elements pass through unchanged (Identity, Squeeze, Unsqueeze, int Cast).
void pass_elements(InferCtx& c) {
  if (const auto* e = c.in_elements(0)) c.set_elements(0, *e);
}

void identity_rule(InferCtx& c) {
  const TypeInfo* t = c.in_type(0);
  if (!t || t->kind != TypeInfo::Kind::kTensor) return;
  if (t->has_shape) {
    c.set_type(0, t->elem_type, t->dims);
  } else {
    c.set_rank_unknown(0, t->elem_type);
  }
  pass_elements(c);
}

void shape_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  if (!x) {
    c.set_type(0, DataType::kInt64, {Dim()});
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  int64_t start = c.opset >= 15 ? c.attr_int("start", 0) : 0;
  int64_t end = c.opset >= 15 ? c.attr_int("end", rank) : rank;
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<Dim> elems;
  for (int64_t i = start; i < end; ++i) elems.push_back((*x)[i]);
  c.set_type(0, DataType::kInt64, {known_dim(static_cast<int64_t>(elems.size()))});
  c.set_elements(0, std::move(elems));
}

void size_rule(InferCtx& c) {
  c.set_type(0, DataType::kInt64, {});
  std::vector<int64_t> dims;
  const auto* x = c.in_dims(0);
  if (!x || !all_known(*x, &dims)) return;
  int64_t n = 1;
  for (int64_t d : dims) n = checked_mul(n, d);  // -1 on overflow: no element
  if (n >= 0) c.set_elements(0, {known_dim(n)});
}

void reshape_rule(InferCtx& c) {
  const DataType dt = c.in_dtype(0);
  // Elements store only non-negative values, so a constant target is read exactly (its -1).
  std::vector<Dim> constant_target;
  int infer_at = -1;
  if (c.in_constant(1)) {
    auto ints = c.in_ints(1);
    if (!ints) return;
    for (size_t i = 0; i < ints->size(); ++i) {
      if ((*ints)[i] == -1) infer_at = static_cast<int>(i);
      constant_target.push_back((*ints)[i] >= 0 ? known_dim((*ints)[i]) : Dim());
    }
  }
  const auto* target = c.in_constant(1) ? &constant_target : c.in_elements(1);
  const auto* shape_dims = c.in_dims(1);
  if (!target) {
    if (shape_dims && shape_dims->size() == 1 && (*shape_dims)[0].known() && (*shape_dims)[0].value >= 0 &&
        (*shape_dims)[0].value <= 1024) {
      c.set_type(0, dt, std::vector<Dim>(static_cast<size_t>((*shape_dims)[0].value)));
    } else {
      c.set_rank_unknown(0, dt);
    }
    return;
  }
  const auto* x = c.in_dims(0);
  const bool allowzero = c.opset >= 14 && c.attr_int("allowzero", 0) != 0;
  std::vector<Dim> out = *target;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].known() && out[i].value == 0 && !allowzero) {
      out[i] = x && i < x->size() ? (*x)[i] : Dim();
    }
  }
  if (infer_at < 0 && !c.in_constant(1)) {
    // Propagated elements hold no -1: a target with one unknown element (torch's
    // Concat(batch, -1, heads, size)) has it fixed by the element count all the same.
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].known() || !out[i].param.empty()) continue;
      if (infer_at >= 0) {
        infer_at = -1;
        break;
      }
      infer_at = static_cast<int>(i);
    }
  }
  if (infer_at >= 0 && x) {
    // -1 = (known input dims) / (known output dims), times the one symbolic input dim the output
    // lacks (or none).
    std::multiset<std::string> in_params, out_params;
    int64_t in_known = 1, out_known = 1;
    bool ok = true;
    for (const Dim& d : *x) {
      if (d.known())
        in_known = checked_mul(in_known, d.value);  // -1 (unknown) on overflow
      else if (!d.param.empty())
        in_params.insert(d.param);
      else
        ok = false;
    }
    for (size_t i = 0; i < out.size(); ++i) {
      if (static_cast<int>(i) == infer_at) continue;
      if (out[i].known())
        out_known = checked_mul(out_known, out[i].value);
      else if (!out[i].param.empty())
        out_params.insert(out[i].param);
      else
        ok = false;
    }
    for (const std::string& p : out_params) {
      auto it = in_params.find(p);
      if (it == in_params.end()) {
        ok = false;
        break;
      }
      in_params.erase(it);
    }
    if (ok && in_params.empty() && in_known >= 0 && out_known > 0 && in_known % out_known == 0) {
      out[infer_at] = known_dim(in_known / out_known);
    } else if (ok && in_params.size() == 1 && in_known >= 0 && in_known == out_known) {
      out[infer_at].param = *in_params.begin();
    }
  }
  const bool small_rank = out.size() <= 1;
  c.set_type(0, dt, std::move(out));
  if (const auto* e = c.in_elements(0); e && small_rank) c.set_elements(0, *e);
}

void transpose_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  if (!x) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  std::vector<int64_t> perm;
  if (auto p = c.attr_ints("perm")) {
    perm = *p;
  } else {
    for (int64_t i = static_cast<int64_t>(x->size()) - 1; i >= 0; --i) perm.push_back(i);
  }
  if (perm.size() != x->size()) return;
  std::vector<Dim> out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x->size())) return;
    out.push_back((*x)[p]);
  }
  c.set_type(0, c.in_dtype(0), std::move(out));
}

void concat_rule(InferCtx& c) {
  const DataType dt = c.in_dtype(0);
  const auto* first = c.in_dims(0);
  if (!first) {
    c.set_rank_unknown(0, dt);
    return;
  }
  const int64_t rank = static_cast<int64_t>(first->size());
  const int64_t axis = norm_axis(c.attr_int("axis", 0), rank);
  if (axis < 0) return;
  std::vector<Dim> out = *first;
  std::vector<Dim> elems;
  bool elems_ok = rank == 1;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    const auto* d = c.in_dims(i);
    if (!d || static_cast<int64_t>(d->size()) != rank) {
      c.set_rank_unknown(0, dt);
      return;
    }
    if (i > 0) {
      const Dim& a = out[axis];
      const Dim& b = (*d)[axis];
      out[axis] = sum_dims(a, b);
      for (int64_t k = 0; k < rank; ++k) {
        if (k != axis && !out[k].known() && out[k].param.empty()) out[k] = (*d)[k];
      }
    }
    const auto* e = c.in_elements(i);
    if (e && elems_ok)
      elems.insert(elems.end(), e->begin(), e->end());
    else
      elems_ok = false;
  }
  c.set_type(0, dt, std::move(out));
  if (elems_ok) c.set_elements(0, std::move(elems));
}

void split_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const size_t n = c.node.outputs.size();
  if (!x || n == 0) return;
  const int64_t axis = norm_axis(c.attr_int("axis", 0), static_cast<int64_t>(x->size()));
  if (axis < 0) return;
  std::optional<std::vector<int64_t>> split =
      c.opset >= 13 ? (c.has_input(1) ? c.in_ints(1) : std::nullopt) : c.attr_ints("split");
  const Dim total = (*x)[axis];
  if (!split && total.known()) {
    const int64_t parts = static_cast<int64_t>(n), rest = total.value % parts;
    if (total.value < 0 || (c.opset < 18 && rest != 0)) return;
    const int64_t chunk = total.value / parts + (rest != 0);  // ceil, without total + n - 1 overflowing
    split = std::vector<int64_t>();
    for (int64_t i = 0, left = total.value; i < parts; ++i, left -= std::min(chunk, left))
      split->push_back(std::min(chunk, left));
  }
  for (size_t i = 0; i < n; ++i) {
    std::vector<Dim> out = *x;
    out[axis] = split && split->size() == n && (*split)[i] >= 0 ? known_dim((*split)[i]) : Dim();
    c.set_type(i, c.in_dtype(0), std::move(out));
  }
}

// Number of elements a Slice takes from a dim of size `d`.
int64_t slice_count(int64_t d, int64_t start, int64_t end, int64_t step, int64_t* first) {
  // Clamp first so adding d cannot overflow (INT64_MIN/MAX mean "from the start/to the end").
  start = std::clamp<int64_t>(start, -d - 1, d + 1);
  end = std::clamp<int64_t>(end, -d - 1, d + 1);
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, d);
    end = std::clamp<int64_t>(end, 0, d);
    *first = start;
    return end <= start ? 0 : 1 + (end - start - 1) / step;
  }
  start = std::clamp<int64_t>(start, 0, d - 1);
  end = std::clamp<int64_t>(end, -1, d - 1);
  *first = start;
  // step < 0 and != INT64_MIN (checked by the caller), so -step is safe.
  return start <= end ? 0 : 1 + (start - end - 1) / (-step);
}

void slice_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const DataType dt = c.in_dtype(0);
  if (!x) {
    c.set_rank_unknown(0, dt);
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (c.opset >= 10) {
    starts = c.in_ints(1);
    ends = c.in_ints(2);
    axes = c.has_input(3) ? c.in_ints(3) : std::nullopt;
    steps = c.has_input(4) ? c.in_ints(4) : std::nullopt;
    if ((c.has_input(3) && !axes) || (c.has_input(4) && !steps)) starts.reset();
  } else {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  }
  if (!starts || !ends || starts->size() != ends->size()) {
    c.set_type(0, dt, std::vector<Dim>(x->size()));
    return;
  }
  const size_t n = starts->size();
  if (!axes) {
    axes = std::vector<int64_t>();
    for (size_t i = 0; i < n; ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (!steps) steps = std::vector<int64_t>(n, 1);
  if (axes->size() != n || steps->size() != n) return;
  std::vector<Dim> out = *x;
  int64_t elem_first = 0, elem_step = 1;
  for (size_t i = 0; i < n; ++i) {
    const int64_t axis = norm_axis((*axes)[i], rank);
    const int64_t step = (*steps)[i];
    if (axis < 0 || step == 0 || step == INT64_MIN) return;
    const Dim d = (*x)[axis];
    const int64_t s = (*starts)[i], e = (*ends)[i];
    if (d.known() && d.value >= 0 && d.value < INT64_MAX) {  // slice_count's clamps need d + 1
      int64_t first = 0;
      out[axis] = known_dim(slice_count(d.value, s, e, step, &first));
      elem_first = first;
      elem_step = step;
    } else if (d.known() || !(step == 1 && s == 0 && e >= INT32_MAX)) {
      out[axis] = Dim();  // a full slice keeps even a symbolic dim
    }
  }
  c.set_type(0, dt, out);
  const auto* e = c.in_elements(0);
  if (e && rank == 1 && out[0].known()) {
    std::vector<Dim> picked;
    for (int64_t k = 0; k < out[0].value; ++k) {
      const int64_t idx = elem_first + k * elem_step;
      if (idx < 0 || idx >= static_cast<int64_t>(e->size())) return;
      picked.push_back((*e)[idx]);
    }
    c.set_elements(0, std::move(picked));
  }
}

std::optional<std::vector<int64_t>> axes_of(InferCtx& c) {
  if (c.opset >= 13) return c.has_input(1) ? c.in_ints(1) : std::vector<int64_t>();
  auto a = c.attr_ints("axes");
  return a ? a : std::vector<int64_t>();
}

void squeeze_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const DataType dt = c.in_dtype(0);
  auto axes = axes_of(c);
  if (!x || !axes) {
    c.set_rank_unknown(0, dt);
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  std::vector<bool> drop(x->size(), false);
  if (axes->empty()) {
    for (size_t i = 0; i < x->size(); ++i) {
      if (!(*x)[i].known()) {
        c.set_rank_unknown(0, dt);
        return;
      }
      drop[i] = (*x)[i].value == 1;
    }
  }
  for (int64_t a : *axes) {
    const int64_t n = norm_axis(a, rank);
    if (n < 0) return;
    drop[n] = true;
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < x->size(); ++i) {
    if (!drop[i]) out.push_back((*x)[i]);
  }
  c.set_type(0, dt, std::move(out));
  pass_elements(c);
}

void unsqueeze_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const DataType dt = c.in_dtype(0);
  auto axes = axes_of(c);
  if (!x || !axes) {
    c.set_rank_unknown(0, dt);
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size() + axes->size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : *axes) {
    const int64_t n = norm_axis(a, rank);
    if (n < 0) return;
    inserted[n] = true;
  }
  std::vector<Dim> out;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (inserted[i])
      out.push_back(known_dim(1));
    else if (k < x->size())
      out.push_back((*x)[k++]);
  }
  c.set_type(0, dt, std::move(out));
  pass_elements(c);
}

void gather_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const auto* idx = c.in_dims(1);
  const DataType dt = c.in_dtype(0);
  if (!x || !idx) {
    c.set_rank_unknown(0, dt);
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  const int64_t axis = norm_axis(c.attr_int("axis", 0), rank);
  if (axis < 0) return;
  std::vector<Dim> out(x->begin(), x->begin() + axis);
  out.insert(out.end(), idx->begin(), idx->end());
  out.insert(out.end(), x->begin() + axis + 1, x->end());
  c.set_type(0, dt, std::move(out));
  const auto* e = c.in_elements(0);
  auto indices = c.in_ints(1);
  if (!e || rank != 1 || !indices || idx->size() > 1) return;
  std::vector<Dim> picked;
  const int64_t n = static_cast<int64_t>(e->size());
  for (int64_t i : *indices) {
    if (i < -n || i >= n) return;
    picked.push_back((*e)[i < 0 ? i + n : i]);
  }
  c.set_elements(0, std::move(picked));
}

void cast_rule(InferCtx& c) {
  const DataType to = static_cast<DataType>(c.attr_int("to", 0));
  if (const auto* x = c.in_dims(0)) {
    c.set_type(0, to, *x);
  } else {
    c.set_rank_unknown(0, to);
  }
  const DataType from = c.in_dtype(0);
  const bool ints =
      (from == DataType::kInt64 || from == DataType::kInt32) && (to == DataType::kInt64 || to == DataType::kInt32);
  if (ints) pass_elements(c);
}

void expand_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  const auto* target = c.in_elements(1);
  if (!x || !target) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  c.set_type(0, c.in_dtype(0), broadcast_dims(*x, *target));
}

void constant_of_shape_rule(InferCtx& c) {
  const Attribute* v = c.node.find_attr("value");
  const DataType dt = v && v->t.defined() ? v->t.dtype() : DataType::kFloat;
  const auto* target = c.in_elements(0);
  if (!target) {
    c.set_rank_unknown(0, dt);
    return;
  }
  c.set_type(0, dt, *target);
  if (v && v->t.defined() && (dt == DataType::kInt64 || dt == DataType::kInt32) && target->size() == 1 &&
      (*target)[0].known() && (*target)[0].value >= 0 && (*target)[0].value <= kMaxTrackedElements) {
    c.set_elements(0, std::vector<Dim>(static_cast<size_t>((*target)[0].value), known_dim(v->t.get_as_int64(0))));
  }
}

void range_rule(InferCtx& c) {
  const DataType dt = c.in_dtype(0);
  const Tensor* s = c.in_constant(0);
  const Tensor* l = c.in_constant(1);
  const Tensor* d = c.in_constant(2);
  if (s && d && !l && s->numel() == 1 && d->numel() == 1 && s->get_as_double(0) == 0 && d->get_as_double(0) == 1) {
    // Range(0, n, 1) over a propagated n (torch's positions: arange(seq)): n values.
    const auto* e = c.in_elements(1);
    c.set_type(0, dt, {e && e->size() == 1 ? (*e)[0] : Dim()});
    return;
  }
  if (!s && !l && d && d->numel() == 1 && d->get_as_double(0) == 1) {
    // Range(past, past + seq, 1) over propagated sizes (a decode step's positions): seq values.
    const auto* start = c.in_elements(0);
    const auto* limit = c.in_elements(1);
    c.set_type(0, dt,
               {start && limit && start->size() == 1 && limit->size() == 1 ? difference_dims((*limit)[0], (*start)[0])
                                                                           : Dim()});
    return;
  }
  if (!s || !l || !d || s->numel() != 1 || l->numel() != 1 || d->numel() != 1) {
    c.set_type(0, dt, {Dim()});
    return;
  }
  const double delta = d->get_as_double(0);
  if (delta == 0) return;
  const double n = std::ceil((l->get_as_double(0) - s->get_as_double(0)) / delta);
  if (!(n < 4e18)) {  // NaN or absurd: leave the length unknown
    c.set_type(0, dt, {Dim()});
    return;
  }
  c.set_type(0, dt, {known_dim(std::max<int64_t>(0, static_cast<int64_t>(n)))});
}

void flatten_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  if (!x) {
    c.set_type(0, c.in_dtype(0), {Dim(), Dim()});
    return;
  }
  const int64_t rank = static_cast<int64_t>(x->size());
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return;
  auto product = [&](int64_t from, int64_t to) {
    int64_t p = 1;
    for (int64_t i = from; i < to; ++i) {
      if (!(*x)[i].known()) return Dim();
      p = checked_mul(p, (*x)[i].value);  // -1 on overflow
    }
    return p >= 0 ? known_dim(p) : Dim();
  };
  c.set_type(0, c.in_dtype(0), {product(0, axis), product(axis, rank)});
}

void tile_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  auto reps = c.in_ints(1);
  if (!x) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  std::vector<Dim> out(x->size());
  if (reps && reps->size() == x->size()) {
    for (size_t i = 0; i < x->size(); ++i) {
      if ((*reps)[i] == 1)
        out[i] = (*x)[i];
      else if ((*x)[i].known())
        out[i] = dim_times((*x)[i].value, (*reps)[i]);
    }
  }
  c.set_type(0, c.in_dtype(0), std::move(out));
}

void pad_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  if (!x) {
    c.set_rank_unknown(0, c.in_dtype(0));
    return;
  }
  const size_t rank = x->size();
  auto pads = c.opset >= 11 ? c.in_ints(1) : c.attr_ints("pads");
  std::vector<int64_t> axes;
  if (c.opset >= 18 && c.has_input(3)) {
    auto a = c.in_ints(3);
    if (!a)
      pads.reset();
    else
      axes = *a;
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<Dim> out(rank);
  if (pads && pads->size() == 2 * axes.size()) {
    out = *x;
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t a = norm_axis(axes[i], static_cast<int64_t>(rank));
      if (a < 0) return;
      int64_t add = 0;
      if (__builtin_add_overflow((*pads)[i], (*pads)[i + axes.size()], &add))
        out[a] = Dim();
      else
        out[a] = add == 0 ? (*x)[a] : (*x)[a].known() ? dim_plus((*x)[a].value, add) : Dim();
    }
  }
  c.set_type(0, c.in_dtype(0), std::move(out));
}

void nonzero_rule(InferCtx& c) {
  const auto* x = c.in_dims(0);
  c.set_type(0, DataType::kInt64, {x ? known_dim(static_cast<int64_t>(x->size())) : Dim(), Dim()});
}

}  // namespace

void add_shape_op_rules(RuleTable& t) {
  t["Identity"] = identity_rule;
  t["Shape"] = shape_rule;
  t["Size"] = size_rule;
  t["Reshape"] = reshape_rule;
  t["Transpose"] = transpose_rule;
  t["Concat"] = concat_rule;
  t["Split"] = split_rule;
  t["Slice"] = slice_rule;
  t["Squeeze"] = squeeze_rule;
  t["Unsqueeze"] = unsqueeze_rule;
  t["Gather"] = gather_rule;
  t["Cast"] = cast_rule;
  t["Expand"] = expand_rule;
  t["ConstantOfShape"] = constant_of_shape_rule;
  t["Range"] = range_rule;
  t["Flatten"] = flatten_rule;
  t["Tile"] = tile_rule;
  t["Pad"] = pad_rule;
  t["NonZero"] = nonzero_rule;
}

}  // namespace passes
}  // namespace xonnx
