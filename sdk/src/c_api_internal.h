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

inline xonnx_status* make_status(xonnx_status_code code, std::string message) {
  return new (std::nothrow) xonnx_status{code, std::move(message)};
}

inline xonnx_status* from_status(const Status& s) {
  if (s.is_ok()) return nullptr;
  return make_status(static_cast<xonnx_status_code>(s.code()), s.message());
}

inline xonnx_status* bad_arg(const std::string& message) { return make_status(XONNX_INVALID_ARGUMENT, message); }

template <typename Fn>
xonnx_status* guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return make_status(XONNX_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return make_status(XONNX_INTERNAL, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    return make_status(XONNX_INTERNAL, "unexpected exception");
  }
}

}  // namespace xonnx::capi
