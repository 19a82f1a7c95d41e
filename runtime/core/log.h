// Diagnostics that are not errors (a fast kernel declined a node, a node fell back to its
// reference kernel) go to one process-wide sink the application installs (the C API's
// xonnx_set_log_callback). Without a sink nothing is formatted or printed: the runtime itself
// never writes to stderr.
//
// Thread safety: set_log_sink and log() may be called from any thread; the sink is called with
// a mutex held (one message at a time, never concurrently). A sink must not call set_log_sink.
#pragma once

#include <atomic>
#include <string>
#include <utility>

#include "runtime/core/status.h"

namespace xonnx {

enum class LogLevel : int { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

using LogSink = void (*)(LogLevel level, const char* message, void* user_data);

// Installs `sink` for messages of `min_level` and above (nullptr: no logging, the default).
void set_log_sink(LogSink sink, void* user_data, LogLevel min_level);

namespace detail {
extern std::atomic<int> g_log_min_level;  // past kError while no sink is installed
void emit_log(LogLevel level, const std::string& message);
}  // namespace detail

inline bool log_enabled(LogLevel level) {
  return static_cast<int>(level) >= detail::g_log_min_level.load(std::memory_order_relaxed);
}

// Formats (as the Status helpers do) and sends the message only when a sink takes `level`.
template <typename... Args>
void log(LogLevel level, Args&&... args) {
  if (log_enabled(level)) detail::emit_log(level, detail::concat(std::forward<Args>(args)...));
}

}  // namespace xonnx
