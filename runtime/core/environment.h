// Every XONNX_* environment variable xonnx reads is read here and nowhere else, so this file is
// the one list of them (docs/architecture.md, "Environment variables"). Each function reads the
// environment when called: tests set a variable between sessions. Thread safety: as getenv.
#pragma once

#include <string>

namespace xonnx {

// Kernel-family switches read when a session is created; they add to SessionOptions.
struct KernelOverrides {
  bool disable_xnnpack = false;    // XONNX_DISABLE_XNNPACK=1: reference kernels only (sets both)
  bool disable_optimized = false;  // XONNX_DISABLE_OPTIMIZED=1: no own fast kernels
};
KernelOverrides kernel_overrides();

// XONNX_OPT_ISA=generic|avx2|avx512|neon: the best own-kernel table allowed ("" = any); read
// once, when the table is chosen.
std::string optimized_isa_cap();

// XONNX_MODELS: the model cache folder of `xonnx models` / `xonnx serve` ("" when unset).
std::string models_folder_override();

}  // namespace xonnx
