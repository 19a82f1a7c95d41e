// Between thread_pool.cc and thread_pool_xnnpack.cc: how the destructor frees the pthreadpool
// that ThreadPool::handle() created, without thread_pool.cc referencing pthreadpool (a build
// without the XNNPACK kernels then links no pthreadpool).
#pragma once

#include <atomic>

struct pthreadpool;

namespace xonnx {

// pthreadpool_destroy, set by the first ThreadPool::handle() that creates a pool.
using DestroyXnnPool = void (*)(pthreadpool* pool);
extern std::atomic<DestroyXnnPool> g_destroy_xnn_pool;

}  // namespace xonnx
