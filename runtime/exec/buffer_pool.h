// BufferPool: the session's tensor memory. Intermediate tensors take their storage from here
// and give it back when their last reference drops (the executor frees values after their
// last reader), so after the first runs at a given set of shapes every request is served by a
// buffer the same request used before: run() then makes no heap allocation, and the memory
// held stays close to the peak of simultaneously live tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace xonnx {

class BufferPool {
 public:
  // `max_bytes`: the most the pool may hold (the session's memory cap).
  explicit BufferPool(int64_t max_bytes = INT64_MAX) : max_bytes_(max_bytes) {}

  // Storage of at least `bytes`, zero-filled when `zero`. A buffer is free again when nothing
  // but the pool holds it (tensors share storage through shared_ptr).
  Result<std::shared_ptr<Storage>> acquire(size_t bytes, bool zero);

  // Brackets one top-level run: buffers no request used during the run (left over from other
  // shapes) are released at its end.
  void begin_run() { ++epoch_; }
  void end_run();

  // Returns the resident memory of the free buffers to the OS (Storage::discard) but keeps
  // them, so the next run still allocates nothing; what it writes faults in again. For a
  // session that goes idle. Returns the bytes of the buffers discarded.
  size_t discard_free();

  // Whether `storage` is one of the pool's buffers (not a caller's or an initializer's).
  bool holds(const Storage& storage) const;

  size_t bytes_held() const { return bytes_held_; }
  size_t buffers() const { return entries_.size(); }

 private:
  struct Entry {
    std::shared_ptr<Storage> storage;
    uint64_t epoch = 0;  // the last run that used it
  };
  void release_free();  // drops every buffer nobody but the pool holds
  std::vector<Entry> entries_;
  size_t bytes_held_ = 0;
  uint64_t epoch_ = 0;
  int64_t max_bytes_;
};

}  // namespace xonnx
