#include "runtime/core/log.h"

#include <mutex>

namespace xonnx {

namespace {

constexpr int kNoSink = static_cast<int>(LogLevel::kError) + 1;

std::mutex& sink_mutex() {
  static std::mutex mutex;
  return mutex;
}
LogSink g_sink = nullptr;  // guarded by sink_mutex()
void* g_user_data = nullptr;

}  // namespace

namespace detail {

std::atomic<int> g_log_min_level{kNoSink};

void emit_log(LogLevel level, const std::string& message) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  if (g_sink && static_cast<int>(level) >= g_log_min_level.load(std::memory_order_relaxed)) {
    g_sink(level, message.c_str(), g_user_data);
  }
}

}  // namespace detail

void set_log_sink(LogSink sink, void* user_data, LogLevel min_level) {
  std::lock_guard<std::mutex> lock(sink_mutex());
  g_sink = sink;
  g_user_data = user_data;
  detail::g_log_min_level.store(sink ? static_cast<int>(min_level) : kNoSink, std::memory_order_relaxed);
}

}  // namespace xonnx
