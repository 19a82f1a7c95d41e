// The HTTP layer of `xonnx serve` over a scripted backend (fake_backend.h): OpenAI response
// shapes, streaming, errors and their statuses, API keys, queue limits, disconnects, metrics.
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "sdk/serve/api_request.h"
#include "sdk/serve/server.h"
#include "tests/serve/fake_backend.h"
#include "tests/serve/schema_validator.h"

namespace xonnx::serve {
namespace {

using json = nlohmann::json;
using testing::FakeBackend;

const std::string kModelDir = std::string(XONNX_TEST_LLM_DIR) + "/tiny/genai_int4";

class ServerTest : public ::testing::Test {
 protected:
  void start(ServerOptions options = {}, FakeBackend::Options fake = {}) {
    registry_ = std::make_unique<ModelRegistry>(
        [this, fake](const std::string& dir) -> Result<std::unique_ptr<ModelBackend>> {
          auto tok = genai::Tokenizer::load(dir);
          if (!tok.is_ok()) return tok.status();
          auto backend = std::make_unique<FakeBackend>(std::move(tok.value()), fake);
          backend_ = backend.get();
          ++loads_;
          return std::unique_ptr<ModelBackend>(std::move(backend));
        },
        std::chrono::milliseconds(keep_alive_ms_));
    ASSERT_TRUE(registry_->add("tiny", kModelDir).is_ok());
    options.port = 0;
    server_ = std::make_unique<Server>(options, *registry_);
    ASSERT_TRUE(server_->bind().is_ok());
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    if (!options.api_key.empty()) client_->set_bearer_token_auth(options.api_key.c_str());
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Result post(const std::string& path, const std::string& body) {
    return client_->Post(path.c_str(), body, "application/json");
  }
  static json body_of(const httplib::Result& r) { return json::parse(r->body); }
  static void expect_error(const httplib::Result& r, int status, const std::string& param) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    const json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.contains("error")) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_TRUE(j["error"]["type"].is_string());
    if (!param.empty()) {
      EXPECT_EQ(j["error"]["param"], param) << r->body;
    }
  }

