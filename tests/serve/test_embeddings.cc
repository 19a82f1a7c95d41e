// POST /v1/embeddings over the committed random-weight encoder (tests/models_embedding): the
// vectors equal a numpy forward pass of the same weights (tiny_encoder_expected.json, written by
// make_tiny_encoder.py) and a direct xonnx Session run pooled here; OpenAI's shapes and errors.
// The weights are random, so numbers are compared, never similarities.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "runtime/exec/session.h"
#include "sdk/serve/embedding_model.h"
#include "sdk/serve/embeddings.h"
#include "sdk/serve/server.h"

namespace xonnx::serve {
namespace {

using json = nlohmann::json;

const std::string kEmbeddingDir = std::string(XONNX_TEST_LLM_DIR) + "/../models_embedding";
const std::string kEncoderDir = kEmbeddingDir + "/tiny_encoder";
const std::string kLlmDir = std::string(XONNX_TEST_LLM_DIR) + "/tiny/genai_int4";

json read_json(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// The expected vector of a text: the encoder run alone (batch 1, no padding) on the text's ids,
// its last_hidden_state averaged over the tokens and L2-normalized, written out here.
std::vector<float> session_embedding(const std::string& text) {
  auto tok = genai::Tokenizer::load(kEncoderDir);
  EXPECT_TRUE(tok.is_ok());
  const std::vector<int32_t> ids32 = tok.value()->encode(text, true);
  const int64_t n = static_cast<int64_t>(ids32.size());
  auto session = Session::create(kEncoderDir + "/model.onnx");
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  std::vector<int64_t> ids(ids32.begin(), ids32.end());
  auto out = session.value()->run({Tensor::from_vector<int64_t>(ids, {1, n}),
                                   Tensor::from_vector<int64_t>(std::vector<int64_t>(ids.size(), 1), {1, n}),
                                   Tensor::from_vector<int64_t>(std::vector<int64_t>(ids.size(), 0), {1, n})});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  const Tensor& h = out.value()[0].tensor();
  const int64_t dim = h.dim(2);
  std::vector<double> mean(static_cast<size_t>(dim), 0);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t d = 0; d < dim; ++d) mean[static_cast<size_t>(d)] += h.data<float>()[t * dim + d] / double(n);
  }
  double norm = 0;
  for (double v : mean) norm += v * v;
  std::vector<float> result;
  for (double v : mean) result.push_back(static_cast<float>(v / std::sqrt(norm)));
  return result;
}

void expect_near(const json& got, const std::vector<float>& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i].get<double>(), want[i], tolerance) << what << " [" << i << "]";
}

std::vector<float> decode_base64_floats(const std::string& text) {
  std::string bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    acc = (acc << 6) | static_cast<uint32_t>(std::strchr(alphabet, c) - alphabet);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  std::vector<float> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), out.size() * 4);  // little-endian host, as the format
  return out;
}

TEST(EmbeddingModel, MatchesNumpyForwardPassInOneBatch) {
  const json expected = read_json(kEmbeddingDir + "/tiny_encoder_expected.json");
  auto model = EmbeddingModel::load(kEncoderDir, 1);
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  EXPECT_EQ(model.value()->config().pooling, Pooling::kMean);
  EXPECT_TRUE(model.value()->config().normalize);
  EXPECT_EQ(model.value()->config().max_tokens, 128);
  std::vector<std::vector<int32_t>> inputs;
  for (const json& c : expected["cases"]) inputs.push_back(c["input"].get<std::vector<int32_t>>());
  auto vectors = model.value()->embed(inputs);  // lengths 5, 8, 1, 60: padded in one batch
  ASSERT_TRUE(vectors.is_ok()) << vectors.status().message();
  for (size_t i = 0; i < inputs.size(); ++i) {
    expect_near(json(vectors.value()[i]), expected["cases"][i]["embedding"].get<std::vector<float>>(), 2e-5,
                "case " + std::to_string(i));
  }
}

