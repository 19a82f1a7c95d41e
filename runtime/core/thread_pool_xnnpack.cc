// ThreadPool's pthreadpool for XNNPACK operators, apart from thread_pool.cc so that only a
// program with the XNNPACK kernels (their only caller) links pthreadpool.
#include <pthreadpool.h>

#include "runtime/core/thread_pool.h"
#include "runtime/core/thread_pool_xnnpack.h"

namespace xonnx {

pthreadpool* ThreadPool::handle() const {
  if (num_threads_ < 2) return nullptr;
  if (!xnn_pool_) {
    g_destroy_xnn_pool.store(pthreadpool_destroy);
    xnn_pool_ = pthreadpool_create(static_cast<size_t>(num_threads_));
  }
  rest();  // our spinning workers sleep: the XNNPACK operator needs the cores
  return xnn_pool_;
}

}  // namespace xonnx
