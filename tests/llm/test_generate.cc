// Generation on the shipped tiny model (tests/models_llm/tiny): greedy tokens equal PyTorch's
// (ground_truth.json) in every folder form and KV-cache mode, perplexity on heldout.txt within
// 1 % (fp32) / 5 % (int4) of PyTorch's, chunked prefill and rewind agree with one-shot runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sdk/genai/generator.h"
#include "tests/llm/tiny_model.h"
#include "sdk/genai/model_runner.h"

namespace xonnx::genai {
namespace {

using test::kTiny;
const nlohmann::json& ground_truth() { return test::tiny_ground_truth(); }

// A temporary folder like `source` whose genai_config.json has search.past_present_share_buffer
// = `shared` (the model and tokenizer files copied: the loader refuses external data outside the
// folder); removed with the object.
struct TempFolder {
  std::string dir;
  ~TempFolder() { std::filesystem::remove_all(dir); }
};

TempFolder folder_with_share_buffer(const std::string& source, bool shared) {
  char tmpl[] = "/tmp/xonnx_genai_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  for (const char* f : {"model.onnx", "model.onnx.data", "tokenizer.json", "tokenizer_config.json"}) {
    const std::string from = source + "/" + f;
    if (std::filesystem::exists(from)) std::filesystem::copy_file(from, dir + "/" + f);
  }
  std::ifstream in(source + "/genai_config.json");
  nlohmann::json c = nlohmann::json::parse(in);
  c["search"]["past_present_share_buffer"] = shared;
  std::ofstream(dir + "/genai_config.json") << c.dump(2);
  return TempFolder{dir};
}

std::vector<int32_t> greedy(Generator& g, const std::vector<int32_t>& prompt, size_t count) {
  g.rewind(0);
  EXPECT_TRUE(g.append_tokens(prompt.data(), prompt.size()).is_ok());
  std::vector<int32_t> out;
  for (size_t i = 0; i < count; ++i) {
    auto t = g.next_token();
    EXPECT_TRUE(t.is_ok()) << t.status().message();
    if (!t.is_ok()) break;
    out.push_back(*t);
  }
  return out;
}

void expect_greedy_as_pytorch(const std::string& dir, const GeneratorOptions& options = {}) {
  auto g = Generator::create(dir, options);
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  for (const auto& c : ground_truth()["greedy"]) {
    const auto prompt = c["prompt_ids"].get<std::vector<int32_t>>();
    const auto expected = c["ids"].get<std::vector<int32_t>>();
    EXPECT_EQ(greedy(**g, prompt, expected.size()), expected) << dir << ": " << c["name"];
  }
}

TEST(Generate, GreedyAsPytorchFp32SharedBuffer) { expect_greedy_as_pytorch(kTiny + "/genai_fp32"); }

TEST(Generate, GreedyAsPytorchFp32SeparateBuffers) {
  const TempFolder folder = folder_with_share_buffer(kTiny + "/genai_fp32", false);
  expect_greedy_as_pytorch(folder.dir);
}

// The TorchScript export (decomposed attention, Concat of past and new keys).
TEST(Generate, GreedyAsPytorchTorchExport) { expect_greedy_as_pytorch(kTiny + "/torch"); }

TEST(Generate, ChunkedPrefillAndRewindAgree) {
  GeneratorOptions chunked;
  chunked.prefill_chunk = 3;
  expect_greedy_as_pytorch(kTiny + "/genai_fp32", chunked);
  auto g = Generator::create(kTiny + "/genai_int4");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  const auto prompt = ground_truth()["greedy"][4]["prompt_ids"].get<std::vector<int32_t>>();
  const std::vector<int32_t> first = greedy(**g, prompt, 24);
  // Rewind into the generated part, then into the prompt: the same continuation.
  (*g)->rewind(prompt.size() + 10);
  std::vector<int32_t> again(first.begin(), first.begin() + 10);
  for (int i = 0; i < 14; ++i) again.push_back((*g)->next_token().value());
  EXPECT_EQ(again, first);
  EXPECT_EQ(greedy(**g, prompt, 24), first);
}

TEST(Generate, SeededSamplingReproduces) {
  auto g = Generator::create(kTiny + "/genai_int4");
  ASSERT_TRUE(g.is_ok()) << g.status().message();
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_k = 40;
  p.top_p = 0.95f;
  p.seed = 99;
  auto run = [&] {
    EXPECT_TRUE((*g)->set_sampling(p).is_ok());
    return greedy(**g, {4093}, 30);
  };
  const auto a = run(), b = run();
  EXPECT_EQ(a, b);
  p.seed = 100;
  EXPECT_NE(run(), a);
}

TEST(Generate, Errors) {
  auto missing = Generator::create(kTiny + "/no_such_folder");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("genai_config.json"), std::string::npos);
  auto g = Generator::create(kTiny + "/genai_int4");
  ASSERT_TRUE(g.is_ok());
  EXPECT_FALSE((*g)->next_token().is_ok());  // nothing appended
  const int32_t bad[] = {1, 4096};
  EXPECT_NE((*g)->append_tokens(bad, 2).message().find("4096"), std::string::npos);
  std::vector<int32_t> many(600, 5);
  EXPECT_FALSE((*g)->append_tokens(many.data(), many.size()).is_ok());
  SamplingParams p;
  p.top_p = 0;
  EXPECT_NE((*g)->set_sampling(p).message().find("top_p"), std::string::npos);
  // A folder whose config names a KV input the graph lacks.
  const TempFolder folder = folder_with_share_buffer(kTiny + "/genai_int4", true);
  const std::string& dir = folder.dir;
  std::ifstream in(dir + "/genai_config.json");
  nlohmann::json c = nlohmann::json::parse(in);
  c["model"]["decoder"]["inputs"]["past_key_names"] = "past.%d.k";
  std::ofstream(dir + "/genai_config.json") << c.dump();
  auto wrong = Generator::create(dir);
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("past_key_values.0.key"), std::string::npos) << wrong.status().message();
}

