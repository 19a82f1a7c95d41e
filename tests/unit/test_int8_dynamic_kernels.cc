// The fast kernels of int8 dynamic models (`xonnx convert --quantize int8` without calibration):
// DynamicQuantizeLinear (optimized/quantize.cc) and MatMulInteger (optimized/qgemm_op.cc, on the
// VNNI int8 GEMM) against their reference twins on one-node models. Both compute exactly what
// the reference does (the same float range arithmetic; int32 sums), so results must be equal.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/qgemm.h"
#include "tests/unit/backend_test_util.h"

namespace xonnx {
namespace {

using backendtest::cst;
using backendtest::In;
using backendtest::var;

// Runs the one-node model on the reference kernels or with the fast ones allowed; `backend` gets
// the backend that ran the node.
std::vector<Tensor> run(const char* op, const std::vector<In>& inputs, size_t outputs, bool reference, int threads,
                        Backend* backend) {
  backendtest::Op spec(op, "", 17, outputs);
  SessionOptions options;
  options.disable_xnnpack = true;  // the own kernels are the subject here
  options.disable_optimized = reference;
  options.num_threads = threads;
  auto s = Session::create_from_model(backendtest::one_node_model(spec, inputs, {}), options);
  EXPECT_TRUE(s.is_ok()) << s.status().to_string();
  if (!s.is_ok()) return {};
  Profiler profiler;
  (*s)->set_profiler(&profiler);
  std::vector<Value> given;
  for (const In& in : inputs)
    if (in.t.defined() && !in.constant) given.push_back(in.t);
  auto out = (*s)->run(given);
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return {};
  for (const Profiler::Entry& e : profiler.entries()) *backend = e.backend;
  std::vector<Tensor> tensors;
  for (const Value& v : *out) tensors.push_back(v.tensor());
  return tensors;
}

void expect_equal(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.get_as_double(i), b.get_as_double(i)) << what << " element " << i;
}

TEST(DynamicQuantizeLinearFast, EqualsTheReference) {
  std::mt19937 gen(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  struct Case {
    const char* name;
    int64_t n;
    float shift;  // added to every value: all positive / all negative ranges
    bool zeros;
  };
  for (const Case& c : {Case{"normal", 1000, 0.0f, false}, Case{"positive", 777, 50.0f, false},
                        Case{"negative", 777, -50.0f, false}, Case{"zeros", 64, 0.0f, true},
                        Case{"large, several chunks", 100000, 0.3f, false}, Case{"empty", 0, 0.0f, false}}) {
    std::vector<float> x(static_cast<size_t>(c.n));
    for (float& v : x) v = c.zeros ? 0.0f : normal(gen) + c.shift;
    const std::vector<In> inputs = {var(Tensor::from_vector<float>(x, {c.n}))};
    for (int threads : {1, 2}) {
      Backend fast_backend = Backend::kReference, ref_backend = Backend::kOptimized;
      const std::vector<Tensor> fast = run("DynamicQuantizeLinear", inputs, 3, false, threads, &fast_backend);
      const std::vector<Tensor> ref = run("DynamicQuantizeLinear", inputs, 3, true, threads, &ref_backend);
      const std::string what = std::string(c.name) + ", " + std::to_string(threads) + " thread(s)";
      ASSERT_EQ(fast.size(), 3u) << what;
      ASSERT_EQ(ref.size(), 3u) << what;
      EXPECT_EQ(fast_backend, Backend::kOptimized) << what;
      EXPECT_EQ(ref_backend, Backend::kReference) << what;
      for (size_t o = 0; o < 3; ++o) expect_equal(fast[o], ref[o], what + ", output " + std::to_string(o));
    }
  }
}

// A of rank 2 and 3, uint8 with a zero point given per run (as DynamicQuantizeLinear makes it)
// or int8 with a constant one or none; B's zero point omitted, a zero scalar or zeros per column.
TEST(MatMulIntegerFast, EqualsTheReference) {
  std::mt19937 gen(5);
  std::uniform_int_distribution<int> byte(0, 255), code(-127, 127);
  const int64_t k = 37, n = 45;
  std::vector<int8_t> w(static_cast<size_t>(k * n));
  for (int8_t& v : w) v = static_cast<int8_t>(code(gen));
  const Tensor b = Tensor::from_vector<int8_t>(w, {k, n});
  enum class Zp { kNone, kScalar, kPerColumn };
  for (const Shape& a_shape : {Shape{5, k}, Shape{2, 13, k}})
    for (const DataType a_type : {DataType::kUint8, DataType::kInt8})
      for (const Zp b_zp : {Zp::kNone, Zp::kScalar, Zp::kPerColumn}) {
        int64_t rows = 1;
        for (size_t d = 0; d + 1 < a_shape.size(); ++d) rows *= a_shape[d];
        std::vector<int> a(static_cast<size_t>(rows * k));
        for (int& v : a) v = byte(gen) - (a_type == DataType::kInt8 ? 128 : 0);
        auto q8 = [&](const std::vector<int>& v, Shape s) {
          if (a_type == DataType::kInt8) return Tensor::from_vector<int8_t>(std::vector<int8_t>(v.begin(), v.end()), s);
          return Tensor::from_vector<uint8_t>(std::vector<uint8_t>(v.begin(), v.end()), s);
        };
        std::vector<In> inputs = {var(q8(a, a_shape)), cst(b)};
        if (a_type == DataType::kUint8) {
          inputs.push_back(var(q8({117}, {})));  // computed per run
        } else {
          inputs.push_back(cst(q8({-9}, {})));
        }
        if (b_zp == Zp::kScalar) inputs.push_back(cst(Tensor::scalar<int8_t>(0)));
        if (b_zp == Zp::kPerColumn) inputs.push_back(cst(Tensor::from_vector<int8_t>(std::vector<int8_t>(n, 0), {n})));
        const std::string what = shape_to_string(a_shape) + " " + dtype_name(a_type) + " b_zero_point " +
                                 std::to_string(static_cast<int>(b_zp));
        Backend fast_backend = Backend::kReference, ref_backend = Backend::kOptimized;
        const std::vector<Tensor> fast = run("MatMulInteger", inputs, 1, false, 2, &fast_backend);
        const std::vector<Tensor> ref = run("MatMulInteger", inputs, 1, true, 1, &ref_backend);
        ASSERT_EQ(fast.size(), 1u) << what;
        ASSERT_EQ(ref.size(), 1u) << what;
        EXPECT_EQ(fast_backend, opt::qgemm_fast() ? Backend::kOptimized : Backend::kReference) << what;
        expect_equal(fast[0], ref[0], what);
      }
}

}  // namespace
}  // namespace xonnx
