#include "runtime/ops/common/fully_connected_gemm.h"

#include "runtime/ops/common/fast_kernel.h"

namespace xonnx {

Result<FullyConnectedGemm> FullyConnectedGemm::parse(const KernelInit& init, const char* what) {
  FullyConnectedGemm g;
  XONNX_ASSIGN_OR_RETURN(int64_t trans_a, init.get_int("transA", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t trans_b, init.get_int("transB", 0));
  XONNX_ASSIGN_OR_RETURN(g.alpha, init.get_float("alpha", 1.0f));
  XONNX_ASSIGN_OR_RETURN(float beta, init.get_float("beta", 1.0f));
  if (trans_a != 0) return unsupported(what, ": transA");
  if (init.since_version() < 7) {  // Gemm-1/6: C broadcasts only with broadcast=1
    XONNX_ASSIGN_OR_RETURN(int64_t bc, init.get_int("broadcast", 0));
    if (bc == 0 && init.has_input(2)) return unsupported(what, ": broadcast=0");
  }
  const Tensor* b = init.constant_input(1);
  if (!b || !is_f32(*b) || b->rank() != 2) return unsupported(what, ": needs a constant 2-D float B");
  g.trans_b = trans_b != 0;
  g.n = g.trans_b ? b->dim(0) : b->dim(1);
  g.k = g.trans_b ? b->dim(1) : b->dim(0);
  if (init.has_input(2)) {
    const Tensor* c = init.constant_input(2);
    if (!c || !is_f32(*c)) return unsupported(what, ": C must be a constant float");
    // C must broadcast along N only: [], [1], [N], [1, 1], [1, N].
    const auto& cs = c->shape();
    const int64_t cn = c->numel();
    const bool row = (cs.size() <= 1 || (cs.size() == 2 && cs[0] == 1)) && (cn == 1 || cn == g.n);
    if (!row) return unsupported(what, ": C ", shape_to_string(cs), " is not a row bias");
    g.bias.resize(static_cast<size_t>(g.n));
    const float* cp = c->data<float>();
    for (int64_t j = 0; j < g.n; ++j) g.bias[static_cast<size_t>(j)] = beta * cp[cn == 1 ? 0 : j];
  }
  return g;
}

}  // namespace xonnx
