// Engine (continuous batching over KV slots) on the shipped tiny model: concurrent requests
// give the tokens of single runs, prefix reuse, stop strings and tokens, cancel, queue limits,
// submit errors, and stats.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "sdk/genai/engine.h"
#include "sdk/genai/generator.h"
#include "tests/llm/tiny_model.h"

namespace xonnx::genai {
namespace {

using test::kTiny;
const nlohmann::json& ground_truth() { return test::tiny_ground_truth(); }

struct Outcome {
  std::vector<int32_t> tokens;
  std::string text;
  TokenEvent last;
};

// Reads every event of the requests in `ids` from `queue` until each has finished.
std::map<uint64_t, Outcome> collect(EventQueue& queue, size_t requests) {
  std::map<uint64_t, Outcome> out;
  size_t finished = 0;
  while (finished < requests) {
    TokenEvent e;
    if (!queue.pop(e, std::chrono::seconds(60))) {
      ADD_FAILURE() << "no event for 60 s";
      break;
    }
    Outcome& o = out[e.request_id];
    if (e.token >= 0) o.tokens.push_back(e.token);
    o.text += e.text;
    if (e.finish != FinishReason::kNone) {
      o.last = e;
      ++finished;
    }
  }
  return out;
}

GenerationRequest request(std::vector<int32_t> prompt, int32_t max_tokens, const std::shared_ptr<EventQueue>& q) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_tokens = max_tokens;
  r.ignore_eos = true;
  r.on_event = q->callback();
  return r;
}

// Five prompts on three slots (so requests queue, join and leave the decode batch at different
// steps): each gets PyTorch's greedy tokens.
void expect_batched_greedy(const std::string& folder, bool check_ground_truth) {
  EngineOptions options;
  options.parallel = 3;
  options.prefill_chunk = 5;
  auto engine = Engine::create(kTiny + "/" + folder, options);
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  auto queue = EventQueue::create();
  std::map<uint64_t, std::vector<int32_t>> expected;
  std::map<uint64_t, std::vector<int32_t>> prompts;
  int32_t length = 64;
  for (const auto& c : ground_truth()["greedy"]) {
    auto prompt = c["prompt_ids"].get<std::vector<int32_t>>();
    auto ids = c["ids"].get<std::vector<int32_t>>();
    ids.resize(static_cast<size_t>(length));
    auto id = (*engine)->submit(request(prompt, length, queue));
    ASSERT_TRUE(id.is_ok()) << id.status().message();
    expected[*id] = ids;
    prompts[*id] = prompt;
    length -= 7;  // different lengths: slots free up at different steps
  }
  auto got = collect(*queue, expected.size());
  if (!check_ground_truth) {  // compare with single runs of the Generator instead
    auto g = Generator::create(kTiny + "/" + folder);
    ASSERT_TRUE(g.is_ok());
    for (auto& [id, ids] : expected) {
      (*g)->rewind(0);
      ASSERT_TRUE((*g)->append_tokens(prompts[id].data(), prompts[id].size()).is_ok());
      for (int32_t& t : ids) t = (*g)->next_token().value();
    }
  }
  for (const auto& [id, ids] : expected) {
    EXPECT_EQ(got[id].tokens, ids) << folder << " request " << id;
    EXPECT_EQ(got[id].last.finish, FinishReason::kLength);
    EXPECT_EQ(got[id].last.usage.completion_tokens, static_cast<int32_t>(ids.size()));
  }
  const EngineStats s = (*engine)->stats();
  EXPECT_EQ(s.requests_finished, 5u);
  EXPECT_EQ(s.generated_tokens, 64u + 57 + 50 + 43 + 36);
  // Unbatched steps would give 1.0 and all five submitted at once ~2.5; the engine thread may
  // start on the first request before the test thread has submitted the others (1.92 seen
  // with a parallel ctest beside it).
  EXPECT_GT(static_cast<double>(s.generated_tokens) / static_cast<double>(s.decode_steps), 1.5)
      << "decode steps should batch the slots";
  EXPECT_EQ(s.slots, 3);
  EXPECT_EQ(s.queued + s.prefilling + s.decoding, 0);
}

TEST(Engine, BatchedGreedyAsPytorchFp32) { expect_batched_greedy("genai_fp32", true); }
TEST(Engine, BatchedGreedyAsSingleRunsInt4) { expect_batched_greedy("genai_int4", false); }

TEST(Engine, PrefixReuseGivesTheSameTokens) {
  auto engine = Engine::create(kTiny + "/genai_int4");
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  auto queue = EventQueue::create();
  const auto chat = ground_truth()["greedy"][4]["prompt_ids"].get<std::vector<int32_t>>();
  ASSERT_TRUE((*engine)->submit(request(chat, 12, queue)).is_ok());
  const Outcome first = collect(*queue, 1).begin()->second;
  // The next turn: the first conversation, its answer, and more.
  std::vector<int32_t> turn2 = chat;
  turn2.insert(turn2.end(), first.tokens.begin(), first.tokens.end());
  turn2.insert(turn2.end(), {4095, 10, 4094, 383});
  ASSERT_TRUE((*engine)->submit(request(turn2, 10, queue)).is_ok());
  const Outcome second = collect(*queue, 1).begin()->second;
  EXPECT_GE(second.last.usage.cached_prompt_tokens, static_cast<int32_t>(chat.size() + first.tokens.size() - 1));
  EXPECT_EQ((*engine)->stats().cached_prompt_tokens, static_cast<uint64_t>(second.last.usage.cached_prompt_tokens));

  auto g = Generator::create(kTiny + "/genai_int4");
  ASSERT_TRUE(g.is_ok());
  ASSERT_TRUE((*g)->append_tokens(turn2.data(), turn2.size()).is_ok());
  std::vector<int32_t> single;
  for (int i = 0; i < 10; ++i) single.push_back((*g)->next_token().value());
  EXPECT_EQ(second.tokens, single);
}

TEST(Engine, StopsAndText) {
  auto engine = Engine::create(kTiny + "/genai_fp32");
  ASSERT_TRUE(engine.is_ok());
  auto queue = EventQueue::create();
  const auto& c = ground_truth()["greedy"][0];
  const std::string text = c["text"].get<std::string>();
  // The stop string: the word that starts at the first space past the 20th character.
  const size_t space = text.find(' ', 20);
  ASSERT_NE(space, std::string::npos) << text;
  size_t end = space + 1;
  while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
  const std::string stop = text.substr(space, end - space);
  auto r = request(c["prompt_ids"].get<std::vector<int32_t>>(), 64, queue);
  r.skip_special_tokens = false;
  r.stop = {stop};
  ASSERT_TRUE((*engine)->submit(std::move(r)).is_ok());
  Outcome o = collect(*queue, 1).begin()->second;
  EXPECT_EQ(o.last.finish, FinishReason::kStop);
  EXPECT_EQ(o.last.stop_sequence, stop);
  EXPECT_EQ(o.text, text.substr(0, text.find(stop)));
  // The model's end tokens stop unless ignored; stop_token_ids stop too.
  GenerationRequest e = request(c["prompt_ids"].get<std::vector<int32_t>>(), 64, queue);
  e.ignore_eos = false;
  const auto ids = c["ids"].get<std::vector<int32_t>>();
  ASSERT_TRUE((*engine)->submit(std::move(e)).is_ok());
  o = collect(*queue, 1).begin()->second;
  const auto eos = std::find_if(ids.begin(), ids.end(), [](int32_t t) { return t == 4093 || t == 4095; });
  ASSERT_NE(eos, ids.end());
  EXPECT_EQ(o.tokens, std::vector<int32_t>(ids.begin(), eos + 1));
  EXPECT_EQ(o.last.finish, FinishReason::kStop);
  GenerationRequest t = request(c["prompt_ids"].get<std::vector<int32_t>>(), 64, queue);
  t.stop_token_ids = {ids[3]};
  ASSERT_TRUE((*engine)->submit(std::move(t)).is_ok());
  o = collect(*queue, 1).begin()->second;
  EXPECT_EQ(o.tokens.back(), ids[3]);
  EXPECT_LE(o.tokens.size(), 4u);
}

TEST(Engine, CancelQueueAndErrors) {
  EngineOptions options;
  options.parallel = 1;
  options.max_queue = 1;
  options.slot_length = 300;
  auto engine = Engine::create(kTiny + "/genai_int4", options);
  ASSERT_TRUE(engine.is_ok());
  EXPECT_EQ((*engine)->slot_length(), 300);
  auto queue = EventQueue::create();
  auto running = (*engine)->submit(request({4093}, 0, queue));  // until the slot is full
  ASSERT_TRUE(running.is_ok());
  // Wait until it runs, then fill the queue.
  TokenEvent first;
  ASSERT_TRUE(queue->pop(first, std::chrono::seconds(30)));
  auto queued = (*engine)->submit(request({4093, 315}, 5, queue));
  ASSERT_TRUE(queued.is_ok());
  auto refused = (*engine)->submit(request({4093}, 5, queue));
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  (*engine)->cancel(*queued);
  (*engine)->cancel(*running);
  (*engine)->cancel(12345);  // unknown: ignored
  auto done = collect(*queue, 2);
  EXPECT_EQ(done[*running].last.finish, FinishReason::kCancelled);
  EXPECT_EQ(done[*queued].last.finish, FinishReason::kCancelled);
  EXPECT_TRUE(done[*queued].tokens.empty());
  EXPECT_EQ((*engine)->stats().requests_cancelled, 2u);

  auto err = [&](GenerationRequest r) {
    auto id = (*engine)->submit(std::move(r));
    return id.is_ok() ? std::string("(ok)") : id.status().message();
  };
  EXPECT_NE(err(request({}, 5, queue)).find("prompt"), std::string::npos);
  EXPECT_NE(err(request({1, 9999}, 5, queue)).find("prompt[1]"), std::string::npos);
  EXPECT_NE(err(request(std::vector<int32_t>(300, 5), 5, queue)).find("prompt"), std::string::npos);
  GenerationRequest bad = request({1}, 5, queue);
  bad.sampling.top_p = 2;
  EXPECT_NE(err(bad).find("top_p"), std::string::npos);
  GenerationRequest no_callback = request({1}, 5, queue);
  no_callback.on_event = nullptr;
  EXPECT_NE(err(no_callback).find("on_event"), std::string::npos);

  // A full slot ends with kLength.
  auto full = (*engine)->submit(request(std::vector<int32_t>(290, 5), 0, queue));
  ASSERT_TRUE(full.is_ok()) << full.status().message();
  Outcome o = collect(*queue, 1).begin()->second;
  EXPECT_EQ(o.last.finish, FinishReason::kLength);
  EXPECT_EQ(o.tokens.size(), 10u);  // 290 + 10 = the slot's 300 positions (the last token never runs)
}

TEST(Engine, DestructorCancelsAndCallbacksMaySubmit) {
  auto queue = EventQueue::create();
  auto followups = std::make_shared<std::atomic<int>>(0);
  {
    EngineOptions options;
    options.parallel = 2;
    auto engine = Engine::create(kTiny + "/genai_int4", options);
    ASSERT_TRUE(engine.is_ok());
    Engine* e = engine->get();
    // A callback that submits a follow-up from the engine's thread once its request ends.
    GenerationRequest r = request({4093, 315}, 3, queue);
    auto inner = queue->callback();
    r.on_event = [e, inner, queue, followups](const TokenEvent& ev) {
      inner(ev);
      // Fails only if the engine is already shutting down.
      if (ev.finish == FinishReason::kLength && e->submit(request({4093}, 0, queue)).is_ok()) ++*followups;
    };
    ASSERT_TRUE(e->submit(std::move(r)).is_ok());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE((*engine)->submit(request({4093}, 0, queue)).is_ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }  // destroyed while requests run and wait
  auto all = collect(*queue, 4 + static_cast<size_t>(followups->load()));
  size_t cancelled = 0;
  for (const auto& [id, o] : all) cancelled += o.last.finish == FinishReason::kCancelled;
  EXPECT_GE(cancelled, 3u);
}

TEST(Engine, SeparateBuffersModelRunsOneSlot) {
  EngineOptions options;
  options.parallel = 4;
  auto engine = Engine::create(kTiny + "/torch", options);
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  EXPECT_EQ((*engine)->stats().slots, 1);
  auto queue = EventQueue::create();
  const auto& c = ground_truth()["greedy"][2];
  for (int i = 0; i < 2; ++i)
    ASSERT_TRUE((*engine)->submit(request(c["prompt_ids"].get<std::vector<int32_t>>(), 20, queue)).is_ok());
  auto ids = c["ids"].get<std::vector<int32_t>>();
  ids.resize(20);
  for (const auto& [id, o] : collect(*queue, 2)) EXPECT_EQ(o.tokens, ids) << id;
}

}  // namespace
}  // namespace xonnx::genai

