#include "runtime/core/limits.h"

#include <unistd.h>

#include <cstdio>

namespace xonnx {

int64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page);
}

int64_t default_memory_cap() {
  static const int64_t cap = [] {
    const int64_t ram = physical_memory_bytes();
    return ram > 0 ? ram / 2 : int64_t{4} << 30;
  }();
  return cap;
}

std::string describe_bytes(int64_t bytes) {
  if (bytes < 0) return "more than 2^63 bytes";
  char buf[64];
  if (bytes < (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof buf, "%lld bytes", static_cast<long long>(bytes));
  } else if (bytes < (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof buf, "%.1f MiB (%lld bytes)", static_cast<double>(bytes) / (1 << 20),
                  static_cast<long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f GiB (%lld bytes)", static_cast<double>(bytes) / (1 << 30),
                  static_cast<long long>(bytes));
  }
  return buf;
}

}  // namespace xonnx
