// genai_config.json parsing: the shipped folders, ORT GenAI's defaults and name templates,
// both past_present_share_buffer settings, and errors that name the file and the field.
#include <gtest/gtest.h>

#include <string>

#include "sdk/genai/genai_config.h"

namespace xonnx::genai {
namespace {

// A minimal decoder-only config; `model_extra` / `search` are spliced in.
std::string config_text(const std::string& model_extra = "", const std::string& search = "") {
  std::string s = R"({"model": {"type": "llama", "context_length": 2048, "vocab_size": 32000,)" + model_extra +
                  R"("decoder": {"hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 4,
                                 "num_hidden_layers": 24}})";
  s += "}";
  if (!search.empty()) s.insert(s.size() - 1, R"(, "search": {)" + search + "}");
  return s;
}

std::string error_of(const std::string& text) {
  auto c = parse_genai_config(text, "DIR/genai_config.json");
  return c.is_ok() ? std::string("(parsed)") : c.status().message();
}

TEST(GenaiConfig, ShippedTinyFolder) {
  auto c = load_genai_config(std::string(XONNX_TEST_LLM_DIR) + "/tiny/genai_int4");
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->type, "llama");
  EXPECT_EQ(c->context_length, 512);
  EXPECT_EQ(c->vocab_size, 4096);
  EXPECT_EQ(c->bos_token_id, 4093);
  EXPECT_EQ(c->pad_token_id, 4093);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{4093, 4095}));
  EXPECT_EQ(c->decoder.num_hidden_layers, 4);
  EXPECT_EQ(c->decoder.num_key_value_heads, 2);
  EXPECT_EQ(c->decoder.head_size, 32);
  EXPECT_TRUE(c->search.past_present_share_buffer);
  EXPECT_EQ(c->search.top_k, 50);
  EXPECT_FALSE(c->search.do_sample);
  EXPECT_EQ(c->search.max_length, 512);
  EXPECT_EQ(c->model_path(), std::string(XONNX_TEST_LLM_DIR) + "/tiny/genai_int4/model.onnx");
  EXPECT_EQ(GenaiConfig::layer_name(c->decoder.inputs.past_key_names, 3), "past_key_values.3.key");
  EXPECT_EQ(GenaiConfig::layer_name(c->decoder.outputs.present_value_names, 11), "present.11.value");
}

TEST(GenaiConfig, DefaultsAsGenai) {
  auto c = parse_genai_config(config_text());
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->decoder.head_size, 64);  // hidden_size / num_attention_heads
  EXPECT_EQ(c->decoder.inputs.input_ids, "input_ids");
  EXPECT_EQ(c->decoder.inputs.attention_mask, "attention_mask");
  EXPECT_EQ(c->decoder.inputs.past_key_names, "past_key_values.%d.key");
  EXPECT_EQ(c->decoder.outputs.present_key_names, "present.%d.key");
  EXPECT_FALSE(c->search.past_present_share_buffer);
  EXPECT_EQ(c->search.max_length, 2048);  // context_length
  EXPECT_TRUE(c->eos_token_ids.empty());
  auto no_kv = parse_genai_config(R"({"model": {"type": "phi3", "context_length": 128,
      "decoder": {"hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2}}})");
  ASSERT_TRUE(no_kv.is_ok()) << no_kv.status().message();
  EXPECT_EQ(no_kv->decoder.num_key_value_heads, 4);
}

TEST(GenaiConfig, NamesSearchAndEos) {
  auto c = parse_genai_config(config_text(R"("eos_token_id": 2, "bos_token_id": 1,)",
                                          R"("past_present_share_buffer": true, "max_length": 1024, "do_sample": true,
                                             "temperature": 0.7, "top_k": 40, "top_p": 0.9, "random_seed": 42,
                                             "repetition_penalty": 1.1, "diversity_penalty": 0.0)"));
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  EXPECT_EQ(c->eos_token_ids, std::vector<int32_t>{2});
  EXPECT_TRUE(c->search.past_present_share_buffer);
  EXPECT_EQ(c->search.max_length, 1024);
  EXPECT_TRUE(c->search.do_sample);
  EXPECT_FLOAT_EQ(c->search.temperature, 0.7f);
  EXPECT_EQ(c->search.top_k, 40);
  EXPECT_FLOAT_EQ(c->search.top_p, 0.9f);
  EXPECT_EQ(c->search.random_seed, 42);
  EXPECT_FLOAT_EQ(c->search.repetition_penalty, 1.1f);

  std::string named = config_text();
  named.replace(named.find("\"hidden_size\""), 0,
                R"("inputs": {"input_ids": "ids", "past_key_names": "kv_%d_k", "past_value_names": "kv_%d_v"},
                   "outputs": {"logits": "out", "present_key_names": "new_%d_k", "present_value_names": "new_%d_v"},)");
  auto n = parse_genai_config(named);
  ASSERT_TRUE(n.is_ok()) << n.status().message();
  EXPECT_EQ(n->decoder.inputs.input_ids, "ids");
  EXPECT_EQ(GenaiConfig::layer_name(n->decoder.inputs.past_value_names, 7), "kv_7_v");
  EXPECT_EQ(GenaiConfig::layer_name(n->decoder.outputs.present_key_names, 0), "new_0_k");
  EXPECT_EQ(n->decoder.outputs.logits, "out");
}

TEST(GenaiConfig, ErrorsNameFileAndField) {
  EXPECT_NE(error_of("{").find("DIR/genai_config.json"), std::string::npos);
  const struct {
    std::string text, field;
  } cases[] = {
      {R"({"search": {}})", "model"},
      {R"({"model": {"context_length": 8, "decoder": {}}})", "model.type"},
      {R"({"model": {"type": "llama", "decoder": {"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2}}})",
       "model.context_length"},
      {R"({"model": {"type": "llama", "context_length": 8}})", "model.decoder"},
      {config_text(R"("eos_token_id": [2, "x"],)"), "model.eos_token_id[1]"},
      {config_text(R"("bos_token_id": 1.5,)"), "model.bos_token_id"},
      {config_text("", R"("temperature": -1)"), "search.temperature"},
      {config_text("", R"("top_p": 2)"), "search.top_p"},
      {config_text("", R"("num_beams": 4)"), "search.num_beams"},
      {config_text("", R"("past_present_share_buffer": "yes")"), "search.past_present_share_buffer"},
      {R"({"model": {"type": "whisper", "context_length": 8, "decoder": {}}})", "model.type"},
      {R"({"model": {"type": "llama", "context_length": 8, "decoder": {"hidden_size": 8, "num_attention_heads": 2}}})",
       "model.decoder.num_hidden_layers"},
  };
  for (const auto& c : cases) {
    const std::string e = error_of(c.text);
    EXPECT_NE(e.find("DIR/genai_config.json"), std::string::npos) << c.text << " -> " << e;
    EXPECT_NE(e.find(c.field), std::string::npos) << c.text << " -> " << e;
  }
  std::string bad_template = config_text();
  bad_template.replace(bad_template.find("\"hidden_size\""), 0, R"("inputs": {"past_key_names": "past_key"},)");
  EXPECT_NE(error_of(bad_template).find("model.decoder.inputs.past_key_names"), std::string::npos)
      << error_of(bad_template);
  auto missing = load_genai_config("/nonexistent/folder");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/folder/genai_config.json"), std::string::npos);
}

}  // namespace
}  // namespace xonnx::genai