TEST(EmbeddingModel, Pooling) {
  // batch 2, seq 3, dim 2; the second row has one padding position.
  const float hidden[] = {1, 2, 3, 4, 5, 9, /**/ -1, 0, 2, 6, 100, 100};
  const int64_t mask[] = {1, 1, 1, 1, 1, 0};
  float out[4];
  pool_embeddings(hidden, mask, 2, 3, 2, Pooling::kMean, false, out);
  EXPECT_FLOAT_EQ(out[0], 3);
  EXPECT_FLOAT_EQ(out[1], 5);
  EXPECT_FLOAT_EQ(out[2], 0.5f);
  EXPECT_FLOAT_EQ(out[3], 3);
  pool_embeddings(hidden, mask, 2, 3, 2, Pooling::kMax, false, out);
  EXPECT_FLOAT_EQ(out[1], 9);
  EXPECT_FLOAT_EQ(out[3], 6);  // not the padding's 100
  pool_embeddings(hidden, mask, 2, 3, 2, Pooling::kLastToken, false, out);
  EXPECT_FLOAT_EQ(out[2], 2);
  pool_embeddings(hidden, mask, 2, 3, 2, Pooling::kCls, true, out);
  EXPECT_FLOAT_EQ(out[0], 1 / std::sqrt(5.f));
  EXPECT_FLOAT_EQ(out[3], 0);
}

TEST(EmbeddingRequest, Parsing) {
  auto one = parse_embedding_request(R"({"model":"m","input":"hello","encoding_format":"base64","dimensions":8})");
  ASSERT_TRUE(one.request) << one.error.message;
  EXPECT_EQ(one.request->texts, std::vector<std::string>{"hello"});
  EXPECT_TRUE(one.request->base64);
  EXPECT_EQ(*one.request->dimensions, 8);
  auto tokens = parse_embedding_request(R"({"input":[[1,2],[3]]})");
  ASSERT_TRUE(tokens.request);
  EXPECT_EQ(tokens.request->token_inputs, (std::vector<std::vector<int32_t>>{{1, 2}, {3}}));
  auto flat = parse_embedding_request(R"({"input":[7,8,9]})");
  ASSERT_TRUE(flat.request);
  EXPECT_EQ(flat.request->token_inputs, (std::vector<std::vector<int32_t>>{{7, 8, 9}}));
  for (auto [body, param] : std::initializer_list<std::pair<const char*, const char*>>{
           {R"({"model":"m"})", "input"},
           {R"({"input":""})", "input"},
           {R"({"input":[]})", "input"},
           {R"({"input":["a",""]})", "input[1]"},
           {R"({"input":["a",3]})", "input[1]"},
           {R"({"input":[[1],[-2]]})", "input[1]"},
           {R"({"input":[[1],[]]})", "input[1]"},
           {R"({"input":{"a":1}})", "input"},
           {R"({"input":"a","encoding_format":"int8"})", "encoding_format"},
           {R"({"input":"a","dimensions":0})", "dimensions"},
           {R"({"model":5,"input":"a"})", "model"},
       }) {
    auto r = parse_embedding_request(body);
    EXPECT_FALSE(r.request) << body;
    EXPECT_EQ(r.error.status, 400);
    EXPECT_EQ(r.error.param, param) << body << " -> " << r.error.message;
  }
}

TEST(EmbeddingRequest, Base64IsLittleEndianFloat32) {
  EXPECT_EQ(embedding_base64({1.0f}), "AACAPw==");  // 00 00 80 3f
  EXPECT_EQ(decode_base64_floats(embedding_base64({0.25f, -3.5f, 1e-7f})), (std::vector<float>{0.25f, -3.5f, 1e-7f}));
}

class EmbeddingServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = std::make_unique<ModelRegistry>(
        [](const std::string& dir) {
          return load_model_backend(dir, BackendOptions{1, 4, 1, 0, 0});
        },
        std::chrono::milliseconds(-1));
    ASSERT_TRUE(registry_->add("encoder", kEncoderDir).is_ok());
    ASSERT_TRUE(registry_->add("llm", kLlmDir).is_ok());
    ServerOptions options;
    options.port = 0;
    server_ = std::make_unique<Server>(options, *registry_);
    ASSERT_TRUE(server_->bind().is_ok());
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  json post(const std::string& body, int status = 200, const std::string& path = "/v1/embeddings") {
    auto r = client_->Post(path.c_str(), body, "application/json");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, status) << body << " -> " << r->body;
    return json::parse(r->body);
  }

  std::unique_ptr<ModelRegistry> registry_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(EmbeddingServerTest, TextsEqualDirectSessionRuns) {
  const std::vector<std::string> texts = {"The quick brown fox", "hello", "A somewhat longer sentence, with a comma."};
  const json r = post(json{{"model", "encoder"}, {"input", texts}}.dump());
  EXPECT_EQ(r["object"], "list");
  EXPECT_EQ(r["model"], "encoder");
  ASSERT_EQ(r["data"].size(), texts.size());
  auto tok = genai::Tokenizer::load(kEncoderDir);
  int64_t tokens = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(r["data"][i]["object"], "embedding");
    EXPECT_EQ(r["data"][i]["index"], i);
    expect_near(r["data"][i]["embedding"], session_embedding(texts[i]), 2e-5, texts[i]);
    tokens += static_cast<int64_t>(tok.value()->encode(texts[i], true).size());
  }
  EXPECT_EQ(r["usage"]["prompt_tokens"], tokens);
  EXPECT_EQ(r["usage"]["total_tokens"], tokens);
}

TEST_F(EmbeddingServerTest, TokenInputsBase64AndDimensions) {
  const json expected = read_json(kEmbeddingDir + "/tiny_encoder_expected.json");
  json inputs = json::array();
  for (const json& c : expected["cases"]) inputs.push_back(c["input"]);
  const json floats = post(json{{"model", "encoder"}, {"input", inputs}}.dump());
  const json b64 = post(json{{"model", "encoder"}, {"input", inputs}, {"encoding_format", "base64"}}.dump());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::vector<float> want = expected["cases"][i]["embedding"].get<std::vector<float>>();
    expect_near(floats["data"][i]["embedding"], want, 2e-5, "float " + std::to_string(i));
    // base64 carries the same float32 numbers, bit for bit.
    EXPECT_EQ(decode_base64_floats(b64["data"][i]["embedding"].get<std::string>()),
              floats["data"][i]["embedding"].get<std::vector<float>>());
  }
  const json one = post(json{{"model", "encoder"}, {"input", inputs[0]}, {"dimensions", 16}}.dump());
  const std::vector<float> full = floats["data"][0]["embedding"].get<std::vector<float>>();
  double norm = 0;
  for (size_t d = 0; d < 16; ++d) norm += double(full[d]) * full[d];
  std::vector<float> shortened;
  for (size_t d = 0; d < 16; ++d) shortened.push_back(static_cast<float>(full[d] / std::sqrt(norm)));
  expect_near(one["data"][0]["embedding"], shortened, 1e-6, "dimensions 16");
  EXPECT_EQ(one["usage"]["prompt_tokens"], inputs[0].size());
}

TEST_F(EmbeddingServerTest, Errors) {
  auto expect = [&](const std::string& body, int status, const std::string& param,
                    const std::string& path = "/v1/embeddings") {
    const json r = post(body, status, path);
    EXPECT_TRUE(r.contains("error")) << r;
    if (r.contains("error")) {
      EXPECT_EQ(r["error"]["param"], param) << r;
      EXPECT_TRUE(r["error"]["message"].is_string());
    }
    return r;
  };
  expect(R"({"model":"encoder","input":[[1,99999]]})", 400, "input");
  expect(R"({"model":"encoder","input":["a",[1]]})", 400, "input[1]");
  expect(R"({"model":"encoder","input":[[1],[2,99999]]})", 400, "input[1]");
  expect(R"({"model":"encoder","input":"x","dimensions":65})", 400, "dimensions");
  const json longer = expect(json{{"model", "encoder"}, {"input", std::vector<int>(129, 5)}}.dump(), 400, "input");
  EXPECT_EQ(longer["error"]["code"], "context_length_exceeded");
  expect(R"({"model":"nope","input":"x"})", 404, "model");
  expect(R"({"model":"llm","input":"x"})", 400, "model");
  expect(R"({"model":"encoder","messages":[{"role":"user","content":"Hi"}]})", 400, "model", "/v1/chat/completions");
  const json deep = post(R"({"model":"encoder","input":)" + std::string(300, '[') + std::string(300, ']') + "}", 400,
                         "/v1/embeddings");
  EXPECT_NE(deep.dump().find("deeper than 128"), std::string::npos) << deep;
}

}  // namespace
}  // namespace xonnx::serve
