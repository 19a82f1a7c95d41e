// Many threads running models at once: 8 threads x 200 runs on one shared session and on one
// session per thread, through the C++ runtime API and the C API. Every output must equal, bit
// for bit, the output of the same input run serially first (runs on one session are
// serialised by its mutex, runtime/exec/session.h; different sessions share no run state).
// Its own binary (xonnx_concurrency_tests, ctest concurrent-runs), quick to build with TSan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/exec/session.h"
#include "xonnx/xonnx.h"

namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 200;
constexpr int kInputVariants = 4;  // each thread cycles through distinct inputs

const std::string kModels = XONNX_TEST_MODELS_DIR;

// Input `variant` of a model with one float input: a pattern at the declared shape (symbolic
// dims = 1), different for each variant.
xonnx::Tensor make_input(const xonnx::ValueInfo& info, int variant) {
  xonnx::Shape shape;
  for (const auto& d : info.type.dims) shape.push_back(d.known() ? d.value : 1);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = std::sin(0.37f * static_cast<float>(i) + variant);
  return xonnx::Tensor::from_vector(values, shape);
}

std::vector<float> first_output(const std::vector<xonnx::Value>& outputs) {
  const xonnx::Tensor& t = outputs.at(0).tensor();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Runs kThreads threads of kRunsPerThread runs; run(thread, variant) returns the output.
// Returns how many outputs differed from `serial`.
template <typename Run>
int run_threads(const std::vector<std::vector<float>>& serial, Run run) {
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsPerThread; ++r) {
        const int variant = (t + r) % kInputVariants;
        if (!same_bits(run(t, variant), serial[static_cast<size_t>(variant)])) ++mismatches[static_cast<size_t>(t)];
      }
    });
  }
  for (std::thread& th : threads) th.join();
  int total = 0;
  for (int m : mismatches) total += m;
  return total;
}

class ConcurrentRuns : public ::testing::TestWithParam<const char*> {};

// digits_cnn: Conv (XNNPACK / own NHWC kernels) and the session's thread pool (2 threads);
// mlp: Gemm chains.
INSTANTIATE_TEST_SUITE_P(Models, ConcurrentRuns, ::testing::Values("digits_cnn", "mlp"));

TEST_P(ConcurrentRuns, CppSharedAndPerThreadSessionsEqualSerialRuns) {
  const std::string path = kModels + "/" + GetParam() + "/model.onnx";
  xonnx::SessionOptions options;
  options.num_threads = 2;
  auto shared = xonnx::Session::create(path, options);
  ASSERT_TRUE(shared.is_ok()) << shared.status().to_string();
  ASSERT_EQ((*shared)->inputs().size(), 1u);
  std::vector<xonnx::Tensor> inputs;
  std::vector<std::vector<float>> serial;
  for (int v = 0; v < kInputVariants; ++v) {
    inputs.push_back(make_input((*shared)->inputs()[0], v));
    auto out = (*shared)->run({xonnx::Value(inputs.back())});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    serial.push_back(first_output(*out));
  }
  ASSERT_FALSE(same_bits(serial[0], serial[1]));  // the variants do differ

  xonnx::Session& one = **shared;
  EXPECT_EQ(run_threads(serial,
                        [&](int, int variant) {
                          auto out = one.run({xonnx::Value(inputs[static_cast<size_t>(variant)])});
                          return out.is_ok() ? first_output(*out) : std::vector<float>{};
                        }),
            0);

  std::vector<std::unique_ptr<xonnx::Session>> own(kThreads);
  for (auto& s : own) {
    auto created = xonnx::Session::create(path, options);
    ASSERT_TRUE(created.is_ok()) << created.status().to_string();
    s = std::move(created).value();
  }
  EXPECT_EQ(run_threads(serial,
                        [&](int thread, int variant) {
                          // The same output vector each time: the allocation-free path, per thread.
                          thread_local std::vector<xonnx::Value> outputs;
                          xonnx::Status st = own[static_cast<size_t>(thread)]->run(
                              {xonnx::Value(inputs[static_cast<size_t>(variant)])}, outputs);
                          return st.is_ok() ? first_output(outputs) : std::vector<float>{};
                        }),
            0);
}

