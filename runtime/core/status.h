// Errors as values: every fallible runtime call returns Status or Result<T>.
// Messages name what is wrong and where (node, op, value, file); no exceptions cross the API.
#pragma once

#include <cassert>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace xonnx {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,    // caller passed something wrong (shape, type, name)
  kInvalidModel = 2,       // the model file is malformed or inconsistent
  kUnsupported = 3,        // valid ONNX we do not implement (op, opset, type)
  kNotFound = 4,           // file or name does not exist
  kIo = 5,                 // OS-level read/map failure
  kResourceExhausted = 6,  // memory cap exceeded
  kInternal = 7,           // a bug in xonnx
  kCancelled = 8,          // the run was cancelled or passed its deadline
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

  // Prefixes context (e.g. "node 'conv1' (Conv): ") to an error; no-op on success.
  Status with_context(const std::string& prefix) const {
    if (is_ok()) return *this;
    return Status(code_, prefix + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                                     // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.is_ok()); }  // NOLINT

  bool is_ok() const { return status_.is_ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    assert(is_ok());
    return *value_;
  }
  const T& value() const& {
    assert(is_ok());
    return *value_;
  }
  T&& value() && {
    assert(is_ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

namespace detail {
// Message pieces appended as std::ostream would print them (numbers as "%g" / decimal, bool as
// 0 / 1), without <sstream>: streams pull libstdc++'s locale machinery (~0.35 MB) into a
// statically linked application.
inline void append(std::string& out, std::string_view text) { out.append(text.data(), text.size()); }
inline void append(std::string& out, const char* text) { out.append(text ? text : "(null)"); }
inline void append(std::string& out, char c) { out.push_back(c); }
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
void append(std::string& out, T value) {
  char buffer[32];
  if constexpr (std::is_floating_point_v<T>) {
    std::snprintf(buffer, sizeof(buffer), "%g", static_cast<double>(value));
  } else if constexpr (std::is_signed_v<T>) {
    std::snprintf(buffer, sizeof(buffer), "%lld", static_cast<long long>(value));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%llu", static_cast<unsigned long long>(value));
  }
  out.append(buffer);
}

template <typename... Args>
std::string concat(Args&&... args) {
  std::string out;
  (append(out, std::forward<Args>(args)), ...);
  return out;
}
}  // namespace detail

template <typename... Args>
Status invalid_argument(Args&&... args) {
  return Status(StatusCode::kInvalidArgument, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
Status invalid_model(Args&&... args) {
  return Status(StatusCode::kInvalidModel, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
Status unsupported(Args&&... args) {
  return Status(StatusCode::kUnsupported, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
Status not_found(Args&&... args) {
  return Status(StatusCode::kNotFound, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
Status io_error(Args&&... args) {
  return Status(StatusCode::kIo, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
Status resource_exhausted(Args&&... args) {
  return Status(StatusCode::kResourceExhausted, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
Status cancelled(Args&&... args) {
  return Status(StatusCode::kCancelled, detail::concat(std::forward<Args>(args)...));
}
template <typename... Args>
Status internal_error(Args&&... args) {
  return Status(StatusCode::kInternal, detail::concat(std::forward<Args>(args)...));
}

}  // namespace xonnx

#define XONNX_CONCAT_INNER(a, b) a##b
#define XONNX_CONCAT(a, b) XONNX_CONCAT_INNER(a, b)

#define XONNX_RETURN_IF_ERROR(expr)                   \
  do {                                                \
    ::xonnx::Status xonnx_status_ = (expr);           \
    if (!xonnx_status_.is_ok()) return xonnx_status_; \
  } while (0)

#define XONNX_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.is_ok()) return tmp.status();            \
  lhs = std::move(tmp).value()

// XONNX_ASSIGN_OR_RETURN(auto x, compute()); declares x or returns the error.
#define XONNX_ASSIGN_OR_RETURN(lhs, expr) XONNX_ASSIGN_OR_RETURN_IMPL(XONNX_CONCAT(xonnx_result_, __LINE__), lhs, expr)
