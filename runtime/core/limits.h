// The default resource limits the loader and the session apply to untrusted models (see
// LoadOptions and SessionOptions, which document each limit, and docs/security.md).
#pragma once

#include <cstdint>
#include <string>

namespace xonnx {

// Physical memory of this machine in bytes (0 when the OS does not say).
int64_t physical_memory_bytes();
// The default memory cap: half the physical memory (4 GiB when it is unknown).
int64_t default_memory_cap();
// "3.0 GiB (3221225472 bytes)"-style text for limit messages; negative: "more than int64".
std::string describe_bytes(int64_t bytes);

}  // namespace xonnx
