// Drives the public C and C++ APIs on a torch-exported fixture (tests/models/mlp: 4 Linear
// layers, dynamic batch).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/onnx/loader.h"
#include "xonnx/xonnx.h"
#include "xonnx/xonnx.hpp"

namespace {

const std::string kMlp = std::string(XONNX_TEST_MODELS_DIR) + "/mlp";

std::vector<float> load_floats(const std::string& path, std::vector<int64_t>* shape) {
  auto v = xonnx::load_value_file(path, xonnx::TypeInfo());
  EXPECT_TRUE(v.is_ok()) << v.status().to_string();
  const xonnx::Tensor& t = v->tensor();
  *shape = t.shape();
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

struct StatusGuard {
  xonnx_status* s;
  ~StatusGuard() { xonnx_status_release(s); }
};

TEST(CApi, QueriesNamesTypesAndSymbolicDims) {
  xonnx_session* session = nullptr;
  StatusGuard st{xonnx_session_create((kMlp + "/model.onnx").c_str(), nullptr, &session)};
  ASSERT_EQ(st.s, nullptr) << xonnx_status_get_message(st.s);
  ASSERT_EQ(xonnx_session_input_count(session), 1u);
  ASSERT_EQ(xonnx_session_output_count(session), 1u);
  EXPECT_NE(xonnx_session_input_name(session, 0), nullptr);
  EXPECT_EQ(xonnx_session_input_name(session, 5), nullptr);
  xonnx_element_type type;
  int64_t dims[4];
  int64_t rank = 0;
  StatusGuard info{xonnx_session_input_info(session, 0, &type, dims, 4, &rank)};
  ASSERT_EQ(info.s, nullptr);
  EXPECT_EQ(type, XONNX_TYPE_FLOAT32);
  ASSERT_EQ(rank, 2);
  EXPECT_EQ(dims[0], -1);  // dynamic batch
  EXPECT_EQ(dims[1], 16);
  EXPECT_STRNE(xonnx_session_input_dim_name(session, 0, 0), "");
  xonnx_session_release(session);
}

TEST(CApi, VersionsComeFromOneSource) {
  EXPECT_STREQ(xonnx_version(), XONNX_VERSION_STRING);
  EXPECT_EQ(xonnx_api_version(), static_cast<uint32_t>(XONNX_API_VERSION));
  const std::string expected = std::to_string(XONNX_VERSION_MAJOR) + "." + std::to_string(XONNX_VERSION_MINOR) + "." +
                               std::to_string(XONNX_VERSION_PATCH);
  EXPECT_EQ(expected, XONNX_VERSION_STRING);
  EXPECT_EQ(xonnx::api::version(), XONNX_VERSION_STRING);
}

TEST(CApi, RunMatchesTorchWithRuntimeOwnedAndCallerBuffers) {
  std::vector<int64_t> in_shape, out_shape;
  std::vector<float> x = load_floats(kMlp + "/test_data_set_0/input_0.pb", &in_shape);
  std::vector<float> want = load_floats(kMlp + "/test_data_set_0/output_0.pb", &out_shape);

  xonnx_session_options* opts = nullptr;
  ASSERT_EQ(xonnx_session_options_create(&opts), nullptr);
  ASSERT_EQ(xonnx_session_options_set_num_threads(opts, 1), nullptr);
  StatusGuard bad_threads{xonnx_session_options_set_num_threads(opts, 0)};
  EXPECT_EQ(xonnx_status_get_code(bad_threads.s), XONNX_INVALID_ARGUMENT);
  xonnx_session* session = nullptr;
  ASSERT_EQ(xonnx_session_create((kMlp + "/model.onnx").c_str(), opts, &session), nullptr);
  xonnx_session_options_release(opts);

  xonnx_tensor_view input{nullptr,         XONNX_TYPE_FLOAT32, in_shape.data(),
                          in_shape.size(), x.data(),           x.size() * sizeof(float)};
  xonnx_tensor* out = nullptr;
  StatusGuard run{xonnx_session_run(session, &input, 1, &out, 1)};
  ASSERT_EQ(run.s, nullptr) << xonnx_status_get_message(run.s);
  ASSERT_EQ(xonnx_tensor_rank(out), out_shape.size());
  const float* got = static_cast<const float*>(xonnx_tensor_data(out));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i]));
  xonnx_tensor_release(out);

  std::vector<float> buffer(want.size());
  int64_t shape[2];
  xonnx_output_buffer ob{nullptr, buffer.data(), buffer.size() * sizeof(float), shape, 2, XONNX_TYPE_UNDEFINED, 0, 0};
  StatusGuard into{xonnx_session_run_into(session, &input, 1, &ob, 1)};
  ASSERT_EQ(into.s, nullptr) << xonnx_status_get_message(into.s);
  EXPECT_EQ(ob.rank, 2u);
  EXPECT_EQ(shape[0], out_shape[0]);
  EXPECT_NEAR(buffer[0], want[0], 1e-4);

  ob.capacity_bytes = 4;  // too small: a clear error naming the bytes needed
  StatusGuard small{xonnx_session_run_into(session, &input, 1, &ob, 1)};
  ASSERT_NE(small.s, nullptr);
  EXPECT_NE(std::string(xonnx_status_get_message(small.s)).find("needs"), std::string::npos);
  xonnx_session_release(session);
}

