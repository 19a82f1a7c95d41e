// Tensor: element type + shape + shared storage. Storage is either owned (64-byte aligned,
// zero-filled), a view into memory someone else keeps alive (the model's mmap), so aligned
// weights are never copied, or a copy of misaligned model bytes made on first access.
// Tensors are cheap to copy; copies share storage.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/dtype.h"
#include "runtime/core/shape.h"
#include "runtime/core/status.h"

namespace xonnx {

// Shape is a small vector (runtime/core/shape.h).

// Number of elements of `shape`, or -1 on a negative dim or int64 overflow.
int64_t shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);

class Storage {
 public:
  // Owned, aligned, zero-filled. Returns nullptr only if the allocation fails. From 256 KiB on
  // the block is the OS's zero pages: they become resident when first written (discard()).
  static std::shared_ptr<Storage> allocate(size_t bytes);
  // A view: `data` stays valid as long as `keepalive` is held. `file_backed`: the bytes lie in
  // a read-only private file mapping, so drop_resident() may return their pages to the OS.
  static std::shared_ptr<Storage> view(const void* data, size_t bytes, std::shared_ptr<const void> keepalive,
                                       bool file_backed = false);
  // An aligned copy of `bytes` at `src` (kept alive by `keepalive`), made on first access:
  // for model bytes too misaligned to view in place. drop_resident() frees the copy again.
  // `file_backed`: as for view(); the source pages are dropped once copied.
  static std::shared_ptr<Storage> copy_on_access(const void* src, size_t bytes, std::shared_ptr<const void> keepalive,
                                                 bool file_backed = false);
  // Bytes a function makes: fill(offset, n, dst) writes bytes [offset, offset + n), any range,
  // from any thread. For constants a graph pass computes from others (a permuted weight): as a
  // copy-on-access storage, the copy is made on first data() and dropped like one, and read()
  // calls fill without making it, so kernels that pack the weight never hold it whole. `fill`
  // keeps what it reads alive. `reads`: the storage fill reads, if one; drop_resident() also
  // returns its file pages (only those: other holders may read it meanwhile).
  using FillFn = std::function<void(size_t offset, size_t n, void* dst)>;
  static std::shared_ptr<Storage> derived(size_t bytes, FillFn fill, std::shared_ptr<const Storage> reads = nullptr);
  // A derived storage of `count` floats a function makes: fill(first, n, out) writes floats
  // [first, first + n) to out, n at most kDerivedFloatsPiece; the byte ranges readers ask for
  // (any offset, any length) are mapped onto whole floats here.
  static constexpr size_t kDerivedFloatsPiece = 4096;
  using FloatsFillFn = std::function<void(size_t first, size_t n, float* out)>;
  static std::shared_ptr<Storage> derived_floats(size_t count, FloatsFillFn fill,
                                                 std::shared_ptr<const Storage> reads = nullptr);
  // Storage for `count` std::string elements.
  static std::shared_ptr<Storage> strings(size_t count);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // A copy-on-access storage copies here; it throws std::bad_alloc if that allocation fails.
  void* data() const {
    void* p = data_.load(std::memory_order_acquire);
    return p || !source_ ? p : materialize();
  }
  size_t bytes() const { return bytes_; }
  // False only for a copy-on-access storage whose copy is not made yet or was dropped.
  bool resident() const { return !source_ || data_.load(std::memory_order_acquire) != nullptr; }
  bool is_view() const { return keepalive_ != nullptr; }
  std::vector<std::string>& string_data() { return strings_; }
  const std::vector<std::string>& string_data() const { return strings_; }

  // Returns the resident memory of model bytes nobody reads for now (weights the kernels have
  // packed); the contents stay readable. A file view drops its pages (the next read faults
  // them in from the file); a copy-on-access storage frees its copy, so the caller must be
  // its only holder: a pointer from an earlier data() dangles afterwards. Other kinds: no-op.
  void drop_resident();
  // Returns the resident memory of bytes [offset, offset + n) of an owned storage of 256 KiB
  // or more to the OS, keeping the block: those bytes read as zeros afterwards and take memory
  // again when written (an idle buffer, the unused end of a KV cache row). Whole pages only:
  // a partly covered first or last page keeps its bytes. Other kinds: no-op.
  void discard(size_t offset, size_t n);
  // Copies bytes [offset, offset + n) into dst. A copy-on-access storage without its copy reads
  // its source instead of making the copy: a packing kernel reads its weights once this way.
  void read(size_t offset, size_t n, void* dst) const;

