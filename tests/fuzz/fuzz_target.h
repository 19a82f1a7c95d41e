// One fuzz target: a function from bytes to "handled" that must never crash, hang, leak or
// read out of bounds whatever the bytes. Built twice: as a libFuzzer binary per target
// (XONNX_LIBFUZZER, the sanitize preset) and, without libFuzzer, into xonnx_fuzz_replay, which
// runs files through every target (the bad-models ctest: each crash found becomes a file).
#pragma once

#include <cstddef>
#include <cstdint>

// Limits that keep one input cheap: a fuzzer input may legitimately describe a huge tensor,
// and the memory cap turns that into an error instead of an allocation.
namespace xonnx {
namespace fuzz {
constexpr int64_t kMaxTensorBytes = int64_t{64} << 20;
}  // namespace fuzz
}  // namespace xonnx

#ifdef XONNX_LIBFUZZER
#define XONNX_FUZZ_TARGET(name)                                                                        \
  int name(const uint8_t* data, size_t size);                                                          \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return name(data, size); } \
  int name(const uint8_t* data, size_t size)
#else
#define XONNX_FUZZ_TARGET(name) int name(const uint8_t* data, size_t size)
#endif
