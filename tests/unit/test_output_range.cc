// SessionOptions::output_ranges (ir/output_range.h): an output computed as a range of its rows,
// the same values as that range of the whole output, with the range moved up to the product
// that makes it (a language model's head for the last position only); clear errors for ranges
// that name no computed output or an axis the output lacks.
#include <algorithm>

#include "runtime/ir/output_range.h"
#include "runtime/onnx/loader.h"
#include "runtime/passes/pass_util.h"
#include "tests/unit/fuse_test_util.h"

namespace xonnx {
namespace testing {
namespace {

constexpr int64_t kWidth = 8, kVocab = 6;

// x [1, seq, 8] -> MatMul -> Relu -> MatMul (the head) -> logits [1, seq, 6]; with `probs`,
// also Softmax(logits) as a second output.
Model lm_tail(int64_t opset, bool probs) {
  Model m = make_model(opset);
  m.graph.inputs = {tensor_info("x", DataType::kFloat, {dim(1), sym("seq"), dim(kWidth)})};
  add_init(m.graph, "w1", f32(noise(kWidth * kWidth, 1, -0.5f, 0.5f), {kWidth, kWidth}));
  add_init(m.graph, "head", f32(noise(kWidth * kVocab, 2, -0.5f, 0.5f), {kWidth, kVocab}));
  m.graph.nodes.push_back(make_node("MatMul", {"x", "w1"}, {"h"}));
  m.graph.nodes.push_back(make_node("Relu", {"h"}, {"r"}));
  m.graph.nodes.push_back(make_node("MatMul", {"r", "head"}, {"logits"}));
  m.graph.outputs = {tensor_info("logits", DataType::kFloat, {dim(1), sym("seq"), dim(kVocab)})};
  if (probs) {
    m.graph.nodes.push_back(make_node("Softmax", {"logits"}, {"probs"}, {int_attribute("axis", -1)}));
    m.graph.outputs.push_back(untyped("probs"));
  }
  return m;
}

const OutputRange kLastPosition{"logits", 1, -1, INT64_MAX};

std::unique_ptr<Session> session_of(const Model& m, std::vector<OutputRange> ranges) {
  SessionOptions options;
  options.output_ranges = std::move(ranges);
  auto session = Session::create_from_model(m, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

// Row `row` of axis 1 of a [1, rows, n] float tensor.
std::vector<float> row_of(const Tensor& t, int64_t row) {
  const int64_t n = t.dim(2);
  const float* p = t.data<float>() + row * n;
  return std::vector<float>(p, p + n);
}

// Whether narrow-selected-rows changed the session's graph.
bool narrowed(const Session& s) {
  const auto& report = s.optimization_report().passes;
  return std::any_of(report.begin(), report.end(),
                     [](const passes::PassStats& p) { return p.name == "narrow-selected-rows" && p.changed_runs > 0; });
}

TEST(OutputRange, LastPositionOnlyWithTheWholeOutputsLastRow) {
  for (const int64_t opset : {9, 17}) {  // Slice-1's attributes below opset 10, its inputs from 10
    const Model m = lm_tail(opset, false);
    auto whole = session_of(m, {});
    auto last = session_of(m, {kLastPosition});
    ASSERT_TRUE(whole && last);
    EXPECT_FALSE(last->outputs()[0].type.dims[1].known());  // declared: not `seq` any more
    for (const int64_t rows : {1, 5}) {
      const std::vector<Value> in = {random_value({1, rows, kWidth}, 3 + static_cast<uint32_t>(rows))};
      auto a = whole->run(in);
      auto b = last->run(in);
      ASSERT_TRUE(a.is_ok() && b.is_ok()) << b.status().to_string();
      const Tensor& t = (*b)[0].tensor();
      ASSERT_EQ(t.shape(), (Shape{1, 1, kVocab})) << opset;
      const std::vector<float> want = row_of((*a)[0].tensor(), rows - 1), got = row_of(t, 0);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << opset << " " << rows;
    }
    if (opset >= 10) {  // the pass needs Slice's input form
      EXPECT_TRUE(narrowed(*last));
    }
  }
}

TEST(OutputRange, OtherReadersOfTheOutputSeeItWhole) {
  const Model m = lm_tail(17, true);
  auto whole = session_of(m, {});
  auto last = session_of(m, {kLastPosition});
  ASSERT_TRUE(whole && last);
  const std::vector<Value> in = {random_value({1, 4, kWidth}, 9)};
  auto a = whole->run(in);
  auto b = last->run(in);
  ASSERT_TRUE(a.is_ok() && b.is_ok()) << b.status().to_string();
  EXPECT_EQ((*b)[0].tensor().shape(), (Shape{1, 1, kVocab}));
  EXPECT_EQ((*b)[1].tensor().shape(), (Shape{1, 4, kVocab}));
  EXPECT_EQ(max_abs_diff({(*a)[1]}, {(*b)[1]}), 0.0);
}

// A torch GPT decoder with a KV cache (tests/models/gpt_decoder: causal attention written as
// MatMul / Where / Softmax, Concat of past and new keys): narrowed by the pass, with the last
// position's logits as the whole run's and the same presents.
TEST(OutputRange, GptDecoderLastPositionWithACache) {
  auto loaded = load_model(std::string(XONNX_TEST_MODELS_DIR) + "/gpt_decoder/model.onnx");
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  const int64_t seq = 6, past = 3;
  Tensor ids = Tensor::from_vector<int64_t>({5, 17, 200, 3, 99, 42}, {1, seq});
  std::vector<Value> in = {Value(ids)};
  for (uint32_t i = 0; i < 4; ++i) in.push_back(random_value({1, 4, past, 16}, 20 + i));
  auto whole = session_of(*loaded, {});
  auto last = session_of(*loaded, {kLastPosition});
  ASSERT_TRUE(whole && last);
  auto a = whole->run(in);
  auto b = last->run(in);
  ASSERT_TRUE(a.is_ok() && b.is_ok()) << b.status().to_string();
  const Tensor& logits = (*b)[0].tensor();
  ASSERT_EQ(logits.shape(), (Shape{1, 1, 256}));
  const std::vector<float> want = row_of((*a)[0].tensor(), seq - 1), got = row_of(logits, 0);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
  for (size_t o = 1; o < a->size(); ++o) EXPECT_EQ(max_abs_diff({(*a)[o]}, {(*b)[o]}), 0.0) << "present " << o;
  EXPECT_TRUE(narrowed(*last));
}

TEST(OutputRange, ErrorsNameTheRangeAndWhatIsWrong) {
  Model m = lm_tail(17, false);
  const auto error = [&](std::vector<OutputRange> ranges) {
    SessionOptions options;
    options.output_ranges = std::move(ranges);
    auto session = Session::create_from_model(m, options);
    EXPECT_FALSE(session.is_ok());
    return session.is_ok() ? std::string() : session.status().message();
  };
  EXPECT_NE(error({{"scores", 1, -1, INT64_MAX}}).find("no output 'scores'"), std::string::npos);
  EXPECT_NE(error({{"logits", 3, 0, 1}}).find("rank 3"), std::string::npos);
  EXPECT_NE(error({{"logits", -4, 0, 1}}).find("rank 3"), std::string::npos);
  EXPECT_NE(error({kLastPosition, kLastPosition}).find("has a range already"), std::string::npos);
  m.graph.outputs.push_back(tensor_info("x", DataType::kFloat, {dim(1), sym("seq"), dim(kWidth)}));
  EXPECT_NE(error({{"x", 1, 0, 1}}).find("graph input or a constant"), std::string::npos);
  m.graph.outputs = {untyped("logits")};
  EXPECT_NE(error({{"logits", -1, 0, 1}}).find("negative axis needs the output's rank"), std::string::npos);
  // A negative axis counts from the end where the rank is declared.
  auto session = session_of(lm_tail(17, false), {{"logits", -2, -1, INT64_MAX}});
  ASSERT_TRUE(session);
  auto out = session->run({random_value({1, 3, kWidth}, 4)});
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{1, 1, kVocab}));
}

}  // namespace
}  // namespace testing
}  // namespace xonnx
