#include "sdk/cli/limit_flags.h"

#include <cctype>

#include "runtime/core/checked.h"

namespace xonnx {
namespace cli {

void add_limit_flags(CLI::App* sub, LimitFlags& flags, bool with_deadline) {
  sub->add_option("--max-memory", flags.max_memory,
                  "Memory cap: BYTES or NN{KiB,MiB,GiB} (default: half the physical memory); a model or "
                  "input that needs more fails with an error naming what needed it");
  if (with_deadline) {
    sub->add_option("--deadline", flags.deadline_s, "Seconds one run may take (default: no limit)")
        ->check(CLI::NonNegativeNumber);
  }
}

Result<int64_t> parse_byte_size(const std::string& text) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const std::string unit = text.substr(digits);
  int64_t scale = 0;
  if (unit.empty())
    scale = 1;
  else if (unit == "KiB")
    scale = int64_t{1} << 10;
  else if (unit == "MiB")
    scale = int64_t{1} << 20;
  else if (unit == "GiB")
    scale = int64_t{1} << 30;
  if (digits == 0 || digits > 18 || scale == 0) {
    return invalid_argument("--max-memory '", text, "': expected BYTES or a number with KiB, MiB or GiB");
  }
  const int64_t bytes = checked_mul(std::stoll(text.substr(0, digits)), scale);
  if (bytes <= 0) return invalid_argument("--max-memory '", text, "' must be positive and below 2^63 bytes");
  return bytes;
}

Status apply_limit_flags(const LimitFlags& flags, SessionOptions& options) {
  if (!flags.max_memory.empty()) {
    XONNX_ASSIGN_OR_RETURN(options.load.max_memory_bytes, parse_byte_size(flags.max_memory));
  }
  options.run_timeout_seconds = flags.deadline_s;
  return Status::ok();
}

}  // namespace cli
}  // namespace xonnx
