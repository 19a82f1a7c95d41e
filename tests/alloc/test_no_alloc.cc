// The executor's memory promise: after warm-up runs at fixed shapes, Session::run(inputs,
// outputs) makes no heap allocation on models whose every node has a fast kernel. This binary
// replaces malloc & co. (glibc's __libc_* entry points do the work) to count calls made
// while a run is in progress, so it is its own executable and is skipped under sanitizers,
// which replace malloc themselves. The same hooks can fail every allocation: the C API must
// then still report an error, never success.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/onnx/loader.h"
#include "sdk/genai/generator.h"
#include "tests/llm/genai_decoder.h"
#include "xonnx/xonnx.h"

#if defined(__SANITIZE_ADDRESS__)
#define XONNX_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XONNX_SANITIZED 1
#endif
#endif

namespace {
std::atomic<long> g_allocations{0};
std::atomic<bool> g_counting{false};
std::atomic<bool> g_failing{false};  // every allocation returns NULL while set
void count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
}
bool failing() { return g_failing.load(std::memory_order_relaxed); }
}  // namespace

#ifndef XONNX_SANITIZED
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

void* malloc(size_t n) {
  count();
  return failing() ? nullptr : __libc_malloc(n);
}
void* calloc(size_t n, size_t size) {
  count();
  return failing() ? nullptr : __libc_calloc(n, size);
}
void* realloc(void* p, size_t n) {
  count();
  return failing() ? nullptr : __libc_realloc(p, n);
}
void* memalign(size_t alignment, size_t n) {
  count();
  return failing() ? nullptr : __libc_memalign(alignment, n);
}
void* aligned_alloc(size_t alignment, size_t n) {
  count();
  return failing() ? nullptr : __libc_memalign(alignment, n);
}
int posix_memalign(void** out, size_t alignment, size_t n) {
  count();
  *out = failing() ? nullptr : __libc_memalign(alignment, n);
  return *out ? 0 : ENOMEM;
}
void free(void* p) { __libc_free(p); }
}
#endif