TEST_P(ConcurrentRuns, CApiSharedAndPerThreadSessionsEqualSerialRuns) {
  const std::string path = kModels + "/" + GetParam() + "/model.onnx";
  auto probe = xonnx::Session::create(path);
  ASSERT_TRUE(probe.is_ok()) << probe.status().to_string();
  std::vector<xonnx::Tensor> inputs;
  for (int v = 0; v < kInputVariants; ++v) inputs.push_back(make_input((*probe)->inputs()[0], v));

  xonnx_session_options* options = nullptr;
  ASSERT_EQ(xonnx_session_options_create(&options), nullptr);
  ASSERT_EQ(xonnx_session_options_set_num_threads(options, 2), nullptr);
  auto create = [&] {
    xonnx_session* s = nullptr;
    xonnx_status* st = xonnx_session_create(path.c_str(), options, &s);
    EXPECT_EQ(st, nullptr) << xonnx_status_get_message(st);
    xonnx_status_release(st);
    return s;
  };
  // run_into a caller buffer: the C API's copy-out path.
  auto run = [&](xonnx_session* s, int variant) {
    const xonnx::Tensor& x = inputs[static_cast<size_t>(variant)];
    xonnx_tensor_view view{nullptr, XONNX_TYPE_FLOAT32, x.shape().data(), x.rank(), x.raw_data(), x.nbytes()};
    std::vector<float> out(4096);
    int64_t shape[8];
    xonnx_output_buffer buffer{nullptr, out.data(), out.size() * sizeof(float), shape, 8, XONNX_TYPE_UNDEFINED, 0, 0};
    xonnx_status* st = xonnx_session_run_into(s, &view, 1, &buffer, 1);
    const bool ok = st == nullptr;
    xonnx_status_release(st);
    out.resize(ok ? buffer.data_bytes / sizeof(float) : 0);
    return out;
  };
  xonnx_session* shared = create();
  ASSERT_NE(shared, nullptr);
  std::vector<std::vector<float>> serial;
  for (int v = 0; v < kInputVariants; ++v) {
    serial.push_back(run(shared, v));
    ASSERT_FALSE(serial.back().empty());
  }
  EXPECT_EQ(run_threads(serial, [&](int, int variant) { return run(shared, variant); }), 0);

  std::vector<xonnx_session*> own(kThreads);
  for (auto& s : own) s = create();
  EXPECT_EQ(
      run_threads(serial, [&](int thread, int variant) { return run(own[static_cast<size_t>(thread)], variant); }), 0);
  for (xonnx_session* s : own) xonnx_session_release(s);
  xonnx_session_release(shared);
  xonnx_session_options_release(options);
}

// Per-call bindings on a shared session: each thread's buffer receives its own run's output
// only (binding, run and unbinding hold the session's mutex together).
TEST(ConcurrentRunsBinding, CApiRunWithBindingKeepsEachThreadsBuffer) {
  const std::string path = kModels + "/mlp/model.onnx";
  auto probe = xonnx::Session::create(path);
  ASSERT_TRUE(probe.is_ok()) << probe.status().to_string();
  std::vector<xonnx::Tensor> inputs;
  std::vector<std::vector<float>> serial;
  for (int v = 0; v < kInputVariants; ++v) {
    inputs.push_back(make_input((*probe)->inputs()[0], v));
    auto out = (*probe)->run({xonnx::Value(inputs.back())});
    ASSERT_TRUE(out.is_ok());
    serial.push_back(first_output(*out));
  }
  xonnx_session* shared = nullptr;
  ASSERT_EQ(xonnx_session_create(path.c_str(), nullptr, &shared), nullptr);
  const xonnx::Shape out_shape = (*probe)->run({xonnx::Value(inputs[0])})->at(0).tensor().shape();
  EXPECT_EQ(run_threads(serial,
                        [&](int, int variant) {
                          const xonnx::Tensor& x = inputs[static_cast<size_t>(variant)];
                          xonnx_tensor_view view{nullptr,  XONNX_TYPE_FLOAT32, x.shape().data(),
                                                 x.rank(), x.raw_data(),       x.nbytes()};
                          std::vector<float> out(serial[0].size(), -1.0f);
                          xonnx_tensor_view bound{xonnx_session_output_name(shared, 0),
                                                  XONNX_TYPE_FLOAT32,
                                                  out_shape.data(),
                                                  out_shape.size(),
                                                  out.data(),
                                                  out.size() * sizeof(float)};
                          xonnx_tensor* unused = nullptr;
                          xonnx_status* st = xonnx_session_run_with_binding(shared, &view, 1, &bound, 1, &unused, 1);
                          if (st) out.clear();
                          xonnx_status_release(st);
                          return out;
                        }),
            0);
  xonnx_session_release(shared);
}

}  // namespace
