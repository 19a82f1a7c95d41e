#include "runtime/core/tensor.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>

namespace xonnx {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    detail::append(out, shape[i]);
  }
  return out + "]";
}

namespace {
constexpr size_t kAlign = 64;

size_t rounded_size(size_t bytes) { return std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign); }

// Large blocks come straight from the OS. A copy of weights, once freed (drop_resident), would
// otherwise stay in malloc's heap. A zero-filled block (a KV cache, a buffer of the session's
// pool) gets the OS's zero pages, which become resident only when written: a KV cache costs
// memory for the positions it holds, not for its capacity, and discard() can hand the pages of
// an idle buffer back without freeing it. Smaller blocks keep malloc.
constexpr size_t kMapBytes = 256 * 1024;

void* allocate_block(size_t bytes) {
  const size_t size = rounded_size(bytes);
  if (size < kMapBytes) return std::aligned_alloc(kAlign, size);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

bool is_mapped_block(size_t bytes) { return rounded_size(bytes) >= kMapBytes; }

void free_block(void* p, size_t bytes) {
  if (is_mapped_block(bytes)) {
    munmap(p, rounded_size(bytes));
  } else {
    std::free(p);
  }
}

void* allocate_zeroed(size_t bytes) {
  void* p = allocate_block(bytes);
  if (!p) return nullptr;
  if (!is_mapped_block(bytes)) {
    std::memset(p, 0, rounded_size(bytes));
  } else {
#ifdef MADV_NOHUGEPAGE
    // Where transparent huge pages are on for every mapping, one written byte would make 2 MiB
    // resident: a KV cache's first position of each head would take the whole cache.
    madvise(p, rounded_size(bytes), MADV_NOHUGEPAGE);
#endif
  }
  return p;
}

// Whole pages of [data, data + bytes) back to the OS: MADV_DONTNEED on a private anonymous
// mapping makes them read as zeros, on a private file mapping as the file's bytes. The first
// and last page may hold bytes outside the range: they are kept.
void drop_pages(const void* data, size_t bytes) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// Returns the pages of a read-only private file mapping to the OS; a later read faults them
// in again from the file. Whole pages only: the first and last may hold other tensors' bytes.
void drop_file_pages(const void* data, size_t bytes) { drop_pages(data, bytes); }

}  // namespace

struct Storage::Source {
  const void* src;  // copied from; null where `fill` makes the bytes
  std::shared_ptr<const void> keepalive;
  std::mutex mutex;  // concurrent first reads (parallel kernels) copy once
  FillFn fill;
  std::shared_ptr<const Storage> reads;  // a derived storage's source, if one
};

Storage::Storage() = default;

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  void* p = allocate_zeroed(bytes);
  if (!p) return nullptr;
  std::shared_ptr<Storage> s(new Storage());
  s->data_.store(p, std::memory_order_relaxed);
  s->bytes_ = bytes;
  s->owned_ = true;
  return s;
}

std::shared_ptr<Storage> Storage::view(const void* data, size_t bytes, std::shared_ptr<const void> keepalive,
                                       bool file_backed) {
  std::shared_ptr<Storage> s(new Storage());
  // Views are read-only by contract: kernels never write inputs.
  s->data_.store(const_cast<void*>(data), std::memory_order_relaxed);
  s->bytes_ = bytes;
  s->keepalive_ = keepalive ? std::move(keepalive) : std::make_shared<int>(0);
  s->file_backed_ = file_backed;
  return s;
}

std::shared_ptr<Storage> Storage::copy_on_access(const void* src, size_t bytes, std::shared_ptr<const void> keepalive,
                                                 bool file_backed) {
  std::shared_ptr<Storage> s(new Storage());
  s->bytes_ = bytes;
  s->file_backed_ = file_backed;
  s->source_.reset(new Source{src, std::move(keepalive), {}, {}, {}});
  return s;
}

std::shared_ptr<Storage> Storage::derived(size_t bytes, FillFn fill, std::shared_ptr<const Storage> reads) {
  std::shared_ptr<Storage> s(new Storage());
  s->bytes_ = bytes;
  s->source_.reset(new Source{nullptr, nullptr, {}, std::move(fill), std::move(reads)});
  return s;
}