namespace xonnx {
namespace {

struct Case {
  const char* model;  // fixture folder under tests/models
  int threads;
  double run_timeout_seconds = 0;  // > 0: a deadline armed on every run (checked, never hit)
};

std::string fixture(const char* name) { return std::string(XONNX_TEST_MODELS_DIR) + "/" + name; }

// Runs the fixture with its own test inputs: warm-up runs, then one counted run.
long allocations_in_steady_state(const Case& c) {
  SessionOptions options;
  options.num_threads = c.threads;
  options.run_timeout_seconds = c.run_timeout_seconds;
  auto session = Session::create(fixture(c.model) + "/model.onnx", options);
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  if (!session.is_ok()) return -1;
  std::vector<Value> inputs;
  for (size_t i = 0; i < (*session)->inputs().size(); ++i) {
    const std::string path = fixture(c.model) + "/test_data_set_0/input_" + std::to_string(i) + ".pb";
    auto v = load_value_file(path, (*session)->inputs()[i].type);
    EXPECT_TRUE(v.is_ok()) << v.status().message();
    if (!v.is_ok()) return -1;
    inputs.push_back(std::move(v).value());
  }
  std::vector<Value> outputs;
  for (int warmup = 0; warmup < 4; ++warmup) {
    Status s = (*session)->run(inputs, outputs);
    EXPECT_TRUE(s.is_ok()) << s.message();
    if (!s.is_ok()) return -1;
  }
  g_allocations = 0;
  g_counting = true;
  Status s = (*session)->run(inputs, outputs);
  g_counting = false;
  EXPECT_TRUE(s.is_ok()) << s.message();
  return g_allocations.load();
}

class NoAllocation : public ::testing::TestWithParam<Case> {};

TEST_P(NoAllocation, SteadyStateRunDoesNotAllocate) {
#ifdef XONNX_SANITIZED
  GTEST_SKIP() << "sanitizers replace malloc";
#endif
  EXPECT_EQ(allocations_in_steady_state(GetParam()), 0)
      << GetParam().model << " at " << GetParam().threads << " threads";
}

// Token generation with the KV cache in place (GroupQueryAttention over max-length buffers
// passed as past and bound as present): after a prompt and two warm-up tokens, a decode step
// allocates nothing, at 1 and 2 threads.
TEST(NoAllocation, DecodeStepWithKvCacheInPlace) {
#ifdef XONNX_SANITIZED
  GTEST_SKIP() << "sanitizers replace malloc";
#endif
  llmtest::DecoderShape shape;
  shape.layers = 3;
  shape.context = 300;
  for (int threads : {1, 2}) {
    SessionOptions options;
    options.num_threads = threads;
    auto session = Session::create_from_model(llmtest::DecoderBuilder(shape).build(), options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    llmtest::SharedBufferLoop loop(**session, shape, 300);
    ASSERT_TRUE(loop.init().is_ok());
    ASSERT_TRUE(loop.step({1, 2, 3, 4, 5, 6, 7}).is_ok());
    const std::vector<int64_t> token = {9};
    for (int warmup = 0; warmup < 2; ++warmup) ASSERT_TRUE(loop.step(token).is_ok());
    g_allocations = 0;
    g_counting = true;
    for (int i = 0; i < 3; ++i) {
      Status s = loop.step(token);
      EXPECT_TRUE(s.is_ok()) << s.to_string();
    }
    g_counting = false;
    EXPECT_EQ(g_allocations.load(), 0) << threads << " threads";
  }
}

// Generation from the shipped GenAI int4 folder (past_present_share_buffer: GroupQueryAttention
// over max-length buffers, attention_mask of the buffer's width): after the prompt and two
// tokens, generating a token (decode run + sampling) allocates nothing, greedy and sampled.
TEST(NoAllocation, GenerateTokens) {
#ifdef XONNX_SANITIZED
  GTEST_SKIP() << "sanitizers replace malloc";
#endif
  for (int threads : {1, 2}) {
    for (float temperature : {0.0f, 0.8f}) {
      genai::GeneratorOptions options;
      options.threads = threads;
      auto g = genai::Generator::create(std::string(XONNX_TEST_LLM_DIR) + "/tiny/genai_int4", options);
      ASSERT_TRUE(g.is_ok()) << g.status().to_string();
      genai::SamplingParams p;
      p.temperature = temperature;
      p.top_k = 40;
      p.top_p = 0.9f;
      p.repetition_penalty = 1.1f;
      p.seed = 1;
      ASSERT_TRUE((*g)->set_sampling(p).is_ok());
      ASSERT_TRUE((*g)->append_text("<|endoftext|>The computer").is_ok());
      for (int warmup = 0; warmup < 3; ++warmup) ASSERT_TRUE((*g)->next_token().is_ok());
      g_allocations = 0;
      g_counting = true;
      for (int i = 0; i < 5; ++i) {
        auto t = (*g)->next_token();
        EXPECT_TRUE(t.is_ok()) << t.status().to_string();
      }
      g_counting = false;
      EXPECT_EQ(g_allocations.load(), 0) << threads << " threads, temperature " << temperature;
    }
  }
}

// The counter itself works: a plain run() (which returns a fresh vector) allocates.
TEST(NoAllocationCounter, CountsAllocations) {
#ifdef XONNX_SANITIZED
  GTEST_SKIP() << "sanitizers replace malloc";
#endif
  g_allocations = 0;
  g_counting = true;
  std::vector<int>* v = new std::vector<int>(1000);
  g_counting = false;
  delete v;
  EXPECT_GE(g_allocations.load(), 2);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NoAllocation,
                         ::testing::Values(Case{"mlp", 1}, Case{"mobilenet_v2", 1}, Case{"mobilenet_v2", 2},
                                           Case{"resnet18", 1}, Case{"squeezenet1_1", 1}, Case{"efficientnet_b0", 1},
                                           Case{"mobilenet_v3_small", 1}, Case{"digits_cnn", 1},
                                           Case{"transformer_encoder", 1}, Case{"transformer_encoder", 2},
                                           Case{"gpt_decoder", 1}, Case{"../models_quantized/mobilenet_v2_int8", 1},
                                           Case{"../models_quantized/mobilenet_v2_int8", 2},
                                           Case{"../models_quantized/resnet18_int8", 1},
                                           Case{"../models_quantized/gpt_decoder_int4", 1},
                                           Case{"mobilenet_v2", 1, 3600.0}, Case{"gpt_decoder", 1, 3600.0}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           const std::string model = info.param.model;  // a test name: no path
                           return model.substr(model.rfind('/') + 1) + "_t" + std::to_string(info.param.threads) +
                                  (info.param.run_timeout_seconds > 0 ? "_deadline" : "");
                         });

// With no memory left the C API cannot allocate its error object; the error must still not
// read as success (NULL): it is the static out-of-memory status, which release ignores.
TEST(CApiOutOfMemory, AnErrorNeverReadsAsSuccess) {
#ifdef XONNX_SANITIZED
  GTEST_SKIP() << "sanitizers replace malloc";
#endif
  xonnx_session_options* options = nullptr;
  ASSERT_EQ(xonnx_session_options_create(&options), nullptr);
  xonnx_session* session = nullptr;
  g_failing = true;
  xonnx_status* bad_threads = xonnx_session_options_set_num_threads(options, 0);
  xonnx_status* missing_model = xonnx_session_create("/nonexistent/model.onnx", options, &session);
  g_failing = false;
  for (xonnx_status* status : {bad_threads, missing_model}) {
    ASSERT_NE(status, nullptr);
    EXPECT_EQ(xonnx_status_get_code(status), XONNX_RESOURCE_EXHAUSTED);
    EXPECT_NE(std::string(xonnx_status_get_message(status)).find("out of memory"), std::string::npos);
    xonnx_status_release(status);  // the static status: a no-op, must not crash
  }
  EXPECT_EQ(session, nullptr);
  // With memory back, the same calls give their real errors.
  xonnx_status* status = xonnx_session_options_set_num_threads(options, 0);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(xonnx_status_get_code(status), XONNX_INVALID_ARGUMENT);
  xonnx_status_release(status);
  xonnx_session_options_release(options);
}

}  // namespace
}  // namespace xonnx
