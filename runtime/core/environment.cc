#include "runtime/core/environment.h"

#include <cstdlib>

namespace xonnx {
namespace {

std::string read(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_one(const char* name) { return read(name) == "1"; }

}  // namespace

KernelOverrides kernel_overrides() {
  KernelOverrides o;
  o.disable_xnnpack = is_one("XONNX_DISABLE_XNNPACK");
  o.disable_optimized = o.disable_xnnpack || is_one("XONNX_DISABLE_OPTIMIZED");
  return o;
}

std::string optimized_isa_cap() { return read("XONNX_OPT_ISA"); }

std::string models_folder_override() { return read("XONNX_MODELS"); }

}  // namespace xonnx
