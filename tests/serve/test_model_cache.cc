// The model cache of `xonnx models`: add copies a GenAI folder, list / info describe it,
// remove deletes it; bad names and folders are refused with the reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "sdk/serve/model_cache.h"

namespace xonnx::serve {
namespace {

namespace fs = std::filesystem;

TEST(ModelCache, AddListInfoRemove) {
  const fs::path cache = fs::temp_directory_path() / ("xonnx-cache-test-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  const std::string model = std::string(XONNX_TEST_LLM_DIR) + "/tiny/genai_int4/";
  auto empty = list_cached_models(cache.string());
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty.value().empty());

  auto added = add_cached_model(cache.string(), model, "");
  ASSERT_TRUE(added.is_ok()) << added.status().to_string();
  EXPECT_EQ(added.value().name, "genai_int4");
  EXPECT_EQ(added.value().type, "llama");
  EXPECT_EQ(added.value().context_length, 512);
  EXPECT_GT(added.value().bytes, 2'000'000);
  EXPECT_FALSE(add_cached_model(cache.string(), model, "").is_ok());  // the name is taken
  ASSERT_TRUE(add_cached_model(cache.string(), model, "second").is_ok());
  EXPECT_FALSE(add_cached_model(cache.string(), model, "../escape").is_ok());
  EXPECT_FALSE(add_cached_model(cache.string(), cache.string(), "nomodel").is_ok());  // no genai_config.json

  auto listed = list_cached_models(cache.string());
  ASSERT_TRUE(listed.is_ok());
  ASSERT_EQ(listed.value().size(), 2u);
  EXPECT_EQ(listed.value()[0].name, "genai_int4");
  EXPECT_EQ(listed.value()[1].name, "second");
  EXPECT_TRUE(find_cached_model(cache.string(), "second").is_ok());
  EXPECT_EQ(find_cached_model(cache.string(), "missing").status().code(), StatusCode::kNotFound);

  EXPECT_TRUE(remove_cached_model(cache.string(), "second").is_ok());
  EXPECT_FALSE(remove_cached_model(cache.string(), "second").is_ok());
  EXPECT_EQ(list_cached_models(cache.string()).value().size(), 1u);
  fs::remove_all(cache);
}

TEST(ModelCache, EmbeddingModelFolder) {
  const fs::path cache = fs::temp_directory_path() / ("xonnx-cache-embed-" + std::to_string(::getpid()));
  fs::remove_all(cache);
  const std::string encoder = std::string(XONNX_TEST_LLM_DIR) + "/../models_embedding/tiny_encoder";
  auto added = add_cached_model(cache.string(), encoder, "");
  ASSERT_TRUE(added.is_ok()) << added.status().to_string();
  EXPECT_EQ(added.value().name, "tiny_encoder");
  EXPECT_EQ(added.value().type, "embedding");
  EXPECT_EQ(added.value().context_length, 128);  // sentence_bert_config.json max_seq_length
  auto listed = list_cached_models(cache.string());
  ASSERT_TRUE(listed.is_ok());
  ASSERT_EQ(listed.value().size(), 1u);
  EXPECT_EQ(listed.value()[0].type, "embedding");
  fs::remove_all(cache);
}

}  // namespace
}  // namespace xonnx::serve
