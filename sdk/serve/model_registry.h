// The models a server offers, by name, loaded on first use and unloaded after an idle time.
//
// A model is loaded by the first acquire() of its name (others asking meanwhile wait for the
// same load) and stays loaded while any request holds the returned shared_ptr; when none has
// for `keep_alive`, unload_idle() drops it (the server's keep-alive thread runs
// run_unloader(), which sleeps until the next model's idle time runs out). keep_alive < 0
// keeps models forever, 0 unloads as soon as the last request ends.
//
// Thread-safe: all methods may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "sdk/serve/model_backend.h"

namespace xonnx::serve {

using BackendLoader = std::function<Result<std::unique_ptr<ModelBackend>>(const std::string& dir)>;

struct ModelStatus {
  std::string name, dir;
  bool loaded = false, loading = false;
  int64_t created = 0;                    // the folder's modification time (Unix seconds), for /v1/models
  std::string last_error;                 // the last load's error, if it failed
  std::shared_ptr<ModelBackend> backend;  // when loaded (for stats)
};

class ModelRegistry {
 public:
  ModelRegistry(BackendLoader loader, std::chrono::milliseconds keep_alive);
  ~ModelRegistry();

  // Offers the model folder `dir` as `name`; a name taken already is an error.
  Status add(const std::string& name, const std::string& dir);
  bool contains(const std::string& name) const;
  // The loaded model (loading it first if needed). kNotFound for an unknown name; a failed
  // load returns the loader's error (and the next acquire tries again).
  Result<std::shared_ptr<ModelBackend>> acquire(const std::string& name);
  // Marks the model used now (a request ended), for the idle clock.
  void touch(const std::string& name);
  // Unloads models nobody holds that have been idle for keep_alive; returns how many.
  int unload_idle();
  // Drops every loaded model (shutdown): their engines cancel what runs.
  void unload_all();
  // The keep-alive loop (one thread): sleeps until the earliest idle deadline of a loaded model
  // (indefinitely while none is loaded or keep_alive < 0; a load or a touch() wakes it), runs
  // unload_idle(), and returns once stop_unloader() was called. It does not poll, so an idle
  // server spends no CPU on it; unloader_wakeups() counts its wake-ups (for /metrics, tests).
  void run_unloader();
  void stop_unloader();
  uint64_t unloader_wakeups() const;
  std::vector<ModelStatus> list() const;
  bool loading() const;
  // The first name (the default model when a request's model is empty).
  std::string first_name() const;

 private:
  struct Entry {
    std::string dir;
    int64_t created = 0;
    std::shared_ptr<ModelBackend> backend;
    bool loading = false;
    std::string last_error;
    std::chrono::steady_clock::time_point last_used;
  };
  BackendLoader loader_;
  std::chrono::milliseconds keep_alive_;
  mutable std::mutex mutex_;
  std::condition_variable loaded_;
  std::condition_variable unloader_;  // a model was loaded or released, or stop_unloader()
  bool unloader_stop_ = false;
  uint64_t unloader_wakeups_ = 0;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> order_;
};

}  // namespace xonnx::serve
