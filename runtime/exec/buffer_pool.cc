#include "runtime/exec/buffer_pool.h"

#include <cstring>

#include "runtime/core/limits.h"

namespace xonnx {

namespace {
// Requests are rounded up so that slightly different shapes (a growing KV cache) reuse buffers.
size_t round_up(size_t bytes) {
  constexpr size_t kSmall = 64, kLarge = 4096;
  const size_t unit = bytes < 16 * kLarge ? kSmall : kLarge;
  return (bytes + unit - 1) / unit * unit;
}
}  // namespace

Result<std::shared_ptr<Storage>> BufferPool::acquire(size_t bytes, bool zero) {
  // Best fit among free buffers; one more than 4x too large is kept for a larger request.
  Entry* best = nullptr;
  for (Entry& e : entries_) {
    const size_t size = e.storage->bytes();
    if (e.storage.use_count() != 1 || size < bytes || size / 4 > bytes + 4096) continue;
    if (!best || size < best->storage->bytes()) best = &e;
  }
  if (best) {
    best->epoch = epoch_;
    // use_count() is a relaxed load: seeing 1 orders nothing. Copying the pointer is an
    // acquire-release increment of the same count, so whatever the last other holder did
    // before letting go (a caller on another thread reading a run's output) happens before
    // this run writes the buffer again (the memset used to come first).
    std::shared_ptr<Storage> storage = best->storage;
    if (zero) std::memset(storage->data(), 0, bytes);
    return storage;
  }
  const size_t size = round_up(bytes);
  if (bytes_held_ + size > static_cast<size_t>(max_bytes_)) {
    release_free();  // buffers of other shapes nobody holds go first
    if (bytes_held_ + size > static_cast<size_t>(max_bytes_)) {
      return resource_exhausted("a tensor of ", describe_bytes(static_cast<int64_t>(size)), " on top of the ",
                                describe_bytes(static_cast<int64_t>(bytes_held_)),
                                " the run holds would pass the memory cap of ", describe_bytes(max_bytes_),
                                " (max_memory_bytes)");
    }
  }
  auto storage = Storage::allocate(size);  // zero-filled
  if (!storage) return resource_exhausted("out of memory allocating ", size, " bytes");
  entries_.push_back({storage, epoch_});
  bytes_held_ += size;
  return storage;
}

bool BufferPool::holds(const Storage& storage) const {
  for (const Entry& e : entries_)
    if (e.storage.get() == &storage) return true;
  return false;
}

void BufferPool::release_free() {
  size_t kept = 0;
  for (Entry& e : entries_) {
    if (e.storage.use_count() == 1) {
      bytes_held_ -= e.storage->bytes();
      continue;
    }
    entries_[kept++] = std::move(e);
  }
  entries_.resize(kept);
}

void BufferPool::end_run() {
  size_t kept = 0;
  for (Entry& e : entries_) {
    if (e.epoch + 8 < epoch_ && e.storage.use_count() == 1) {
      bytes_held_ -= e.storage->bytes();
      continue;
    }
    entries_[kept++] = std::move(e);
  }
  entries_.resize(kept);
}

size_t BufferPool::discard_free() {
  size_t bytes = 0;
  for (Entry& e : entries_) {
    if (e.storage.use_count() != 1) continue;
    e.storage->discard(0, e.storage->bytes());
    bytes += e.storage->bytes();
  }
  return bytes;
}

}  // namespace xonnx
