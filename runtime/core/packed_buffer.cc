#include "runtime/core/packed_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace xonnx {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = 4096;

size_t mapped_size(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

void* allocate_packed(size_t bytes) {
  if (bytes < kHugePage) {
    void* p = std::aligned_alloc(kAlign, std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign));
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Map one huge page more than needed and trim both ends to a 2 MB aligned start. The tail
  // past the last whole huge page stays in 4 KB pages, so no memory is wasted.
  const size_t size = mapped_size(bytes);
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t begin = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (begin + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > begin) munmap(raw, aligned - begin);
  const uintptr_t end = begin + size + kHugePage;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // advice only: ignore failure
#endif
  return reinterpret_cast<void*>(aligned);
}

void free_packed(void* p, size_t bytes) {
  if (!p) return;
  if (bytes < kHugePage) {
    std::free(p);
  } else {
    munmap(p, mapped_size(bytes));
  }
}

}  // namespace xonnx