std::shared_ptr<Storage> Storage::derived_floats(size_t count, FloatsFillFn fill,
                                                 std::shared_ptr<const Storage> reads) {
  auto bytes = [fill = std::move(fill)](size_t offset, size_t n, void* dst) {
    float piece[kDerivedFloatsPiece];
    char* to = static_cast<char*>(dst);
    for (size_t at = offset; at < offset + n;) {
      // The whole floats [f0, f1) that cover bytes [at, at + len).
      const size_t f0 = at / sizeof(float),
                   f1 = std::min(f0 + kDerivedFloatsPiece, (offset + n + sizeof(float) - 1) / sizeof(float));
      fill(f0, f1 - f0, piece);
      const size_t skip = at - f0 * sizeof(float), len = std::min(offset + n, f1 * sizeof(float)) - at;
      std::memcpy(to + (at - offset), reinterpret_cast<const char*>(piece) + skip, len);
      at += len;
    }
  };
  return derived(count * sizeof(float), std::move(bytes), std::move(reads));
}

void* Storage::materialize() const {
  std::lock_guard<std::mutex> lock(source_->mutex);
  void* p = data_.load(std::memory_order_acquire);
  if (p) return p;
  p = allocate_block(bytes_);
  if (!p) throw std::bad_alloc();
  if (source_->fill) {
    source_->fill(0, bytes_, p);
    data_.store(p, std::memory_order_release);
    return p;
  }
  // Copied a few MiB at a time, each piece's file pages dropped after it: the copy is what
  // stays resident, and the source never is whole at once (a 94 MB embedding table would
  // take twice its size at the peak).
  constexpr size_t kPiece = size_t{4} << 20;
  for (size_t at = 0; at < bytes_; at += kPiece) {
    const size_t n = std::min(kPiece, bytes_ - at);
    std::memcpy(static_cast<char*>(p) + at, static_cast<const char*>(source_->src) + at, n);
    if (file_backed_) drop_file_pages(static_cast<const char*>(source_->src) + at, n);
  }
  if (file_backed_) drop_file_pages(source_->src, bytes_);  // the pages the pieces shared
  data_.store(p, std::memory_order_release);
  return p;
}

void Storage::drop_resident() {
  if (source_) {
    if (void* p = data_.load(std::memory_order_acquire)) {
      data_.store(nullptr, std::memory_order_release);
      free_block(p, bytes_);
    }
    // A derived weight's packing read its source's pages, which nothing else may need again.
    if (source_->reads) source_->reads->drop_file_pages_only();
  }
  // read() drops whole pages only: a packing that read the source in small strided pieces
  // (a transposed weight) left them all resident.
  drop_file_pages_only();
}

void Storage::drop_file_pages_only() const {
  if (!file_backed_) return;
  const void* p = source_ ? source_->src : data_.load(std::memory_order_acquire);
  if (p) drop_file_pages(p, bytes_);
}

void Storage::discard(size_t offset, size_t n) {
  if (!owned_ || !is_mapped_block(bytes_) || offset >= bytes_) return;
  drop_pages(static_cast<char*>(data_.load(std::memory_order_relaxed)) + offset, std::min(n, bytes_ - offset));
}

void Storage::read(size_t offset, size_t n, void* dst) const {
  if (n == 0) return;
  const void* p = data_.load(std::memory_order_acquire);
  if (p || !source_) {
    std::memcpy(dst, static_cast<const char*>(p) + offset, n);
    return;
  }
  if (source_->fill) {
    source_->fill(offset, n, dst);
    return;
  }
  const char* src = static_cast<const char*>(source_->src) + offset;
  std::memcpy(dst, src, n);
  if (file_backed_) drop_file_pages(src, n);
}

std::shared_ptr<Storage> Storage::strings(size_t count) {
  std::shared_ptr<Storage> s(new Storage());
  s->strings_.resize(count);
  return s;
}

Storage::~Storage() {
  void* p = data_.load(std::memory_order_relaxed);
  if (source_) {
    if (p) free_block(p, bytes_);
  } else if (owned_) {
    free_block(p, bytes_);
  }
}