// Perplexity as ground_truth.json's heldout.method: windows of 128 tokens from an empty cache.
double perplexity(const std::string& dir) {
  auto config = load_genai_config(dir);
  EXPECT_TRUE(config.is_ok());
  RunnerOptions ro;
  ro.row_length = 128;
  ro.every_position_logits = true;
  auto runner = ModelRunner::create(*config, ro);
  EXPECT_TRUE(runner.is_ok()) << runner.status().message();
  const auto& h = ground_truth()["heldout"];
  const auto ids = h["token_ids"].get<std::vector<int32_t>>();
  const size_t window = h["window"].get<size_t>();
  double nll = 0;
  int64_t predicted = 0;
  const int32_t V = (*runner)->vocab();
  for (size_t start = 0; start + 1 < ids.size(); start += window) {
    const int32_t n = static_cast<int32_t>(std::min(window, ids.size() - start));
    if (n < 2) break;
    EXPECT_TRUE((*runner)->prefill(0, ids.data() + start, n, 0).is_ok());
    for (int32_t s = 0; s + 1 < n; ++s) {
      const float* l = (*runner)->logits_row(0, s);
      float mx = l[0], sum = 0;
      for (int32_t v = 1; v < V; ++v) mx = std::max(mx, l[v]);
      for (int32_t v = 0; v < V; ++v) sum += std::exp(l[v] - mx);
      nll += std::log(static_cast<double>(sum)) + mx - l[ids[start + s + 1]];
      ++predicted;
    }
  }
  EXPECT_EQ(predicted, h["predicted_tokens"].get<int64_t>());
  return std::exp(nll / static_cast<double>(predicted));
}

// By default a prompt's run computes the logits of its last position only (the head over one
// row); they are that position's row of the every-position run, in every folder form.
TEST(Generate, LastPositionLogitsAreTheWholeRunsLastRow) {
  const std::vector<int32_t> ids = ground_truth()["heldout"]["token_ids"].get<std::vector<int32_t>>();
  const int32_t n = 40;
  ASSERT_GE(ids.size(), static_cast<size_t>(n));
  for (const char* form : {"/genai_fp32", "/genai_int4", "/torch"}) {
    auto config = load_genai_config(kTiny + form);
    ASSERT_TRUE(config.is_ok()) << config.status().message();
    RunnerOptions every;
    every.every_position_logits = true;
    auto whole = ModelRunner::create(*config, every);
    auto last = ModelRunner::create(*config, RunnerOptions{});
    ASSERT_TRUE(whole.is_ok() && last.is_ok()) << form;
    ASSERT_TRUE((*whole)->prefill(0, ids.data(), n, 0).is_ok()) << form;
    ASSERT_TRUE((*last)->prefill(0, ids.data(), n, 0).is_ok()) << form;
    EXPECT_EQ((*whole)->logits().shape(), (Shape{1, n, (*whole)->vocab()})) << form;
    EXPECT_EQ((*last)->logits().shape(), (Shape{1, 1, (*last)->vocab()})) << form;
    EXPECT_EQ((*whole)->last_logits(0), (*whole)->logits_row(0, n - 1));
    const float* want = (*whole)->last_logits(0);
    const float* got = (*last)->last_logits(0);
    double worst = 0;
    for (int32_t v = 0; v < (*last)->vocab(); ++v) worst = std::max(worst, std::fabs(double{got[v]} - want[v]));
    EXPECT_LT(worst, 1e-4) << form;
  }
}

TEST(Generate, PerplexityNearPytorch) {
  const double reference = ground_truth()["heldout"]["perplexity"].get<double>();
  const double fp32 = perplexity(kTiny + "/genai_fp32");
  const double int4 = perplexity(kTiny + "/genai_int4");
  std::printf("perplexity: PyTorch %.3f, fp32 %.3f (%+.3f%%), int4 %.3f (%+.3f%%)\n", reference, fp32,
              100 * (fp32 / reference - 1), int4, 100 * (int4 / reference - 1));
  EXPECT_NEAR(fp32 / reference, 1.0, 0.01);
  EXPECT_NEAR(int4 / reference, 1.0, 0.05);
}

}  // namespace
}  // namespace xonnx::genai