  int keep_alive_ms_ = -1;
  std::atomic<int> loads_{0};
  FakeBackend* backend_ = nullptr;
  std::unique_ptr<ModelRegistry> registry_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

const char* const kChat = R"({"model":"tiny","messages":[{"role":"user","content":"Hi"}]})";

TEST_F(ServerTest, ModelsAndHealth) {
  start();
  auto r = client_->Get("/v1/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const json models = body_of(r);
  EXPECT_EQ(models["object"], "list");
  ASSERT_EQ(models["data"].size(), 1u);
  EXPECT_EQ(models["data"][0]["id"], "tiny");
  EXPECT_EQ(models["data"][0]["object"], "model");
  EXPECT_EQ(client_->Get("/v1/models/tiny")->status, 200);
  expect_error(client_->Get("/v1/models/nope"), 404, "model");
  EXPECT_EQ(client_->Get("/health")->status, 200);
  expect_error(client_->Get("/v1/nothing"), 404, "");
}

TEST_F(ServerTest, ChatCompletion) {
  start();
  auto r = post("/v1/chat/completions", kChat);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = body_of(r);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello from the fake engine.");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  // The prompt went through the chat template.
  const std::string prompt = backend_->tokenizer().decode(backend_->last_prompt_);
  EXPECT_NE(prompt.find("<|im_start|>user\nHi<|im_end|>"), std::string::npos) << prompt;
  EXPECT_EQ(j["usage"]["prompt_tokens"], backend_->last_prompt_.size());
  EXPECT_GT(j["usage"]["completion_tokens"].get<int>(), 3);
  EXPECT_EQ(j["usage"]["total_tokens"],
            j["usage"]["prompt_tokens"].get<int>() + j["usage"]["completion_tokens"].get<int>());
  EXPECT_TRUE(j["timings"].contains("first_token_ms"));
}

TEST_F(ServerTest, SamplingFieldsReachTheEngine) {
  start();
  auto r = post("/v1/chat/completions",
                R"({"model":"tiny","messages":[{"role":"user","content":"Hi"}],"temperature":0.7,"top_p":0.9,
                    "seed":42,"logit_bias":{"17":-100},"max_completion_tokens":3})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_of(r)["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body_of(r)["usage"]["completion_tokens"], 3);
  EXPECT_FLOAT_EQ(backend_->last_sampling_.temperature, 0.7f);
  EXPECT_FLOAT_EQ(backend_->last_sampling_.top_p, 0.9f);
  EXPECT_EQ(backend_->last_sampling_.seed, 42);
  ASSERT_EQ(backend_->last_sampling_.logit_bias.size(), 1u);
  EXPECT_EQ(backend_->last_sampling_.logit_bias[0].first, 17);
}

TEST_F(ServerTest, Completion) {
  start();
  auto r = post("/v1/completions", R"({"model":"tiny","prompt":"Once upon","max_tokens":2})");
  ASSERT_EQ(r->status, 200) << r->body;
  const json j = body_of(r);
  EXPECT_EQ(j["object"], "text_completion");
  const std::vector<int32_t> reply = backend_->tokenizer().encode("Hello from the fake engine.", false);
  EXPECT_EQ(j["choices"][0]["text"], backend_->tokenizer().decode(reply.data(), 2));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(backend_->tokenizer().decode(backend_->last_prompt_), "Once upon");
}

std::vector<json> sse_events(const std::string& body, bool& done) {
  std::vector<json> events;
  done = false;
  size_t pos = 0;
  while ((pos = body.find("data: ", pos)) != std::string::npos) {
    const size_t end = body.find("\n\n", pos);
    const std::string data = body.substr(pos + 6, end - pos - 6);
    pos = end;
    if (data == "[DONE]") {
      done = true;
      continue;
    }
    events.push_back(json::parse(data));
  }
  return events;
}

TEST_F(ServerTest, ChatStreamWithUsage) {
  start();
  auto r = post("/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"Hi"}],"stream":true,
                                            "stream_options":{"include_usage":true}})");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  bool done = false;
  const std::vector<json> events = sse_events(r->body, done);
  EXPECT_TRUE(done);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.front()["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  for (const json& e : events) {
    EXPECT_EQ(e["object"], "chat.completion.chunk");
    if (!e["choices"].empty() && e["choices"][0]["delta"].contains("content"))
      text += e["choices"][0]["delta"]["content"];
  }
  EXPECT_EQ(text, "Hello from the fake engine.");
  const json& last_choice = events[events.size() - 2];
  EXPECT_EQ(last_choice["choices"][0]["finish_reason"], "stop");
  const json& usage = events.back();
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_GT(usage["usage"]["completion_tokens"].get<int>(), 0);
}

TEST_F(ServerTest, CompletionStream) {
  start();
  auto r = post("/v1/completions", R"({"model":"tiny","prompt":"x","stream":true})");
  ASSERT_EQ(r->status, 200);
  bool done = false;
  std::string text;
  for (const json& e : sse_events(r->body, done)) text += e["choices"][0]["text"].get<std::string>();
  EXPECT_TRUE(done);
  EXPECT_EQ(text, "Hello from the fake engine.");
}

TEST_F(ServerTest, JsonSchemaOutputValidates) {
  start();
  const json schema = json::parse(R"({"type":"object","properties":{"name":{"type":"string","maxLength":8},
      "age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false})");
  for (int seed = 0; seed < 5; ++seed) {
    json req = json::parse(kChat);
    req["seed"] = seed;
    req["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"name", "person"}, {"schema", schema}}}};
    auto r = post("/v1/chat/completions", req.dump());
    ASSERT_EQ(r->status, 200) << r->body;
    const std::string content = body_of(r)["choices"][0]["message"]["content"];
    const json value = json::parse(content, nullptr, false);
    ASSERT_FALSE(value.is_discarded()) << content;
    EXPECT_TRUE(testing::validate(value, schema, schema)) << content;
  }
  json req = json::parse(kChat);
  req["response_format"] = {{"type", "json_object"}};
  auto r = post("/v1/chat/completions", req.dump());
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(json::parse(body_of(r)["choices"][0]["message"]["content"].get<std::string>()).is_object());
}

TEST_F(ServerTest, ErrorsHaveOpenAIShapeAndStatus) {
  ServerOptions options;
  options.max_body_bytes = 4096;
  start(options);
  expect_error(post("/v1/chat/completions", "{not json"), 400, "");
  expect_error(post("/v1/chat/completions", R"({"model":"tiny"})"), 400, "messages");
  expect_error(post("/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"robot","content":"x"}]})"), 400,
               "messages[0].role");
  expect_error(post("/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"n":2})"),
               400, "n");
  expect_error(
      post("/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"temperature":3})"),
      400, "temperature");
  expect_error(post("/v1/chat/completions",
                    R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"logit_bias":{"99999":1}})"),
               400, "logit_bias");
  auto bad_schema = post("/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object","properties":{"a":{"type":"string","minLength":"x"}}}}}})");
  expect_error(bad_schema, 400, "response_format.json_schema.schema");
  EXPECT_NE(bad_schema->body.find("/properties/a/minLength"), std::string::npos) << bad_schema->body;
  auto unknown = post("/v1/chat/completions", R"({"model":"nope","messages":[{"role":"user","content":"x"}]})");
  expect_error(unknown, 404, "model");
  EXPECT_EQ(body_of(unknown)["error"]["code"], "model_not_found");
  expect_error(post("/v1/chat/completions", std::string(R"({"model":"tiny","messages":[{"role":"user","content":")") +
                                                std::string(5000, 'a') + "\"}]}"),
               413, "");
  // Nested past kMaxJsonNesting (the schema compiler recursed once per level: 100,000 levels
  // overflowed the stack).
  std::string schema = "{}";
  for (int i = 0; i < 200; ++i) schema = R"({"items":)" + schema + "}";
  auto deep =
      post("/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"x"}],"response_format":)"
                                   R"({"type":"json_schema","json_schema":{"name":"s","schema":)" +
                                       schema + "}}}");
  expect_error(deep, 400, "");
  EXPECT_NE(deep->body.find("nests arrays and objects deeper than 128"), std::string::npos) << deep->body;
}

