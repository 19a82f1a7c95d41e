#include "sdk/serve/model_registry.h"

#include <sys/stat.h>

#include <algorithm>
#include <utility>

namespace xonnx::serve {

ModelRegistry::ModelRegistry(BackendLoader loader, std::chrono::milliseconds keep_alive)
    : loader_(std::move(loader)), keep_alive_(keep_alive) {}

ModelRegistry::~ModelRegistry() { unload_all(); }

Status ModelRegistry::add(const std::string& name, const std::string& dir) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (entries_.count(name)) return invalid_argument("model name '", name, "' is given twice (", dir, ")");
  Entry e;
  e.dir = dir;
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) e.created = static_cast<int64_t>(st.st_mtime);
  e.last_used = std::chrono::steady_clock::now();
  entries_.emplace(name, std::move(e));
  order_.push_back(name);
  return Status::ok();
}

bool ModelRegistry::contains(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.count(name) != 0;
}

Result<std::shared_ptr<ModelBackend>> ModelRegistry::acquire(const std::string& name) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = entries_.find(name);
  if (it == entries_.end()) return not_found("The model '", name, "' does not exist");
  Entry& e = it->second;
  loaded_.wait(lock, [&] { return !e.loading; });
  e.last_used = std::chrono::steady_clock::now();
  if (e.backend) return e.backend;
  e.loading = true;
  const std::string dir = e.dir;
  lock.unlock();
  auto loaded = loader_(dir);  // slow: outside the lock, so other models stay usable
  lock.lock();
  e.loading = false;
  loaded_.notify_all();
  if (!loaded.is_ok()) {
    e.last_error = loaded.status().message();
    return loaded.status();
  }
  e.last_error.clear();
  e.backend = std::shared_ptr<ModelBackend>(std::move(loaded.value()));
  e.last_used = std::chrono::steady_clock::now();
  unloader_.notify_all();
  return e.backend;
}

void ModelRegistry::touch(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(name);
  if (it != entries_.end()) it->second.last_used = std::chrono::steady_clock::now();
  unloader_.notify_all();
}

void ModelRegistry::run_unloader() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!unloader_stop_) {
    // The earliest deadline of a loaded model. One still held by a request has none of its own
    // (its touch() at the end wakes us), but is looked at again after keep_alive (at least 1 s)
    // in case the request let go of it after touching.
    Clock::time_point next = Clock::time_point::max();
    if (keep_alive_.count() >= 0) {
      const auto now = Clock::now();
      for (const auto& [name, e] : entries_) {
        if (!e.backend) continue;
        const bool held = e.backend.use_count() > 1;
        const auto deadline = held ? now + std::max<std::chrono::milliseconds>(keep_alive_, std::chrono::seconds(1))
                                   : e.last_used + keep_alive_;
        next = std::min(next, deadline);
      }
    }
    if (next == Clock::time_point::max()) {
      unloader_.wait(lock);
    } else {
      unloader_.wait_until(lock, next);
    }
    if (unloader_stop_) break;
    ++unloader_wakeups_;
    lock.unlock();
    unload_idle();
    lock.lock();
  }
}

void ModelRegistry::stop_unloader() {
  std::lock_guard<std::mutex> lock(mutex_);
  unloader_stop_ = true;
  unloader_.notify_all();
}

uint64_t ModelRegistry::unloader_wakeups() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return unloader_wakeups_;
}

int ModelRegistry::unload_idle() {
  if (keep_alive_.count() < 0) return 0;
  std::vector<std::shared_ptr<ModelBackend>> dropped;  // destroyed outside the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (auto& [name, e] : entries_) {
      if (e.backend && e.backend.use_count() == 1 && now - e.last_used >= keep_alive_) {
        dropped.push_back(std::move(e.backend));
        e.backend.reset();
      }
    }
  }
  return static_cast<int>(dropped.size());
}

void ModelRegistry::unload_all() {
  std::vector<std::shared_ptr<ModelBackend>> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [name, e] : entries_) {
      if (e.backend) dropped.push_back(std::move(e.backend));
      e.backend.reset();
    }
  }
}

std::vector<ModelStatus> ModelRegistry::list() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ModelStatus> out;
  for (const std::string& name : order_) {
    const Entry& e = entries_.at(name);
    out.push_back({name, e.dir, e.backend != nullptr, e.loading, e.created, e.last_error, e.backend});
  }
  return out;
}

bool ModelRegistry::loading() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [name, e] : entries_) {
    if (e.loading) return true;
  }
  return false;
}

std::string ModelRegistry::first_name() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return order_.empty() ? std::string() : order_.front();
}

}  // namespace xonnx::serve
