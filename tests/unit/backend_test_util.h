// One differential harness for every backend of an op: a one-node model is built once and run
// on the reference kernels, on the own kernels with each ISA table this CPU supports (1 and 2
// threads), and on XNNPACK; every output must match the reference's within the case's
// tolerance (0, 0: equal values, NaN where it has NaN). The case also says, per fast backend,
// whether its kernel must run, must not run (declined or handed to the reference), or may.
// tests/unit/test_optimized_common.h (opttest) and test_xnnpack_common.h (xnntest) build their
// sessions with one_node_model() too.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/kernels.h"
#include "runtime/ops/optimized/opt_util.h"
#include "runtime/ops/xnnpack/xnnpack_util.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace backendtest {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
// The odd sizes every kernel is tested over (vector tails, register-tile edges).
constexpr int64_t kSizes[] = {1, 3, 13, 127, 128, 129};

inline Tensor rand_tensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (float& f : v) f = dist(gen);
  return Tensor::from_vector<float>(v, shape);
}

// NaN first, +inf in the middle, -inf last.
inline Tensor with_specials(Tensor t) {
  float* p = t.data<float>();
  const int64_t n = t.numel();
  if (n > 0) p[0] = kNaN;
  if (n > 2) p[n / 2] = kInf;
  if (n > 3) p[n - 1] = -kInf;
  return t;
}

struct In {
  Tensor t;               // undefined: omitted optional input
  bool constant = false;  // an initializer (fast kernels often need constant weights)
};
inline In var(Tensor t) { return {std::move(t), false}; }
inline In cst(Tensor t) { return {std::move(t), true}; }

struct Op {
  Op(const char* t, const char* d = "", int64_t o = 17, size_t outs = 1)
      : type(t), domain(d), opset(o), num_outputs(outs) {}
  std::string type;
  std::string domain;
  int64_t opset;  // of the default domain
  size_t num_outputs;
  int64_t domain_opset = 1;  // the import of `domain` when not the default (the layout pass's
                             // NHWC nodes carry the model's opset: Resize needs 10+)
  std::string node = "n0";   // the node's name, which errors quote
};

// The model of one node (op.node) reading in<i> (graph inputs, or initializers for constants) and
// writing out<i>.
inline Model one_node_model(const Op& op, const std::vector<In>& inputs, const std::vector<Attribute>& attrs) {
  Model model;
  model.ir_version = 8;
  model.opset_imports[""] = op.opset;
  if (!op.domain.empty()) model.opset_imports[op.domain] = op.domain_opset;
  Node node;
  node.op_type = op.type;
  node.domain = op.domain;
  node.name = op.node;
  node.attributes = attrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].t.defined()) {
      node.inputs.push_back("");
      continue;
    }
    const std::string name = "in" + std::to_string(i);
    node.inputs.push_back(name);
    if (inputs[i].constant) {
      model.graph.initializers.push_back({name, inputs[i].t});
    } else {
      ValueInfo vi;
      vi.name = name;
      model.graph.inputs.push_back(vi);
    }
  }
  for (size_t i = 0; i < op.num_outputs; ++i) {
    ValueInfo vi;
    vi.name = "out" + std::to_string(i);
    node.outputs.push_back(vi.name);
    model.graph.outputs.push_back(vi);
  }
  model.graph.nodes.push_back(std::move(node));
  return model;
}

constexpr const char* kMs = "com.microsoft";

// Scalar tensors of the quantized ops' scale and zero-point inputs.
inline Tensor f32(float v) { return Tensor::scalar<float>(v); }
inline Tensor u8(int v) { return Tensor::scalar<uint8_t>(static_cast<uint8_t>(v)); }
inline Tensor i8(int v) { return Tensor::scalar<int8_t>(static_cast<int8_t>(v)); }

// Every element as a double, whatever the tensor's type.
inline std::vector<double> elements(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.get_as_double(static_cast<int64_t>(i));
  return v;
}

// `s` is an error whose text contains every one of `parts`.
inline void expect_error(const Status& s, const std::vector<std::string>& parts) {
  ASSERT_FALSE(s.is_ok());
  const std::string text = s.to_string();
  for (const std::string& p : parts) EXPECT_NE(text.find(p), std::string::npos) << text << " lacks '" << p << "'";
}

// The values a session built by one_node_model() takes: the non-constant inputs in order.
inline std::vector<Value> runtime_values(const std::vector<In>& inputs) {
  std::vector<Value> given;
  for (const In& in : inputs) {
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  }
  return given;
}

struct Tolerance {
  double rtol = 0;  // 0, 0: equal values (NaN where the reference has NaN; -0 equals +0)
  double atol = 0;
};

// |got - want| <= atol + rtol |want| element-wise for float outputs; other types byte-equal.
inline void expect_close(const Tensor& got, const Tensor& want, Tolerance tol, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what << ": " << shape_to_string(got.shape()) << " vs "
                                       << shape_to_string(want.shape());
  if (got.dtype() != DataType::kFloat) {
    if (got.dtype() != DataType::kString && got.nbytes() > 0) {
      EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), got.nbytes()), 0) << what;
    }
    return;
  }
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  int bad = 0;
  for (int64_t i = 0; i < got.numel() && bad < 5; ++i) {
    const bool same = g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]));
    if (!same && !(std::fabs(double(g[i]) - double(w[i])) <= tol.atol + tol.rtol * std::fabs(double(w[i])))) {
      ADD_FAILURE() << what << ": element " << i << " got " << g[i] << " reference " << w[i];
      ++bad;
    }
  }
}

