// What the C API's translation units share: the status object and the guard that keeps C++
// exceptions from crossing the API.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "runtime/core/status.h"
#include "xonnx/xonnx.h"

struct xonnx_status {
  xonnx_status_code code;
  std::string message;
};

namespace xonnx::capi {

// Returned when the error object itself cannot be allocated: an error must never read as
// success (NULL). Built before main(), not on first use (that would allocate when memory is
// gone); xonnx_status_release leaves it alone.
inline xonnx_status g_out_of_memory{XONNX_RESOURCE_EXHAUSTED, "out of memory (while reporting an error)"};
inline xonnx_status* out_of_memory() noexcept { return &g_out_of_memory; }

inline xonnx_status* make_status(xonnx_status_code code, std::string message) noexcept {
  xonnx_status* status = new (std::nothrow) xonnx_status{code, std::move(message)};
  return status ? status : out_of_memory();
}

inline xonnx_status* from_status(const Status& s) {
  if (s.is_ok()) return nullptr;
  return make_status(static_cast<xonnx_status_code>(s.code()), s.message());
}

inline xonnx_status* bad_arg(const std::string& message) { return make_status(XONNX_INVALID_ARGUMENT, message); }

// Every entry point that returns a status runs inside this: building a message may throw too.
template <typename Fn>
xonnx_status* guarded(Fn&& fn) noexcept {
  try {
    try {
      return fn();
    } catch (const std::bad_alloc&) {
      return out_of_memory();
    } catch (const std::exception& e) {
      return make_status(XONNX_INTERNAL, std::string("unexpected exception: ") + e.what());
    } catch (...) {
      return make_status(XONNX_INTERNAL, "unexpected exception");
    }
  } catch (...) {  // the message of the error above could not be built
    return out_of_memory();
  }
}

}  // namespace xonnx::capi
