#include "sdk/serve/generation.h"

namespace xonnx::serve {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
    case FinishReason::kNone: break;
  }
  return "";
}

TokenCallback EventQueue::callback() {
  std::shared_ptr<EventQueue> self = shared_from_this();
  return [self](const TokenEvent& e) {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->events_.push_back(e);
    self->ready_.notify_one();
  };
}

bool EventQueue::pop(TokenEvent& event, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
  event = std::move(events_.front());
  events_.pop_front();
  return true;
}

TokenEvent EventQueue::pop() {
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.wait(lock, [&] { return !events_.empty(); });
  TokenEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

}  // namespace xonnx::serve