namespace xonnx::genai {
namespace {

// kv_budget_bytes shrinks the slots to fit, or refuses when fewer than 16 tokens would.
TEST(Engine, KvBudget) {
  EngineOptions options;
  options.parallel = 2;
  const int64_t per_token = 2 * 4 * 2 * 32 * 4;  // key + value, 4 layers, 2 kv heads, head size 32, float
  options.kv_budget_bytes = per_token * 2 * 100;
  auto engine = Engine::create(kTiny + "/genai_int4", options);
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  EXPECT_EQ((*engine)->slot_length(), 100);
  EXPECT_EQ((*engine)->stats().kv_bytes, per_token * 2 * 100);
  options.kv_budget_bytes = per_token * 2 * 15;
  auto refused = Engine::create(kTiny + "/genai_int4", options);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_NE(refused.status().message().find("kv_budget_bytes"), std::string::npos);
  options.kv_budget_bytes = 0;
  options.parallel = 0;
  auto no_slots = Engine::create(kTiny + "/genai_int4", options);
  ASSERT_FALSE(no_slots.is_ok());
  EXPECT_NE(no_slots.status().message().find("parallel"), std::string::npos);
}

// Resident memory of this process (VmRSS), in bytes.
int64_t rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return -1;
}

void wait_for_trims(Engine& engine, uint64_t trims) {
  for (int i = 0; i < 1000 && engine.stats().idle_trims < trims; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(engine.stats().idle_trims, trims);
}

// An idle engine holds its weights and the positions its slots keep for prefix reuse, not its
// KV capacity nor the buffers of its last run: the cache is the OS's zero pages until written,
// and idle_trim_ms after the last request the engine hands back what it does not keep.
TEST(Engine, IdleMemoryIsWhatTheSlotsKeep) {
  EngineOptions options;
  options.parallel = 64;  // 64 slots x 512 positions: a 64 MiB cache
  options.idle_trim_ms = -1;
  {
    // Not resident before use, even without a trim.
    const int64_t before = rss_bytes();
    auto untrimmed = Engine::create(kTiny + "/genai_int4", options);
    ASSERT_TRUE(untrimmed.is_ok()) << untrimmed.status().message();
    const int64_t kv = (*untrimmed)->stats().kv_bytes;
    EXPECT_LT(rss_bytes() - before, kv / 4) << "loaded without a trim, KV cache of " << kv << " bytes";
  }
  options.idle_trim_ms = 0;
  const int64_t before = rss_bytes();
  ASSERT_GT(before, 0);
  auto engine = Engine::create(kTiny + "/genai_int4", options);
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  const int64_t kv = (*engine)->stats().kv_bytes;
  ASSERT_GE(kv, 64 << 20);
  wait_for_trims(**engine, 1);
  EXPECT_LT(rss_bytes() - before, kv / 4) << "loaded, KV cache of " << kv << " bytes";

  auto queue = EventQueue::create();
  const std::vector<int32_t> prompt = ground_truth()["greedy"][0]["prompt_ids"].get<std::vector<int32_t>>();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE((*engine)->submit(request(prompt, 24, queue)).is_ok());
  auto first = collect(*queue, 4);
  wait_for_trims(**engine, 2);
  EXPECT_LT(rss_bytes() - before, kv / 4) << "idle after requests, KV cache of " << kv << " bytes";

  // What the slots keep survived the trim: the same prompt reuses it and gets the same tokens.
  auto submitted = (*engine)->submit(request(prompt, 24, queue));
  ASSERT_TRUE(submitted.is_ok());
  const uint64_t id = *submitted;
  auto again = collect(*queue, 1);
  EXPECT_EQ(again[id].last.usage.cached_prompt_tokens, static_cast<int32_t>(prompt.size()) - 1);
  EXPECT_EQ(again[id].tokens, first.begin()->second.tokens);
}

}  // namespace
}  // namespace xonnx::genai
