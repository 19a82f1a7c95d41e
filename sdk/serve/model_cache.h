// The local model cache (`xonnx models`, docs/serve.md): GenAI model folders and embedding
// model folders (sentence-transformers layout, embedding_model.h) kept under one
// directory, one folder per model named as the model. The directory is $XONNX_MODELS, else
// $XDG_DATA_HOME/xonnx/models, else ~/.local/share/xonnx/models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace xonnx::serve {

struct CachedModel {
  std::string name, path;
  int64_t bytes = 0;  // all files of the folder
  std::string type;   // genai_config.json model.type, or "embedding"
  int32_t context_length = 0, vocab_size = 0, layers = 0;
};

std::string model_cache_dir();
// The cache's models (folders holding genai_config.json or modules.json), sorted by name; none if the cache
// directory does not exist.
Result<std::vector<CachedModel>> list_cached_models(const std::string& cache_dir);
Result<CachedModel> find_cached_model(const std::string& cache_dir, const std::string& name);
// Copies a model folder into the cache as `name` (default: the folder's name); the folder
// must load as a GenAI or embedding config; an existing name is an error.
Result<CachedModel> add_cached_model(const std::string& cache_dir, const std::string& source_dir, std::string name);
Status remove_cached_model(const std::string& cache_dir, const std::string& name);

}  // namespace xonnx::serve
