#include "runtime/core/cpu_features.h"

#include <cstring>

#if defined(__arm__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace xonnx {

bool cpu_has(const char* isa) {
  if (std::strcmp(isa, "generic") == 0) return true;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
  // libgcc's cpuid reading also checks XGETBV: the OS saves the AVX / AVX-512 registers.
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  if (std::strcmp(isa, "avx2") == 0) return avx2;
  if (std::strcmp(isa, "avx512") == 0) return avx512;
  if (std::strcmp(isa, "avx512vnni") == 0) return avx512 && __builtin_cpu_supports("avx512vnni");
#elif defined(__aarch64__)
  if (std::strcmp(isa, "neon") == 0) return true;  // Advanced SIMD is part of ARMv8-A
#elif defined(__arm__) && defined(__linux__)
  if (std::strcmp(isa, "neon") == 0) {
    const unsigned long hwcap = getauxval(AT_HWCAP);
    return (hwcap & HWCAP_NEON) && (hwcap & HWCAP_VFPv4);
  }
#endif
  return false;
}

}  // namespace xonnx
