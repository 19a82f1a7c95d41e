// std::vector whose data starts on a 64-byte boundary (a cache line, one AVX-512 vector), for
// the kernels' packed weights and scratch rows. std::allocator gives malloc's 16 bytes (glibc's
// large blocks start 16 bytes past a page), and every 64-byte load from such a buffer then
// spans two cache lines: the depthwise rows ran 25-40 % slower on a ring 16 bytes off
// (bench/bench_optimized_kernels.cc, BM_FdwConv). Thread safety: as std::vector.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>
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

// Makes the whole pages of [p, p + bytes) resident and writable in one system call where the
// OS has one (Linux 5.14+: MADV_POPULATE_WRITE); otherwise, or on failure, does nothing and the
// first writes fault them in one by one. Packing resnet50's weights spent half its time in those
// faults; populated at once, 15 % less.
void prefault_for_write(void* p, size_t bytes) noexcept;

// AlignedAllocator for buffers whose every element the caller writes next (packed weights):
// the value-less construct default-initializes, so resize(n) of a trivial T leaves the new
// elements unset (no fill pass), and blocks of 64 KiB or more are prefaulted at allocation.
template <typename T>
struct UninitAlignedAllocator : AlignedAllocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitAlignedAllocator<U>;
  };
  UninitAlignedAllocator() noexcept = default;
  template <typename U>
  UninitAlignedAllocator(const UninitAlignedAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    T* p = AlignedAllocator<T>::allocate(n);
    if (n * sizeof(T) >= (size_t{1} << 16)) prefault_for_write(p, n * sizeof(T));
    return p;
  }
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <typename T>
using UninitAlignedVector = std::vector<T, UninitAlignedAllocator<T>>;

}  // namespace xonnx
