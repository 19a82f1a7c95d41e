// --max-memory and --deadline: the session limits of `run`, `bench` and `info`
// (SessionOptions::load.max_memory_bytes and run_timeout_seconds; docs/cli.md).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "runtime/exec/session.h"

namespace xonnx {
namespace cli {

struct LimitFlags {
  std::string max_memory;  // BYTES, NNKiB, NNMiB or NNGiB; empty: the default cap
  double deadline_s = 0;   // 0: none
};

// `with_deadline`: also --deadline (commands that run the model).
void add_limit_flags(CLI::App* sub, LimitFlags& flags, bool with_deadline = true);
// Parses "1073741824", "512MiB", "2GiB" (also KiB); fails naming the flag on anything else.
Result<int64_t> parse_byte_size(const std::string& text);
// Applies the flags to `options`; fails (exit code 2) on a malformed --max-memory.
Status apply_limit_flags(const LimitFlags& flags, SessionOptions& options);

}  // namespace cli
}  // namespace xonnx