 private:
  struct Source;  // where a copy-on-access storage copies from
  Storage();
  void* materialize() const;
  // madvise(DONTNEED) of the file mapping's pages this storage reads, without freeing anything.
  void drop_file_pages_only() const;
  mutable std::atomic<void*> data_{nullptr};
  size_t bytes_ = 0;
  bool owned_ = false;
  bool file_backed_ = false;
  std::shared_ptr<const void> keepalive_;
  std::unique_ptr<Source> source_;
  std::vector<std::string> strings_;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: an absent optional input or output
  Tensor(DataType dtype, Shape shape, std::shared_ptr<Storage> storage, size_t byte_offset = 0)
      : dtype_(dtype), shape_(std::move(shape)), storage_(std::move(storage)), offset_(byte_offset) {}

  // Allocates a zero-filled tensor; fails on negative dims, overflow or allocation failure.
  static Result<Tensor> allocate(DataType dtype, Shape shape);
  // Scalar and 1-D helpers for tests and shape-computing kernels.
  template <typename T>
  static Tensor from_vector(const std::vector<T>& values, Shape shape);
  template <typename T>
  static Tensor scalar(T value) {
    return from_vector<T>({value}, {});
  }

  bool defined() const { return dtype_ != DataType::kUndefined; }
  DataType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  size_t rank() const { return shape_.size(); }
  int64_t dim(size_t i) const { return shape_[i]; }
  int64_t numel() const { return shape_numel(shape_); }
  // Bytes of element data (packed for sub-byte types; 0 for strings).
  size_t nbytes() const { return static_cast<size_t>(dtype_storage_bytes(dtype_, numel())); }

  void* raw_data() { return storage_ ? static_cast<char*>(storage_->data()) + offset_ : nullptr; }
  const void* raw_data() const { return storage_ ? static_cast<const char*>(storage_->data()) + offset_ : nullptr; }
  template <typename T>
  T* data() {
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }
  std::string* string_data() { return storage_->string_data().data() + offset_; }
  const std::string* string_data() const { return storage_->string_data().data() + offset_; }

  const std::shared_ptr<Storage>& storage() const { return storage_; }
  size_t byte_offset() const { return offset_; }  // into storage(); elements for strings
  bool is_view_of_external_memory() const { return storage_ && storage_->is_view(); }

  // Same storage, new shape (caller guarantees equal numel).
  Tensor reshaped(Shape shape) const { return Tensor(dtype_, std::move(shape), storage_, offset_); }
  // Deep copy into owned storage.
  Result<Tensor> clone() const;
  // Copies n bytes of element data from byte `offset` into dst (Storage::read: no copy of a
  // misaligned initializer is made for it). The range must lie inside the tensor.
  void read_bytes(size_t offset, size_t n, void* dst) const { storage_->read(offset_ + offset, n, dst); }

  // Element i converted to double / int64 (any numeric or bool type, incl. fp16/fp8/int4).
  double get_as_double(int64_t i) const;
  int64_t get_as_int64(int64_t i) const;
  // Whole tensor as int64 values (shape/axes inputs). Fails for non-integer types.
  Result<std::vector<int64_t>> to_int64_vector() const;

 private:
  DataType dtype_ = DataType::kUndefined;
  Shape shape_;
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes; for string tensors: elements
};

template <typename T>
Tensor Tensor::from_vector(const std::vector<T>& values, Shape shape) {
  constexpr DataType dt = DataTypeOf<T>::value;
  if constexpr (std::is_same_v<T, std::string>) {
    auto storage = Storage::strings(values.size());
    storage->string_data() = values;
    return Tensor(dt, std::move(shape), std::move(storage));
  } else {
    auto storage = Storage::allocate(values.size() * sizeof(T));
    T* out = static_cast<T*>(storage->data());
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return Tensor(dt, std::move(shape), std::move(storage));
  }
}

// Sub-byte element access (int4/uint4/float4e2m1 two per byte, int2/uint2 four per byte).
uint8_t subbyte_get(const void* data, DataType dtype, int64_t index);  // raw code bits
void subbyte_set(void* data, DataType dtype, int64_t index, uint8_t code);

}  // namespace xonnx
