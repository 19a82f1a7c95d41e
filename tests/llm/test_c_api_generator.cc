// The generation C API and its C++ wrapper on the shipped tiny model: greedy ids as PyTorch's,
// streamed text equal to the decoded ids, seeded sampling, rewind, and errors.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xonnx/xonnx.h"
#include "tests/llm/tiny_model.h"
#include "xonnx/xonnx.hpp"

namespace {

using xonnx::test::kTiny;

TEST(GeneratorCApi, GreedyAsPytorchAndStreamedText) {
  const nlohmann::json& truth = xonnx::test::tiny_ground_truth();
  const auto& c = truth["greedy"][3];
  const auto prompt = c["prompt_ids"].get<std::vector<int32_t>>();
  const auto expected = c["ids"].get<std::vector<int32_t>>();

  xonnx_generator* g = nullptr;
  ASSERT_EQ(xonnx_generator_create((kTiny + "/genai_fp32").c_str(), 1, 0, &g), nullptr);
  ASSERT_EQ(xonnx_generator_set_sampling(g, 0.0f, 0, 1.0f, 1.0f, -1), nullptr);
  ASSERT_EQ(xonnx_generator_append_tokens(g, prompt.data(), prompt.size()), nullptr);
  std::vector<int32_t> got;
  std::string streamed;
  for (size_t i = 0; i < expected.size(); ++i) {
    int32_t token = -1;
    xonnx_status* s = xonnx_generator_next_token(g, &token);
    ASSERT_EQ(s, nullptr) << xonnx_status_get_message(s);
    got.push_back(token);
    streamed += xonnx_generator_stream_text(g, token);
  }
  EXPECT_EQ(got, expected);
  ASSERT_EQ(xonnx_generator_token_count(g), prompt.size() + expected.size());
  EXPECT_EQ(
      std::vector<int32_t>(xonnx_generator_tokens(g) + prompt.size(), xonnx_generator_tokens(g) + prompt.size() + 64),
      expected);
  // Decode with a buffer too small, then large enough.
  char small[8];
  size_t length = 0;
  ASSERT_EQ(xonnx_generator_decode(g, got.data(), got.size(), 1, small, sizeof small, &length), nullptr);
  EXPECT_EQ(std::strlen(small), 7u);
  std::string full(length + 1, '\0');
  ASSERT_EQ(xonnx_generator_decode(g, got.data(), got.size(), 1, &full[0], full.size(), &length), nullptr);
  full.resize(length);
  EXPECT_EQ(streamed, full);
  EXPECT_EQ(full.compare(0, 7, small), 0);
  xonnx_generator_release(g);
}

TEST(GeneratorCApi, CppWrapperSamplingRewindAndErrors) {
  xonnx::api::Generator g;
  xonnx::api::Error e = g.open(kTiny + "/genai_int4", 1, 128);
  ASSERT_FALSE(e) << e.message;
  ASSERT_FALSE(g.set_sampling(0.8f, 40, 0.95f, 1.1f, 5));
  ASSERT_FALSE(g.append_text("<|endoftext|>The"));
  const size_t prompt = g.tokens().size();
  EXPECT_EQ(prompt, 2u);
  auto run = [&] {
    std::vector<int32_t> out;
    for (int i = 0; i < 20 && !g.is_done(); ++i) {
      int32_t t = -1;
      EXPECT_FALSE(g.next_token(&t));
      out.push_back(t);
    }
    return out;
  };
  const auto a = run();
  g.rewind(prompt);
  ASSERT_FALSE(g.set_sampling(0.8f, 40, 0.95f, 1.1f, 5));  // the same seed again
  EXPECT_EQ(run(), a);
  EXPECT_FALSE(g.decode(a).empty());

  xonnx::api::Error bad = g.set_sampling(0.8f, 40, 1.5f);
  EXPECT_EQ(bad.code, XONNX_INVALID_ARGUMENT);
  EXPECT_NE(bad.message.find("top_p"), std::string::npos);
  EXPECT_TRUE(g.append_tokens({5000}));
  xonnx::api::Generator missing;
  e = missing.open(kTiny + "/nowhere");
  EXPECT_TRUE(e);
  EXPECT_NE(e.message.find("genai_config.json"), std::string::npos);
  EXPECT_FALSE(missing.is_open());
  xonnx_generator* raw = nullptr;
  xonnx_status* s = xonnx_generator_create(nullptr, 1, 0, &raw);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(xonnx_status_get_code(s), XONNX_INVALID_ARGUMENT);
  xonnx_status_release(s);
  EXPECT_EQ(xonnx_generator_is_done(nullptr), 1);
}

}  // namespace
