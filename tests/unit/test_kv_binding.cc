// Output binding (Session::bind_output) and the KV cache in place: a GenAI-form decoder run
// with max-length K/V buffers passed as past and bound as present (past_present_share_buffer)
// gives the logits of the same decoder run with present = past + new buffers, on the fast
// and on the reference kernels; and bound buffers that do not fit fail naming the output.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/exec/session.h"
#include "runtime/ops/optimized/opt_util.h"
#include "tests/llm/genai_decoder.h"

namespace xonnx {
namespace {

using llmtest::DecoderBuilder;
using llmtest::DecoderShape;

std::unique_ptr<Session> decoder_session(const DecoderShape& s, bool optimized, int threads = 1) {
  SessionOptions o;
  o.num_threads = threads;
  o.disable_optimized = !optimized;
  o.disable_xnnpack = !optimized;
  auto session = Session::create_from_model(DecoderBuilder(s).build(), o);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

// The same tokens through past + new = present (fresh buffers every step, as without
// past_present_share_buffer); returns the logits of every step.
std::vector<Tensor> logits_with_growing_cache(Session& session, const DecoderShape& s,
                                              const std::vector<std::vector<int64_t>>& steps) {
  std::vector<Tensor> out;
  std::vector<Value> cache(static_cast<size_t>(2 * s.layers));
  for (Value& v : cache) v = Value(Tensor::allocate(DataType::kFloat, {1, s.kv_heads, 0, s.head_size()}).value());
  int64_t length = 0;
  for (const auto& tokens : steps) {
    const int64_t S = static_cast<int64_t>(tokens.size());
    length += S;
    std::vector<Value> inputs;
    inputs.push_back(Value(Tensor::from_vector<int64_t>(tokens, {1, S})));
    inputs.push_back(Value(Tensor::from_vector<int32_t>({static_cast<int32_t>(length - 1)}, {1})));
    inputs.push_back(Value(Tensor::from_vector<int32_t>({static_cast<int32_t>(length)}, {1})));
    for (const Value& v : cache) inputs.push_back(v);
    auto r = session.run(inputs);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (!r.is_ok()) return out;
    out.push_back((*r)[0].tensor());
    for (size_t i = 0; i < cache.size(); ++i) cache[i] = (*r)[i + 1];
  }
  return out;
}

void expect_near(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  for (int64_t i = 0; i < a.numel(); ++i) {
    ASSERT_NEAR(a.data<float>()[i], b.data<float>()[i], 2e-4 + 2e-4 * std::fabs(b.data<float>()[i]))
        << what << " " << i;
  }
}

TEST(KvBinding, SharedBufferDecodeMatchesGrowingCache) {
  DecoderShape s;
  const std::vector<std::vector<int64_t>> steps = {{5, 17, 3, 250, 9}, {42}, {7}, {8, 1, 2}, {100}};
  for (bool optimized : {true, false}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(std::string(optimized ? "fast" : "reference") + " threads " + std::to_string(threads));
      auto growing = decoder_session(s, optimized, threads);
      auto shared = decoder_session(s, optimized, threads);
      ASSERT_TRUE(growing && shared);
      const std::vector<Tensor> want = logits_with_growing_cache(*growing, s, steps);
      ASSERT_EQ(want.size(), steps.size());
      llmtest::SharedBufferLoop loop(*shared, s, 24);
      ASSERT_TRUE(loop.init().is_ok());
      for (size_t i = 0; i < steps.size(); ++i) {
        Status st = loop.step(steps[i]);
        ASSERT_TRUE(st.is_ok()) << st.to_string();
        expect_near(loop.logits(), want[i], "step " + std::to_string(i));
      }
    }
  }
}

TEST(KvBinding, BufferThatDoesNotFitNamesTheOutput) {
  DecoderShape s;
  auto session = decoder_session(s, true);
  ASSERT_TRUE(session);
  EXPECT_FALSE(session->bind_output("no_such_output", Tensor::allocate(DataType::kFloat, {1}).value()).is_ok());
  // A logits buffer of the wrong vocabulary size: the MatMulNBits writing it fails.
  ASSERT_TRUE(session->bind_output("logits", Tensor::allocate(DataType::kFloat, {1, 1, s.vocab + 1}).value()).is_ok());
  llmtest::SharedBufferLoop loop(*session, s, 8);
  ASSERT_TRUE(loop.init().is_ok());
  Status st = loop.step({1});
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.to_string().find("output 'logits' is bound to a float32 [1, 1, 257] buffer"), std::string::npos)
      << st.to_string();
  // A bound logits buffer of the right shape receives the logits; the value shares it.
  Tensor logits = Tensor::allocate(DataType::kFloat, {1, 1, s.vocab}).value();
  ASSERT_TRUE(session->bind_output("logits", logits).is_ok());
  st = loop.step({1});
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(loop.logits().raw_data(), logits.raw_data());
  // A cache too short for the context: the kernel says which buffer and why.
  auto short_cache = decoder_session(s, true);
  llmtest::SharedBufferLoop tiny(*short_cache, s, 2);
  ASSERT_TRUE(tiny.init().is_ok());
  EXPECT_FALSE(tiny.step({1, 2, 3}).is_ok());
}

TEST(KvBinding, AliasedBufferOfAnyKernelIsWrittenAfterIt) {
  // Y = X + X with Y bound to X's own buffer: Add does not handle aliasing, so it writes a
  // temporary that is copied into the buffer afterwards.
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  ValueInfo x, y;
  x.name = "X";
  y.name = "Y";
  m.graph.inputs.push_back(x);
  m.graph.outputs.push_back(y);
  Node add;
  add.op_type = "Add";
  add.inputs = {"X", "X"};
  add.outputs = {"Y"};
  m.graph.nodes.push_back(add);
  for (bool optimized : {true, false}) {
    SessionOptions o;
    o.disable_optimized = o.disable_xnnpack = !optimized;
    auto session = Session::create_from_model(m, o);
    ASSERT_TRUE(session.is_ok());
    Tensor buf = Tensor::from_vector<float>({1, 2, 3, 4, 5}, {5});
    ASSERT_TRUE((*session)->bind_output("Y", buf).is_ok());
    auto r = (*session)->run({Value(buf)});
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].tensor().raw_data(), buf.raw_data());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(buf.data<float>()[i], 2.0f * (i + 1));
    (*session)->clear_output_bindings();
    auto again = (*session)->run({Value(buf)});
    ASSERT_TRUE(again.is_ok());
    EXPECT_NE((*again)[0].tensor().raw_data(), buf.raw_data());
  }
}

}  // namespace
}  // namespace xonnx