// An output range: the session's output is those rows of the whole one (the MLP's batch rows
// [1, 3) here), set through the C API and the C++ SessionConfig; a range naming no output
// fails session creation with the name.
TEST(CApi, OutputRangeGivesThoseRowsOfTheWholeOutput) {
  std::vector<int64_t> in_shape, out_shape;
  const std::vector<float> file = load_floats(kMlp + "/test_data_set_0/input_0.pb", &in_shape);
  std::vector<float> x;  // the file's rows, then the same scaled by 2: at least 4 rows
  for (const float scale : {1.0f, 2.0f})
    for (const float v : file) x.push_back(v * scale);
  const std::vector<int64_t> shape{2 * in_shape[0], in_shape[1]};
  xonnx::api::Session whole, part;
  ASSERT_FALSE(whole.open(kMlp + "/model.onnx"));
  xonnx::api::SessionConfig config;
  config.output_ranges.push_back({whole.output_name(0), 0, 1, 3});
  ASSERT_FALSE(part.open(kMlp + "/model.onnx", config));
  std::vector<xonnx::api::Tensor> all, some;
  const auto input = xonnx::api::Input::of(whole.input_name(0), XONNX_TYPE_FLOAT32, shape, x);
  ASSERT_FALSE(whole.run({input}, &all));
  ASSERT_FALSE(part.run({input}, &some));
  const int64_t n = all[0].shape()[1];
  ASSERT_EQ(some[0].shape(), (std::vector<int64_t>{2, n}));
  for (int64_t i = 0; i < 2 * n; ++i) EXPECT_NEAR(some[0].data<float>()[i], all[0].data<float>()[n + i], 1e-5);

  xonnx_session_options* opts = nullptr;
  ASSERT_EQ(xonnx_session_options_create(&opts), nullptr);
  StatusGuard no_name{xonnx_session_options_add_output_range(opts, nullptr, 0, 0, 1)};
  EXPECT_EQ(xonnx_status_get_code(no_name.s), XONNX_INVALID_ARGUMENT);
  ASSERT_EQ(xonnx_session_options_add_output_range(opts, "scores", 1, -1, INT64_MAX), nullptr);
  xonnx_session* session = nullptr;
  StatusGuard missing{xonnx_session_create((kMlp + "/model.onnx").c_str(), opts, &session)};
  xonnx_session_options_release(opts);
  ASSERT_NE(missing.s, nullptr);
  EXPECT_EQ(xonnx_status_get_code(missing.s), XONNX_INVALID_ARGUMENT);
  EXPECT_NE(std::string(xonnx_status_get_message(missing.s)).find("no output 'scores'"), std::string::npos);
  EXPECT_EQ(session, nullptr);
}

TEST(CApi, RunWithBindingWritesIntoCallerBuffers) {
  std::vector<int64_t> in_shape, out_shape;
  std::vector<float> x = load_floats(kMlp + "/test_data_set_0/input_0.pb", &in_shape);
  std::vector<float> want = load_floats(kMlp + "/test_data_set_0/output_0.pb", &out_shape);
  xonnx_session* session = nullptr;
  ASSERT_EQ(xonnx_session_create((kMlp + "/model.onnx").c_str(), nullptr, &session), nullptr);
  xonnx_tensor_view input{nullptr,         XONNX_TYPE_FLOAT32, in_shape.data(),
                          in_shape.size(), x.data(),           x.size() * sizeof(float)};
  std::vector<float> buffer(want.size(), -1.0f);
  xonnx_tensor_view bound{
      xonnx_session_output_name(session, 0), XONNX_TYPE_FLOAT32, out_shape.data(), out_shape.size(), buffer.data(),
      buffer.size() * sizeof(float)};
  xonnx_tensor* out = reinterpret_cast<xonnx_tensor*>(&buffer);  // must come back NULL
  StatusGuard run{xonnx_session_run_with_binding(session, &input, 1, &bound, 1, &out, 1)};
  ASSERT_EQ(run.s, nullptr) << xonnx_status_get_message(run.s);
  EXPECT_EQ(out, nullptr);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(buffer[i], want[i], 1e-4 + 1e-4 * std::fabs(want[i]));

  // A buffer of another shape: the error names the output; the binding ends with the call.
  std::vector<int64_t> wrong = out_shape;
  wrong.back() += 1;
  std::vector<float> big(buffer.size() + static_cast<size_t>(out_shape[0]));
  xonnx_tensor_view misfit{bound.name,   XONNX_TYPE_FLOAT32, wrong.data(),
                           wrong.size(), big.data(),         big.size() * sizeof(float)};
  StatusGuard bad{xonnx_session_run_with_binding(session, &input, 1, &misfit, 1, &out, 1)};
  ASSERT_NE(bad.s, nullptr);
  EXPECT_NE(std::string(xonnx_status_get_message(bad.s)).find(std::string("output '") + bound.name + "'"),
            std::string::npos)
      << xonnx_status_get_message(bad.s);
  StatusGuard plain{xonnx_session_run(session, &input, 1, &out, 1)};
  ASSERT_EQ(plain.s, nullptr) << xonnx_status_get_message(plain.s);
  EXPECT_NE(xonnx_tensor_data(out), static_cast<const void*>(big.data()));
  xonnx_tensor_release(out);
  xonnx_session_release(session);
}

