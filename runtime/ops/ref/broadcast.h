// Fast numpy broadcasting over a fixed number of inputs, for element-wise kernels (binary,
// variadic). Shapes are first collapsed into the fewest dimensions: size-1 output dims are
// dropped and adjacent dims merged wherever every input either walks both or is broadcast in
// both, so same-shape inputs become one flat run and a scalar or a bias along the last dims
// becomes long contiguous runs. The element loop then runs over contiguous inner runs with
// each input either walking (stride 1) or held constant (stride 0).
//
// ref::for_each_broadcast (common.h) is the simple per-element walker for any number of
// inputs; use this header where the loop is hot.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/core/tensor.h"

namespace xonnx {
namespace ref {

// Collapsed output dims and per-input element strides (0 = broadcast). The last dim is the
// contiguous inner run; its per-input stride is 0 or 1.
template <size_t N>
struct BroadcastPlan {
  Shape dims;  // small vectors: planning a broadcast in run() does not allocate
  std::array<Shape, N> strides;
  int64_t total = 0;
};

// Plan for inputs of shapes *ins broadcast to `out` (already validated by broadcast_shapes).
template <size_t N>
BroadcastPlan<N> make_broadcast_plan(const Shape& out, const std::array<const Shape*, N>& ins) {
  BroadcastPlan<N> p;
  p.total = shape_numel(out);
  const size_t rank = out.size();
  std::array<Shape, N> flags;  // per collapsed dim: does input k walk it?
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::array<char, N> f{};
    for (size_t k = 0; k < N; ++k) {
      const Shape& s = *ins[k];
      const size_t lead = rank - s.size();
      const int64_t in_dim = d < lead ? 1 : s[d - lead];
      f[k] = in_dim != 1;
    }
    bool merge = !p.dims.empty();
    for (size_t k = 0; k < N && merge; ++k) merge = flags[k].back() == f[k];
    if (merge) {
      p.dims.back() *= out[d];
    } else {
      p.dims.push_back(out[d]);
      for (size_t k = 0; k < N; ++k) flags[k].push_back(f[k]);
    }
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    for (size_t k = 0; k < N; ++k) flags[k].push_back(1);
  }
  const size_t r = p.dims.size();
  for (size_t k = 0; k < N; ++k) {
    p.strides[k].assign(r, 0);
    int64_t acc = 1;
    for (size_t d = r; d-- > 0;) {
      if (flags[k][d]) {
        p.strides[k][d] = acc;
        acc *= p.dims[d];
      }
    }
  }
  return p;
}

// Calls fn(out_offset, in_offsets, run_length, run_strides) for each contiguous inner run;
// in_offsets and run_strides are std::array<int64_t, N> (run strides are 0 or 1).
template <size_t N, typename Fn>
void for_each_run(const BroadcastPlan<N>& p, Fn&& fn) {
  if (p.total <= 0) return;
  const size_t r = p.dims.size();
  const int64_t inner = p.dims[r - 1];
  std::array<int64_t, N> st{};
  for (size_t k = 0; k < N; ++k) st[k] = p.strides[k][r - 1];
  std::array<int64_t, N> off{};
  if (r == 1) {
    fn(int64_t{0}, off, inner, st);
    return;
  }
  const int64_t outer = p.total / inner;
  std::vector<int64_t> idx(r - 1, 0);
  for (int64_t o = 0; o < outer; ++o) {
    fn(o * inner, off, inner, st);
    for (size_t d = r - 1; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k) off[k] += p.strides[k][d];
      if (idx[d] < p.dims[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= p.strides[k][d] * p.dims[d];
      idx[d] = 0;
    }
  }
}

// o[i] = f(a[i], b[i]) over the plan, with specialised loops for walking/constant operands.
template <typename TA, typename TB, typename TO, typename F>
void apply_binary(const TA* a, const TB* b, TO* o, const BroadcastPlan<2>& p, F f) {
  for_each_run(p, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
    const TA* pa = a + off[0];
    const TB* pb = b + off[1];
    TO* po = o + oo;
    if (st[0] && st[1]) {
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], pb[i]);
    } else if (st[0]) {
      const TB vb = *pb;
      for (int64_t i = 0; i < n; ++i) po[i] = f(pa[i], vb);
    } else if (st[1]) {
      const TA va = *pa;
      for (int64_t i = 0; i < n; ++i) po[i] = f(va, pb[i]);
    } else {
      const TO v = f(*pa, *pb);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    }
  });
}

}  // namespace ref
}  // namespace xonnx
