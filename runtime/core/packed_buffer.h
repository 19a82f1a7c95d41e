// Memory for weights a kernel packs once per session. Buffers of 2 MB or more come straight
// from mmap, 2 MB aligned and marked for transparent huge pages: a ResNet-18's 45 MB of packed
// weights otherwise costs ~11k page faults (most of session creation) and as many TLB entries
// for every run that streams them. Smaller buffers use aligned malloc.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace xonnx {

// 64-byte aligned; throws std::bad_alloc on failure, like operator new.
void* allocate_packed(size_t bytes);
void free_packed(void* p, size_t bytes);

template <class T>
struct PackedAllocator {
  using value_type = T;
  PackedAllocator() = default;
  template <class U>
  PackedAllocator(const PackedAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(allocate_packed(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { free_packed(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PackedAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const PackedAllocator<U>&) const { return false; }
};

template <class T>
using PackedVector = std::vector<T, PackedAllocator<T>>;

}  // namespace xonnx