TEST(CApi, BadInputsGetClearErrors) {
  xonnx_session* session = nullptr;
  ASSERT_EQ(xonnx_session_create((kMlp + "/model.onnx").c_str(), nullptr, &session), nullptr);
  std::vector<float> x(2 * 16, 0.5f);
  int64_t shape[2] = {2, 16};
  xonnx_tensor* out = nullptr;

  xonnx_tensor_view wrong_bytes{nullptr, XONNX_TYPE_FLOAT32, shape, 2, x.data(), 12};
  StatusGuard a{xonnx_session_run(session, &wrong_bytes, 1, &out, 1)};
  EXPECT_EQ(xonnx_status_get_code(a.s), XONNX_INVALID_ARGUMENT);

  xonnx_tensor_view wrong_name{"nope", XONNX_TYPE_FLOAT32, shape, 2, x.data(), x.size() * 4};
  StatusGuard b{xonnx_session_run(session, &wrong_name, 1, &out, 1)};
  EXPECT_NE(std::string(xonnx_status_get_message(b.s)).find("nope"), std::string::npos);

  int64_t bad_shape[2] = {2, 15};
  xonnx_tensor_view wrong_dim{nullptr, XONNX_TYPE_FLOAT32, bad_shape, 2, x.data(), 2 * 15 * 4};
  StatusGuard c{xonnx_session_run(session, &wrong_dim, 1, &out, 1)};
  EXPECT_EQ(xonnx_status_get_code(c.s), XONNX_INVALID_ARGUMENT);

  xonnx_tensor_view wrong_type{nullptr, XONNX_TYPE_INT32, shape, 2, x.data(), x.size() * 4};
  StatusGuard d{xonnx_session_run(session, &wrong_type, 1, &out, 1)};
  EXPECT_NE(std::string(xonnx_status_get_message(d.s)).find("float32"), std::string::npos);
  xonnx_session_release(session);

  xonnx_session* missing = nullptr;
  StatusGuard e{xonnx_session_create("/nonexistent/model.onnx", nullptr, &missing)};
  EXPECT_EQ(xonnx_status_get_code(e.s), XONNX_NOT_FOUND);
  EXPECT_EQ(missing, nullptr);
}

TEST(CApi, CreateFromMemoryKeepsNoPointerToTheBytes) {
  std::ifstream in(kMlp + "/model.onnx", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  xonnx_session* session = nullptr;
  ASSERT_EQ(xonnx_session_create_from_memory(bytes.data(), bytes.size(), nullptr, &session), nullptr);
  std::fill(bytes.begin(), bytes.end(), '\0');  // the session must not depend on them any more
  std::vector<float> x(16, 1.0f);
  int64_t shape[2] = {1, 16};
  xonnx_tensor_view input{nullptr, XONNX_TYPE_FLOAT32, shape, 2, x.data(), x.size() * 4};
  xonnx_tensor* out = nullptr;
  StatusGuard run{xonnx_session_run(session, &input, 1, &out, 1)};
  ASSERT_EQ(run.s, nullptr) << xonnx_status_get_message(run.s);
  EXPECT_TRUE(std::isfinite(static_cast<const float*>(xonnx_tensor_data(out))[0]));
  xonnx_tensor_release(out);
  xonnx_session_release(session);

  StatusGuard garbage{xonnx_session_create_from_memory("\x0a\xff\xff", 3, nullptr, &session)};
  EXPECT_EQ(xonnx_status_get_code(garbage.s), XONNX_INVALID_MODEL);
}

TEST(CppApi, RunsTheMlp) {
  xonnx::api::Session session;
  ASSERT_FALSE(session.open(kMlp + "/model.onnx"));
  std::vector<int64_t> in_shape, out_shape;
  std::vector<float> x = load_floats(kMlp + "/test_data_set_0/input_0.pb", &in_shape);
  std::vector<float> want = load_floats(kMlp + "/test_data_set_0/output_0.pb", &out_shape);
  std::vector<xonnx::api::Tensor> outputs;
  xonnx::api::Error err =
      session.run({xonnx::api::Input::of(session.input_name(0), XONNX_TYPE_FLOAT32, in_shape, x)}, &outputs);
  ASSERT_FALSE(err) << err.message;
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].shape(), out_shape);
  EXPECT_NEAR(outputs[0].data<float>()[0], want[0], 1e-4);

  xonnx::api::Session bad;
  xonnx::api::Error open_err = bad.open("/nonexistent.onnx");
  EXPECT_TRUE(open_err);
  EXPECT_FALSE(bad.is_open());
}

}  // namespace
