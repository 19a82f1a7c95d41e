#include "sdk/serve/model_cache.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "runtime/core/environment.h"
#include "sdk/genai/genai_config.h"
#include "sdk/serve/embedding_model.h"

namespace xonnx::serve {

namespace fs = std::filesystem;

namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

bool is_model_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "genai_config.json", ec) || is_embedding_model_dir(dir.string());
}

Result<CachedModel> describe(const fs::path& dir) {
  CachedModel m;
  m.name = dir.filename().string();
  m.path = dir.string();
  if (is_embedding_model_dir(dir.string())) {
    auto config = load_embedding_config(dir.string());
    if (!config.is_ok()) return config.status();
    m.type = "embedding";
    m.context_length = config.value().max_tokens;
  } else {
    auto config = genai::load_genai_config(dir.string());
    if (!config.is_ok()) return config.status();
    m.type = config.value().type;
    m.context_length = config.value().context_length;
    m.vocab_size = config.value().vocab_size;
    m.layers = config.value().decoder.num_hidden_layers;
  }
  std::error_code ec;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec)) m.bytes += static_cast<int64_t>(entry.file_size(ec));
  }
  return m;
}

}  // namespace

std::string model_cache_dir() {
  if (std::string dir = models_folder_override(); !dir.empty()) return dir;
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data) return std::string(data) + "/xonnx/models";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.local/share/xonnx/models";
}

Result<std::vector<CachedModel>> list_cached_models(const std::string& cache_dir) {
  std::vector<CachedModel> models;
  std::error_code ec;
  if (!fs::is_directory(cache_dir, ec)) return models;
  for (const auto& entry : fs::directory_iterator(cache_dir, ec)) {
    if (!entry.is_directory(ec) || !is_model_dir(entry.path())) continue;
    auto m = describe(entry.path());
    if (m.is_ok()) models.push_back(std::move(m.value()));
  }
  if (ec) return io_error("cannot read the model cache ", cache_dir, ": ", ec.message());
  std::sort(models.begin(), models.end(), [](const CachedModel& a, const CachedModel& b) { return a.name < b.name; });
  return models;
}

Result<CachedModel> find_cached_model(const std::string& cache_dir, const std::string& name) {
  if (!valid_name(name)) return invalid_argument("'", name, "' is not a model name (letters, digits, - _ .)");
  const fs::path dir = fs::path(cache_dir) / name;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return not_found("no model '", name, "' in the cache ", cache_dir);
  return describe(dir);
}

Result<CachedModel> add_cached_model(const std::string& cache_dir, const std::string& source_dir, std::string name) {
  fs::path source = fs::path(source_dir).lexically_normal();
  if (source.filename().empty()) source = source.parent_path();
  if (name.empty()) name = source.filename().string();
  if (!valid_name(name))
    return invalid_argument("'", name, "' is not a model name (letters, digits, - _ .); give --name");
  if (is_embedding_model_dir(source.string())) {
    auto config = load_embedding_config(source.string());
    if (!config.is_ok()) return config.status();
  } else {
    auto config = genai::load_genai_config(source.string());
    if (!config.is_ok()) return config.status();
  }
  const fs::path target = fs::path(cache_dir) / name;
  std::error_code ec;
  if (fs::exists(target, ec))
    return invalid_argument("the cache has a model '", name, "' already (", target.string(), ")");
  fs::create_directories(cache_dir, ec);
  if (ec) return io_error("cannot create ", cache_dir, ": ", ec.message());
  // Copied under a temporary name and renamed, so that an interrupted copy is never listed.
  const fs::path partial = fs::path(cache_dir) / ("." + name + ".partial");
  fs::remove_all(partial, ec);
  fs::copy(source, partial, fs::copy_options::recursive, ec);
  if (!ec) fs::rename(partial, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    return io_error("cannot copy ", source.string(), " to ", target.string(), ": ", ec.message());
  }
  return describe(target);
}

Status remove_cached_model(const std::string& cache_dir, const std::string& name) {
  auto found = find_cached_model(cache_dir, name);
  if (!found.is_ok()) return found.status();
  std::error_code ec;
  fs::remove_all(found.value().path, ec);
  if (ec) return io_error("cannot remove ", found.value().path, ": ", ec.message());
  return Status::ok();
}

}  // namespace xonnx::serve
