// The instruction sets this CPU and OS support, for choosing kernel tables. Detected with the
// compiler's and the kernel's own means (cpuid via __builtin_cpu_supports, the auxiliary
// vector's HWCAP), so the runtime needs no cpuinfo library: a build without XNNPACK
// (XONNX_WITH_XNNPACK=OFF) links no third-party library at all. Thread-safe.
#pragma once

namespace xonnx {

// "avx2" (with FMA3), "avx512" (F, BW, DQ, VL, with AVX2 and FMA3), "avx512vnni" (also VNNI),
// "neon" (aarch64 always; armv7 NEON with VFPv4 FMA) or "generic" (always true). Unknown
// names and instruction sets of other architectures are false.
bool cpu_has(const char* isa);

}  // namespace xonnx