TEST_F(ServerTest, ApiKey) {
  ServerOptions options;
  options.api_key = "sekret";
  start(options);
  EXPECT_EQ(post("/v1/chat/completions", kChat)->status, 200);
  httplib::Client anonymous("127.0.0.1", server_->port());
  auto r = anonymous.Post("/v1/chat/completions", kChat, "application/json");
  expect_error(r, 401, "");
  EXPECT_EQ(body_of(r)["error"]["code"], "invalid_api_key");
  anonymous.set_bearer_token_auth("wrong");
  expect_error(anonymous.Get("/v1/models"), 401, "");
  EXPECT_EQ(anonymous.Get("/health")->status, 200);  // probes need no key
}

TEST_F(ServerTest, QueueFullIs429) {
  FakeBackend::Options fake;
  fake.max_running = 1;
  fake.per_token = std::chrono::milliseconds(20);
  start({}, fake);
  std::thread slow([&] {
    httplib::Client c("127.0.0.1", server_->port());
    c.Post("/v1/chat/completions", kChat, "application/json");
  });
  while (backend_ == nullptr || backend_->running_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  auto r = post("/v1/chat/completions", kChat);
  expect_error(r, 429, "");
  slow.join();
  EXPECT_EQ(post("/v1/chat/completions", kChat)->status, 200);
}

TEST_F(ServerTest, StreamDisconnectCancels) {
  FakeBackend::Options fake;
  fake.reply = std::string(400, 'z');
  fake.per_token = std::chrono::milliseconds(5);
  start({}, fake);
  httplib::Client c("127.0.0.1", server_->port());
  int chunks = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = R"({"model":"tiny","messages":[{"role":"user","content":"Hi"}],"stream":true})";
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 3; };
  c.send(req);  // the receiver's false closes the connection mid-stream
  for (int i = 0; i < 400 && backend_->cancelled_ == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(backend_->cancelled_, 1u);
  EXPECT_EQ(backend_->running_, 0);
}

TEST_F(ServerTest, WaitingClientDisconnectCancels) {
  FakeBackend::Options fake;
  fake.reply = std::string(400, 'z');
  fake.per_token = std::chrono::milliseconds(20);  // 8 s to the end unless cancelled
  start({}, fake);
  ASSERT_TRUE(registry_->acquire("tiny").is_ok());  // loaded now: backend_ is set
  ::signal(SIGPIPE, SIG_IGN);  // as xonnx serve: the answer written to the closed socket fails quietly
  // A raw client: sends a non-streamed request and closes the connection without reading.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const std::string body = kChat;
  const std::string request =
      "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  for (int i = 0; i < 400 && backend_->running_ == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::close(fd);
  for (int i = 0; i < 400 && backend_->cancelled_ == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(backend_->cancelled_, 1u);
  for (int i = 0; i < 400 && backend_->running_ != 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(backend_->running_, 0);
  // A client that waits gets its answer (the probe does not cancel live connections).
  EXPECT_EQ(
      post("/v1/chat/completions", R"({"model":"tiny","messages":[{"role":"user","content":"Hi"}],"max_tokens":3})")
          ->status,
      200);
  EXPECT_EQ(backend_->cancelled_, 1u);
}

// The keep-alive thread sleeps until a deadline: an idle server does not wake up at all (it
// polled every 50 ms before). Counted, not timed: /metrics' wake-up counter stays put.
TEST_F(ServerTest, IdleServerDoesNotWakeUp) {
  keep_alive_ms_ = 600000;
  start();
  EXPECT_EQ(post("/v1/chat/completions", kChat)->status, 200);  // loaded; its deadline is 10 min away
  auto wakeups = [&] {
    const std::string body = client_->Get("/metrics")->body;
    const std::string key = "\nxonnx_keep_alive_wakeups_total ";
    const size_t at = body.find(key);
    EXPECT_NE(at, std::string::npos);
    return at == std::string::npos ? -1L : std::stol(body.substr(at + key.size()));
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the wake-up of the request's end
  const long before = wakeups();
  EXPECT_LE(before, 3);  // the load and the request's end
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(wakeups(), before);
  EXPECT_TRUE(registry_->list()[0].loaded);
}

TEST_F(ServerTest, TokenizeDetokenize) {
  start();
  auto r = post("/tokenize", R"({"model":"tiny","content":"hello world","add_special":false})");
  ASSERT_EQ(r->status, 200) << r->body;
  const json ids = body_of(r)["tokens"];
  EXPECT_GT(ids.size(), 0u);
  auto d = post("/detokenize", json{{"model", "tiny"}, {"tokens", ids}}.dump());
  ASSERT_EQ(d->status, 200) << d->body;
  EXPECT_EQ(body_of(d)["content"], "hello world");
  expect_error(post("/detokenize", R"({"tokens":[999999]})"), 400, "tokens");
  auto chat = post("/tokenize", R"({"messages":[{"role":"user","content":"Hi"}]})");
  ASSERT_EQ(chat->status, 200) << chat->body;
}

TEST_F(ServerTest, MetricsPrometheusText) {
  start();
  post("/v1/chat/completions", kChat);
  post("/v1/chat/completions", "{");
  auto r = client_->Get("/metrics");
  ASSERT_EQ(r->status, 200);
  EXPECT_NE(r->body.find("xonnx_requests_total{path=\"/v1/chat/completions\",status=\"200\"} 1"), std::string::npos)
      << r->body;
  EXPECT_NE(r->body.find("xonnx_requests_total{path=\"/v1/chat/completions\",status=\"400\"} 1"), std::string::npos);
  EXPECT_NE(r->body.find("xonnx_completion_tokens_total "), std::string::npos);
  EXPECT_NE(r->body.find("xonnx_time_to_first_token_seconds_count 1"), std::string::npos);
  EXPECT_NE(r->body.find("xonnx_models_loaded 1"), std::string::npos);
  EXPECT_NE(r->body.find("xonnx_model_slots{model=\"tiny\"}"), std::string::npos);
}

TEST_F(ServerTest, LoadsOnFirstRequestAndUnloadsWhenIdle) {
  keep_alive_ms_ = 100;
  start();
  EXPECT_EQ(loads_, 0);
  EXPECT_EQ(post("/v1/chat/completions", kChat)->status, 200);
  EXPECT_EQ(loads_, 1);
  bool unloaded = false;
  for (int i = 0; i < 100 && !unloaded; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    unloaded = !registry_->list()[0].loaded;
  }
  EXPECT_TRUE(unloaded);
  EXPECT_EQ(post("/v1/chat/completions", kChat)->status, 200);
  EXPECT_EQ(loads_, 2);
}

TEST(ApiRequest, Parsing) {
  auto p =
      parse_completion_request(R"({"model":"m","messages":[{"role":"developer","content":[{"type":"text","text":"a"},
      {"type":"text","text":"b"}]},{"role":"assistant","content":null}],"max_tokens":5,"max_completion_tokens":7,
      "stop":"END","seed":-3,"user":"ignored","stream":true,"stream_options":{"include_usage":true}})",
                               Endpoint::kChat);
  ASSERT_TRUE(p.request) << p.error.message;
  EXPECT_EQ(p.request->messages[0]["role"], "system");
  EXPECT_EQ(p.request->messages[0]["content"], "ab");
  EXPECT_EQ(p.request->messages[1]["content"], "");
  EXPECT_EQ(*p.request->max_tokens, 7);
  EXPECT_EQ(p.request->stop, std::vector<std::string>{"END"});
  EXPECT_EQ(p.request->sampling.seed, 2);
  EXPECT_TRUE(p.request->include_usage);

  auto ids = parse_completion_request(R"({"model":"m","prompt":[1,2,3]})", Endpoint::kCompletion);
  ASSERT_TRUE(ids.request);
  EXPECT_EQ(ids.request->prompt_ids, (std::vector<int32_t>{1, 2, 3}));

  struct Bad {
    const char* body;
    const char* param;
  };
  for (const Bad& b : std::initializer_list<Bad>{
           {R"([1])", ""},
           {R"({"messages":[{"role":"user","content":"x"}]})", "model"},
           {R"({"model":"m","messages":[]})", "messages"},
           {R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]})",
            "messages[0].content[0].type"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":0})", "max_tokens"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":1.5})", "max_tokens"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"top_p":0})", "top_p"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]})", "stop"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"a":1}})", "logit_bias.a"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"logit_bias":{"5":101}})", "logit_bias.5"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}})",
            "stream_options"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"logprobs":true})", "logprobs"},
           {R"({"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"xml"}})",
            "response_format.type"},
       }) {
    auto r = parse_completion_request(b.body, Endpoint::kChat);
    EXPECT_FALSE(r.request) << b.body;
    EXPECT_EQ(r.error.status, 400);
    EXPECT_EQ(r.error.param, b.param) << b.body << " -> " << r.error.message;
  }
  auto prompt = parse_completion_request(R"({"model":"m","prompt":["a","b"]})", Endpoint::kCompletion);
  EXPECT_EQ(prompt.error.param, "prompt");
  auto echo = parse_completion_request(R"({"model":"m","prompt":"a","echo":true})", Endpoint::kCompletion);
  EXPECT_EQ(echo.error.param, "echo");
}

}  // namespace
}  // namespace xonnx::serve