Result<Tensor> Tensor::allocate(DataType dtype, Shape shape) {
  const int64_t n = shape_numel(shape);
  if (n < 0)
    return invalid_argument("cannot allocate tensor of shape ", shape_to_string(shape),
                            ": negative dimension or element count overflow");
  if (dtype == DataType::kString) {
    return Tensor(dtype, std::move(shape), Storage::strings(static_cast<size_t>(n)));
  }
  const int64_t bytes = dtype_storage_bytes(dtype, n);
  if (bytes < 0 || (dtype_bits(dtype) == 0)) {
    return unsupported("cannot allocate tensor of type ", dtype_name(dtype), " and shape ", shape_to_string(shape));
  }
  auto storage = Storage::allocate(static_cast<size_t>(bytes));
  if (!storage) return resource_exhausted("out of memory allocating ", bytes, " bytes");
  return Tensor(dtype, std::move(shape), std::move(storage));
}

Result<Tensor> Tensor::clone() const {
  XONNX_ASSIGN_OR_RETURN(Tensor t, allocate(dtype_, shape_));
  if (dtype_ == DataType::kString) {
    for (int64_t i = 0; i < numel(); ++i) t.string_data()[i] = string_data()[i];
  } else if (nbytes() > 0) {
    std::memcpy(t.raw_data(), raw_data(), nbytes());
  }
  return t;
}

uint8_t subbyte_get(const void* data, DataType dtype, int64_t index) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  if (dtype_bits(dtype) == 2) return (p[index >> 2] >> ((index & 3) * 2)) & 0x3;
  return (p[index >> 1] >> ((index & 1) * 4)) & 0xf;
}

void subbyte_set(void* data, DataType dtype, int64_t index, uint8_t code) {
  uint8_t* p = static_cast<uint8_t*>(data);
  if (dtype_bits(dtype) == 2) {
    const int sh = static_cast<int>((index & 3) * 2);
    p[index >> 2] = static_cast<uint8_t>((p[index >> 2] & ~(0x3 << sh)) | ((code & 0x3) << sh));
    return;
  }
  const int sh = static_cast<int>((index & 1) * 4);
  p[index >> 1] = static_cast<uint8_t>((p[index >> 1] & ~(0xf << sh)) | ((code & 0xf) << sh));
}

double Tensor::get_as_double(int64_t i) const {
  const void* p = raw_data();
  switch (dtype_) {
    case DataType::kFloat: return static_cast<const float*>(p)[i];
    case DataType::kDouble: return static_cast<const double*>(p)[i];
    case DataType::kFloat16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case DataType::kBFloat16: return bfloat16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
    case DataType::kFloat8E8M0: return float8_to_float(dtype_, static_cast<const uint8_t*>(p)[i]);
    case DataType::kFloat4E2M1: return float4e2m1_to_float(subbyte_get(p, dtype_, i));
    case DataType::kInt4: {
      const int v = subbyte_get(p, dtype_, i);
      return v >= 8 ? v - 16 : v;
    }
    case DataType::kInt2: {
      const int v = subbyte_get(p, dtype_, i);
      return v >= 2 ? v - 4 : v;
    }
    case DataType::kUint4:
    case DataType::kUint2: return subbyte_get(p, dtype_, i);
    case DataType::kBool: return static_cast<const bool*>(p)[i] ? 1.0 : 0.0;
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DataType::kUint16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DataType::kUint64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    default: return 0.0;
  }
}

int64_t Tensor::get_as_int64(int64_t i) const {
  const void* p = raw_data();
  switch (dtype_) {
    case DataType::kInt64: return static_cast<const int64_t*>(p)[i];
    case DataType::kUint64: return static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);
    case DataType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DataType::kUint32: return static_cast<const uint32_t*>(p)[i];
    case DataType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DataType::kUint16: return static_cast<const uint16_t*>(p)[i];
    case DataType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DataType::kUint8: return static_cast<const uint8_t*>(p)[i];
    case DataType::kBool: return static_cast<const bool*>(p)[i] ? 1 : 0;
    default: return static_cast<int64_t>(get_as_double(i));
  }
}

Result<std::vector<int64_t>> Tensor::to_int64_vector() const {
  if (!dtype_is_integer(dtype_) && dtype_ != DataType::kBool) {
    return invalid_argument("expected an integer tensor, got ", dtype_name(dtype_));
  }
  const int64_t n = numel();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = get_as_int64(i);
  return out;
}

}  // namespace xonnx