// Whether a fast backend's kernel must run the case (kMust), must not (kNot: it declines at
// creation or hands the run to the reference kernel), or may (kMay).
enum class Runs { kMay, kMust, kNot };

struct Check {
  Check(Runs own_runs = Runs::kMay, Runs xnnpack_runs = Runs::kMay, Tolerance tolerance = {})
      : own(own_runs), xnnpack(xnnpack_runs), tol(tolerance), xnnpack_tol(tolerance) {}
  Runs own;
  Runs xnnpack;
  Tolerance tol;          // of the own kernels
  Tolerance xnnpack_tol;  // of XNNPACK (as tol unless with_xnnpack_tol says otherwise)
};
inline Check own_must(Runs xnnpack = Runs::kMay, Tolerance tol = {}) { return {Runs::kMust, xnnpack, tol}; }
inline Check neither(Tolerance tol = {}) { return {Runs::kNot, Runs::kNot, tol}; }
inline Check with_xnnpack_tol(Check c, Tolerance tol) {
  c.xnnpack_tol = tol;
  return c;
}

// One backend configuration the harness runs.
struct Variant {
  std::string name;  // "reference", "own/avx2 threads 2", "xnnpack"
  SessionOptions options;
  const opt::KernelTable* table = nullptr;  // the own kernels' ISA table (nullptr: the CPU's)
};

inline std::vector<Variant> fast_variants() {
  std::vector<Variant> out;
  const opt::KernelTable* tables[8];
  const int n = opt::supported_tables(tables, 8);
  for (int i = 0; i < n; ++i) {
    for (int threads : {1, 2}) {
      Variant v;
      v.name = std::string("own/") + tables[i]->isa + " threads " + std::to_string(threads);
      v.options.disable_xnnpack = true;
      v.options.num_threads = threads;
      v.table = tables[i];
      out.push_back(v);
    }
  }
  Variant x;
  x.name = "xnnpack";
  x.options.disable_optimized = true;  // XNNPACK's kernel, not an own one tried before it
  x.options.num_threads = 1;
  out.push_back(x);
  return out;
}

inline Result<std::unique_ptr<Session>> make_session(const Model& model, const Variant& v) {
  opt::set_kernels_for_testing(v.table);
  auto s = Session::create_from_model(Model(model), v.options);
  opt::set_kernels_for_testing(nullptr);
  return s;
}

// Runs the node on every backend and compares each with the reference (see the top).
inline void diff_all(const Op& op, const std::vector<In>& inputs, const std::vector<Attribute>& attrs,
                     const Check& check, const std::string& what) {
  SCOPED_TRACE(op.type + " " + what);
  const Model model = one_node_model(op, inputs, attrs);
  const std::vector<Value> given = runtime_values(inputs);
  Variant ref_variant{"reference", {}, nullptr};
  ref_variant.options.disable_xnnpack = true;
  ref_variant.options.disable_optimized = true;
  ref_variant.options.num_threads = 1;
  auto ref = make_session(model, ref_variant);
  Result<std::vector<Value>> want = ref.is_ok() ? (*ref)->run(given) : Result<std::vector<Value>>(ref.status());
  for (const Variant& v : fast_variants()) {
    SCOPED_TRACE(v.name);
    const bool xnn = !v.options.disable_xnnpack;
    const Runs expect = xnn ? check.xnnpack : check.own;
    const Tolerance tol = xnn ? check.xnnpack_tol : check.tol;
    auto fast = make_session(model, v);
    if (!ref.is_ok()) {  // a bad node: every backend reports the reference's error
      ASSERT_FALSE(fast.is_ok());
      EXPECT_EQ(fast.status().to_string(), ref.status().to_string());
      continue;
    }
    ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
    opt::set_kernels_for_testing(v.table);
    const uint64_t before = xnn ? xnn::run_count() : opt::run_count();
    auto got = (*fast)->run(given);
    const uint64_t runs = (xnn ? xnn::run_count() : opt::run_count()) - before;
    // Twice: the second run takes the kernels' cached-setup paths.
    auto again = got.is_ok() ? (*fast)->run(given) : got;
    opt::set_kernels_for_testing(nullptr);
    if (expect != Runs::kMay) {
      EXPECT_EQ(runs > 0, expect == Runs::kMust) << "fast kernel runs: " << runs;
    }
    ASSERT_EQ(want.is_ok(), got.is_ok()) << (want.is_ok() ? got.status() : want.status()).to_string();
    if (!want.is_ok()) {
      EXPECT_EQ(got.status().to_string(), want.status().to_string());
      continue;
    }
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) {
      if (!(*want)[i].is_tensor()) continue;
      expect_close((*got)[i].tensor(), (*want)[i].tensor(), tol, "output " + std::to_string(i));
      expect_close((*again)[i].tensor(), (*got)[i].tensor(), {}, "output " + std::to_string(i) + ", second run");
    }
  }
}

}  // namespace backendtest
}  // namespace xonnx
