// Helpers for the clean-up / fusion pass tests (DCE, CSE, dedup, fusions): run a pass on a deep
// copy and compare outputs within a tolerance (fusions may reassociate floats).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "converter/passes/passes.h"
#include "tests/unit/fold_test_util.h"

namespace xonnx {
namespace testing {

// Runs `pass` on a deep copy of `model`; *changed and ctx notes/bytes when asked for.
template <typename PassFn>
Model run_pass(const Model& model, PassFn pass, bool* changed = nullptr, std::vector<std::string>* notes = nullptr,
               int64_t* bytes_saved = nullptr) {
  Model copy = clone_model(model);
  convert::ConvertOptions options;
  convert::PassContext ctx(options);
  auto r = pass(copy, ctx);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (changed) *changed = r.is_ok() && r.value();
  if (notes) *notes = ctx.notes;
  if (bytes_saved) *bytes_saved = ctx.bytes_saved;
  return copy;
}

// Max |a - b| over all outputs (inf on a shape/type/count mismatch).
inline double max_abs_diff(const std::vector<Value>& x, const std::vector<Value>& y) {
  if (x.size() != y.size() || x.empty()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!x[i].is_tensor() || !y[i].is_tensor() || x[i].tensor().shape() != y[i].tensor().shape() ||
        x[i].tensor().dtype() != y[i].tensor().dtype()) {
      return INFINITY;
    }
    const std::vector<double> a = doubles(x[i]), b = doubles(y[i]);
    for (size_t k = 0; k < a.size(); ++k) worst = std::max(worst, std::fabs(a[k] - b[k]));
  }
  return worst;
}

inline void expect_close_outputs(const Model& a, const Model& b, const std::vector<Value>& inputs, double tol = 1e-5) {
  EXPECT_LE(max_abs_diff(run_model(a, inputs), run_model(b, inputs)), tol);
}

// Deterministic pseudo-random floats in [lo, hi).
inline std::vector<float> noise(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (float& f : v) {
    s = s * 1664525u + 1013904223u;
    f = lo + (hi - lo) * static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

inline Tensor f32(std::vector<float> v, Shape s) { return Tensor::from_vector<float>(v, std::move(s)); }
inline Value random_value(Shape s, uint32_t seed) {
  return Value(f32(noise(static_cast<size_t>(shape_numel(s)), seed), s));
}

inline std::vector<std::string> op_list(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.domain.empty() ? n.op_type : n.domain + ":" + n.op_type);
  return ops;
}

}  // namespace testing
}  // namespace xonnx
