// xonnx_fuzz_replay TARGET FILE_OR_FOLDER...: runs each file (every file of a folder) through
// the named fuzz target once, as libFuzzer does with files on its command line, without
// libFuzzer: the bad-models ctest replays every input a fuzzer ever crashed on in any build.
// TARGET "all" runs each file through every target; "by-folder" takes each subfolder of the
// folders given as the name of the target its files are for (tests/bad_genai/chat_template/...).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.h"

int fuzz_load_model(const uint8_t* data, size_t size);
int fuzz_tensor_readers(const uint8_t* data, size_t size);
int fuzz_session_run(const uint8_t* data, size_t size);
int fuzz_convert(const uint8_t* data, size_t size);
int fuzz_chat_template(const uint8_t* data, size_t size);
int fuzz_tokenizer(const uint8_t* data, size_t size);
int fuzz_genai_config(const uint8_t* data, size_t size);
int fuzz_serve_request(const uint8_t* data, size_t size);

namespace {

struct Target {
  const char* name;
  int (*fn)(const uint8_t*, size_t);
};
const Target kTargets[] = {
    {"load_model", fuzz_load_model},     {"tensor_readers", fuzz_tensor_readers}, {"session_run", fuzz_session_run},
    {"convert", fuzz_convert},           {"chat_template", fuzz_chat_template},   {"tokenizer", fuzz_tokenizer},
    {"genai_config", fuzz_genai_config},
    {"serve_request", fuzz_serve_request},
};

std::vector<std::filesystem::path> files_under(const std::filesystem::path& p) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(p)) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
      if (e.is_regular_file()) files.push_back(e.path());
    }
  } else {
    files.push_back(p);
  }
  return files;
}

const Target* find_target(const std::string& name) {
  for (const Target& t : kTargets) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

void replay(const std::filesystem::path& file, const std::vector<const Target*>& targets) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const Target* t : targets) {
    std::fprintf(stderr, "%s: %s\n", t->name, file.c_str());
    t->fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET|all|by-folder FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  size_t replayed = 0;
  if (std::strcmp(argv[1], "by-folder") == 0) {
    for (int i = 2; i < argc; ++i) {
      for (const auto& sub : std::filesystem::directory_iterator(argv[i])) {
        if (!sub.is_directory()) continue;
        const Target* t = find_target(sub.path().filename().string());
        if (t == nullptr) {
          std::fprintf(stderr, "folder %s names no fuzz target\n", sub.path().c_str());
          return 2;
        }
        for (const auto& f : files_under(sub.path())) replay(f, {t}), ++replayed;
      }
    }
    std::printf("replayed %zu files, each through the target its folder names\n", replayed);
    return 0;
  }
  std::vector<const Target*> targets;
  for (const Target& t : kTargets) {
    if (std::strcmp(argv[1], "all") == 0 || std::strcmp(argv[1], t.name) == 0) targets.push_back(&t);
  }
  if (targets.empty()) {
    std::fprintf(stderr, "unknown fuzz target '%s'\n", argv[1]);
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    for (const auto& f : files_under(argv[i])) replay(f, targets), ++replayed;
  }
  std::printf("replayed %zu files through %zu targets\n", replayed, targets.size());
  return 0;
}
