// xonnx_fuzz_replay TARGET FILE_OR_FOLDER...: runs each file (every file of a folder) through
// the named fuzz target once, as libFuzzer does with files on its command line, without
// libFuzzer: the bad-models ctest replays every input a fuzzer ever crashed on in any build.
// TARGET "all" runs each file through every target.
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

namespace {

struct Target {
  const char* name;
  int (*fn)(const uint8_t*, size_t);
};
const Target kTargets[] = {
    {"load_model", fuzz_load_model},
    {"tensor_readers", fuzz_tensor_readers},
    {"session_run", fuzz_session_run},
    {"convert", fuzz_convert},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET|all FILE_OR_FOLDER...\n", argv[0]);
    return 2;
  }
  std::vector<const Target*> targets;
  for (const Target& t : kTargets) {
    if (std::strcmp(argv[1], "all") == 0 || std::strcmp(argv[1], t.name) == 0) targets.push_back(&t);
  }
  if (targets.empty()) {
    std::fprintf(stderr, "unknown fuzz target '%s'\n", argv[1]);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(p);
    }
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const Target* t : targets) {
      std::fprintf(stderr, "%s: %s\n", t->name, f.c_str());
      t->fn(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    }
  }
  std::printf("replayed %zu files through %zu targets\n", files.size(), targets.size());
  return 0;
}
