// std::vector whose data starts on a 64-byte boundary (a cache line, one AVX-512 vector), for
// the kernels' packed weights and scratch rows. std::allocator gives malloc's 16 bytes (glibc's
// large blocks start 16 bytes past a page), and every 64-byte load from such a buffer then
// spans two cache lines: the depthwise rows ran 25-40 % slower on a ring 16 bytes off
// (bench/bench_optimized_kernels.cc, BM_FdwConv). Thread safety: as std::vector.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace xonnx {

template <typename T, size_t Align = 64>
struct AlignedAllocator {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = AlignedAllocator<U, Align>;
  };
  AlignedAllocator() noexcept = default;
  template <typename U>
  AlignedAllocator(const AlignedAllocator<U, Align>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(Align))); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t(Align)); }
  template <typename U>
  bool operator==(const AlignedAllocator<U, Align>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const AlignedAllocator<U, Align>&) const noexcept {
    return false;
  }
};

template <typename T>
using AlignedVector = std::vector<T, AlignedAllocator<T>>;

}  // namespace xonnx
