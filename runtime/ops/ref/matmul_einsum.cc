// Reference kernels: matmul family, part 2. Einsum (general: implicit/explicit output,
// repeated labels / diagonals, ellipsis broadcasting, any number of operands) and Det.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/gemm.h"
#include "runtime/ops/ref/matmul_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

// ---------------------------------------------------------------- Einsum

constexpr int kNumLetters = 52;
int letter_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}

struct EinsumTerm {
  std::vector<int> labels;  // letter ids; -1 marks the ellipsis position
  bool has_ellipsis = false;
};

Result<EinsumTerm> parse_term(const std::string& s, const std::string& eq) {
  EinsumTerm t;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '.') {
      if (s.compare(i, 3, "...") != 0 || t.has_ellipsis) {
        return invalid_model("Einsum equation '", eq, "': bad ellipsis in term '", s, "'");
      }
      t.has_ellipsis = true;
      t.labels.push_back(-1);
      i += 3;
      continue;
    }
    const int id = letter_id(s[i]);
    if (id < 0) {
      return invalid_model("Einsum equation '", eq, "': invalid character '", s[i], "'");
    }
    t.labels.push_back(id);
    ++i;
  }
  return t;
}

struct EinsumSpec {
  std::vector<EinsumTerm> inputs;
  bool explicit_output = false;
  EinsumTerm output;
};

Result<EinsumSpec> parse_equation(const std::string& equation) {
  std::string eq;
  for (char c : equation) {
    if (!std::isspace(static_cast<unsigned char>(c))) eq.push_back(c);
  }
  EinsumSpec spec;
  std::string lhs = eq;
  const size_t arrow = eq.find("->");
  if (arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    spec.explicit_output = true;
    XONNX_ASSIGN_OR_RETURN(spec.output, parse_term(eq.substr(arrow + 2), equation));
  }
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    const std::string term = lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    XONNX_ASSIGN_OR_RETURN(EinsumTerm t, parse_term(term, equation));
    spec.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return spec;
}

template <typename T>
using es_acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;

// Generic contraction: walks every combination of (output dims, summed dims).
template <typename T>
void einsum_typed(const std::vector<const Tensor*>& xs, T* out, const std::vector<int64_t>& sizes,
                  const std::vector<std::vector<int64_t>>& strides,  // [operand][dim]
                  size_t n_out_dims) {
  using A = es_acc_t<T>;
  const size_t nd = sizes.size();
  const size_t nops = xs.size();
  std::vector<const T*> ptr(nops);
  for (size_t k = 0; k < nops; ++k) ptr[k] = xs[k]->data<T>();
  int64_t n_out = 1, n_sum = 1;
  for (size_t d = 0; d < n_out_dims; ++d) n_out *= sizes[d];
  for (size_t d = n_out_dims; d < nd; ++d) n_sum *= sizes[d];
  std::vector<int64_t> idx(nd, 0);
  std::vector<int64_t> off(nops, 0);
  for (int64_t o = 0; o < n_out; ++o) {
    A acc = A(0);
    for (int64_t s = 0; s < n_sum; ++s) {
      A p = static_cast<A>(to_compute(ptr[0][off[0]]));
      for (size_t k = 1; k < nops; ++k) p *= static_cast<A>(to_compute(ptr[k][off[k]]));
      acc += p;
      // advance the summed dims (innermost first)
      for (size_t d = nd; d-- > n_out_dims;) {
        ++idx[d];
        for (size_t k = 0; k < nops; ++k) off[k] += strides[k][d];
        if (idx[d] < sizes[d]) break;
        for (size_t k = 0; k < nops; ++k) off[k] -= strides[k][d] * sizes[d];
        idx[d] = 0;
      }
    }
    if constexpr (std::is_integral_v<T>) {
      out[o] = static_cast<T>(acc);
    } else {
      out[o] = from_compute<T>(static_cast<compute_t<T>>(acc));
    }
    for (size_t d = n_out_dims; d-- > 0;) {
      ++idx[d];
      for (size_t k = 0; k < nops; ++k) off[k] += strides[k][d];
      if (idx[d] < sizes[d]) break;
      for (size_t k = 0; k < nops; ++k) off[k] -= strides[k][d] * sizes[d];
      idx[d] = 0;
    }
  }
}

// Fast path for two operands without diagonals, broadcasting or one-sided summed labels:
// permute both into [batch, M, K] / [batch, K, N], run a GEMM per batch, scatter to the output.
struct StridedView {
  std::vector<int64_t> sizes, strides;
};

// Calls fn(i, off) for element i (row-major over view.sizes) at strided offset off.
template <typename Fn>
void walk_view(const StridedView& v, Fn&& fn) {
  int64_t n = 1;
  for (int64_t s : v.sizes) n *= s;
  std::vector<int64_t> idx(v.sizes.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; ++i) {
    fn(i, off);
    for (size_t d = v.sizes.size(); d-- > 0;) {
      ++idx[d];
      off += v.strides[d];
      if (idx[d] < v.sizes[d]) break;
      off -= v.strides[d] * v.sizes[d];
      idx[d] = 0;
    }
  }
}

template <typename T>
void einsum_gemm(const Tensor& ta, const Tensor& tb, T* out, const StridedView& av, const StridedView& bv,
                 const StridedView& cv, int64_t nb, int64_t M, int64_t N, int64_t K) {
  using A = ref::gemm_acc_t<T>;
  std::vector<A> a(static_cast<size_t>(nb * M * K)), b(static_cast<size_t>(nb * K * N));
  std::vector<A> c(static_cast<size_t>(nb * M * N), A(0));
  const T* pa = ta.data<T>();
  const T* pb = tb.data<T>();
  walk_view(av, [&](int64_t i, int64_t off) { a[i] = static_cast<A>(to_compute(pa[off])); });
  walk_view(bv, [&](int64_t i, int64_t off) { b[i] = static_cast<A>(to_compute(pb[off])); });
  for (int64_t bt = 0; bt < nb; ++bt) {
    ref::gemm_acc<A>(M, N, K, a.data() + bt * M * K, K, b.data() + bt * K * N, N, c.data() + bt * M * N, N);
  }
  walk_view(cv, [&](int64_t i, int64_t off) {
    if constexpr (std::is_integral_v<T>) {
      out[off] = static_cast<T>(c[i]);
    } else {
      out[off] = from_compute<T>(static_cast<compute_t<T>>(c[i]));
    }
  });
}

// Tries the GEMM path; returns false when the equation does not fit it.
bool try_einsum_gemm(const std::vector<const Tensor*>& xs, const std::vector<std::vector<int>>& ids,
                     const std::vector<int64_t>& size_of, const std::vector<int>& out_ids, Tensor* y) {
  if (xs.size() != 2) return false;
  const int n_ids = static_cast<int>(size_of.size());
  std::vector<std::vector<int64_t>> stride(2, std::vector<int64_t>(n_ids, -1));
  for (size_t k = 0; k < 2; ++k) {
    const std::vector<int64_t> cs = ref::contiguous_strides(xs[k]->shape());
    for (size_t d = 0; d < ids[k].size(); ++d) {
      const int id = ids[k][d];
      if (stride[k][id] != -1 || xs[k]->dim(d) != size_of[id]) return false;  // diagonal / bcast
      stride[k][id] = cs[d];
    }
  }
  std::vector<int64_t> out_stride(n_ids, -1);
  {
    int64_t s = 1;
    for (size_t i = out_ids.size(); i-- > 0;) {
      out_stride[out_ids[i]] = s;
      s *= size_of[out_ids[i]];
    }
  }
  std::vector<int> batch, m, n, kk;
  for (int id : out_ids) {
    const bool in_a = stride[0][id] != -1, in_b = stride[1][id] != -1;
    if (in_a && in_b)
      batch.push_back(id);
    else if (in_a)
      m.push_back(id);
    else
      n.push_back(id);
  }
  for (int id : ids[0]) {
    if (out_stride[id] != -1) continue;
    if (stride[1][id] == -1) return false;  // summed over one operand only
    kk.push_back(id);
  }
  for (int id : ids[1]) {
    if (out_stride[id] == -1 && stride[0][id] == -1) return false;
  }
  auto prod = [&](const std::vector<int>& v) {
    int64_t p = 1;
    for (int id : v) p *= size_of[id];
    return p;
  };
  auto view = [&](const std::vector<const std::vector<int>*>& groups, const std::vector<int64_t>& st) {
    StridedView v;
    for (const auto* g : groups) {
      for (int id : *g) {
        v.sizes.push_back(size_of[id]);
        v.strides.push_back(st[id]);
      }
    }
    return v;
  };
  const StridedView av = view({&batch, &m, &kk}, stride[0]);
  const StridedView bv = view({&batch, &kk, &n}, stride[1]);
  const StridedView cv = view({&batch, &m, &n}, out_stride);
  const int64_t nb = prod(batch), M = prod(m), N = prod(n), K = prod(kk);
  bool done = false;
  XONNX_DISPATCH_NUMERIC(xs[0]->dtype(), return false, {
    einsum_gemm<T>(*xs[0], *xs[1], y->data<T>(), av, bv, cv, nb, M, N, K);
    done = true;
  });
  return done;
}

Result<std::unique_ptr<Kernel>> create_einsum(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::string equation, init.require_string("equation"));
  XONNX_ASSIGN_OR_RETURN(EinsumSpec spec, parse_equation(equation));
  if (spec.inputs.size() != init.num_inputs()) {
    return invalid_model("Einsum equation '", equation, "' has ", spec.inputs.size(),
                         " operand terms but the node has ", init.num_inputs(), " inputs");
  }
  return make_kernel([=](KernelContext& ctx) -> Status {
    const size_t nops = spec.inputs.size();
    std::vector<const Tensor*> xs(nops);
    for (size_t k = 0; k < nops; ++k) {
      xs[k] = &ctx.input(k);
      if (!xs[k]->defined()) return invalid_argument("input ", k, " is missing");
      if (xs[k]->dtype() != xs[0]->dtype()) {
        return invalid_argument("all inputs must have the same type; input ", k, " is ", dtype_name(xs[k]->dtype()),
                                ", input 0 is ", dtype_name(xs[0]->dtype()));
      }
    }
    // Ellipsis widths and label sizes.
    int64_t max_ell = 0;
    std::vector<int64_t> ell_width(nops, 0);
    for (size_t k = 0; k < nops; ++k) {
      const EinsumTerm& t = spec.inputs[k];
      const int64_t letters = static_cast<int64_t>(t.labels.size()) - (t.has_ellipsis ? 1 : 0);
      const int64_t rank = static_cast<int64_t>(xs[k]->rank());
      if (t.has_ellipsis ? rank < letters : rank != letters) {
        return invalid_argument("Einsum '", equation, "': input ", k, " has rank ", rank, " but its term has ", letters,
                                " labels");
      }
      ell_width[k] = t.has_ellipsis ? rank - letters : 0;
      max_ell = std::max(max_ell, ell_width[k]);
    }
    // Dimension ids: letters 0..51, ellipsis dims 52.. (right-aligned across operands).
    const int n_ids = kNumLetters + static_cast<int>(max_ell);
    std::vector<int64_t> size_of(n_ids, -1);
    std::vector<int> occurrences(n_ids, 0);
    std::vector<std::vector<int>> dim_ids(nops);
    for (size_t k = 0; k < nops; ++k) {
      const EinsumTerm& t = spec.inputs[k];
      for (int l : t.labels) {
        if (l >= 0) {
          dim_ids[k].push_back(l);
        } else {
          for (int64_t e = 0; e < ell_width[k]; ++e) {
            dim_ids[k].push_back(kNumLetters + static_cast<int>(max_ell - ell_width[k] + e));
          }
        }
      }
      std::vector<bool> seen(n_ids, false);
      for (size_t d = 0; d < dim_ids[k].size(); ++d) {
        const int id = dim_ids[k][d];
        const int64_t s = xs[k]->dim(d);
        if (!seen[id]) ++occurrences[id];
        seen[id] = true;
        if (size_of[id] == -1 || size_of[id] == 1) {
          size_of[id] = s;
        } else if (s != size_of[id] && s != 1) {
          return invalid_argument("Einsum '", equation, "': dimension ", d, " of input ", k, " has size ", s,
                                  " but the same label has size ", size_of[id], " elsewhere");
        }
      }
    }
    // Output dims.
    std::vector<int> out_ids;
    if (spec.explicit_output) {
      std::vector<bool> used(n_ids, false);
      for (int l : spec.output.labels) {
        if (l < 0) {
          for (int64_t e = 0; e < max_ell; ++e) out_ids.push_back(kNumLetters + static_cast<int>(e));
          continue;
        }
        if (size_of[l] == -1) {
          return invalid_argument("Einsum '", equation, "': output label does not appear in any input");
        }
        if (used[l]) return invalid_argument("Einsum '", equation, "': output label repeated");
        used[l] = true;
        out_ids.push_back(l);
      }
    } else {
      for (int64_t e = 0; e < max_ell; ++e) out_ids.push_back(kNumLetters + static_cast<int>(e));
      for (int l = 0; l < kNumLetters; ++l) {
        if (occurrences[l] == 1) {
          // A label repeated inside one operand (a diagonal) still counts once per operand;
          // numpy drops labels repeated anywhere in the implicit output.
          int total = 0;
          for (size_t k = 0; k < nops; ++k) {
            for (int id : dim_ids[k]) total += id == l;
          }
          if (total == 1) out_ids.push_back(l);
        }
      }
    }
    std::vector<bool> in_out(n_ids, false);
    for (int id : out_ids) in_out[id] = true;
    std::vector<int> all_ids = out_ids;
    for (int id = 0; id < n_ids; ++id) {
      if (size_of[id] >= 0 && !in_out[id]) all_ids.push_back(id);
    }
    std::vector<int64_t> sizes;
    for (int id : all_ids) sizes.push_back(size_of[id]);
    std::vector<std::vector<int64_t>> strides(nops, std::vector<int64_t>(all_ids.size(), 0));
    std::vector<int> pos_of(n_ids, -1);
    for (size_t d = 0; d < all_ids.size(); ++d) pos_of[all_ids[d]] = static_cast<int>(d);
    for (size_t k = 0; k < nops; ++k) {
      const std::vector<int64_t> cs = ref::contiguous_strides(xs[k]->shape());
      for (size_t d = 0; d < dim_ids[k].size(); ++d) {
        if (xs[k]->dim(d) == 1) continue;  // broadcast
        strides[k][pos_of[dim_ids[k][d]]] += cs[d];
      }
    }
    Shape out_shape;
    for (int id : out_ids) out_shape.push_back(size_of[id]);
    const DataType dt = xs[0]->dtype();
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, out_shape));
    if (y->numel() == 0) return Status::ok();
    if (try_einsum_gemm(xs, dim_ids, size_of, out_ids, y)) return Status::ok();
    XONNX_DISPATCH_NUMERIC(dt, return unsupported("Einsum does not support type ", dtype_name(dt)),
                           { einsum_typed<T>(xs, y->data<T>(), sizes, strides, out_ids.size()); });
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Det

double det_lu(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t piv = c;
    double best = std::fabs(a[c * n + c]);
    for (int64_t r = c + 1; r < n; ++r) {
      const double v = std::fabs(a[r * n + c]);
      if (v > best) {
        best = v;
        piv = r;
      }
    }
    if (best == 0.0) return 0.0;
    if (piv != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(a[c * n + j], a[piv * n + j]);
      det = -det;
    }
    const double d = a[c * n + c];
    det *= d;
    for (int64_t r = c + 1; r < n; ++r) {
      const double f = a[r * n + c] / d;
      if (f == 0.0) continue;
      for (int64_t j = c + 1; j < n; ++j) a[r * n + j] -= f * a[c * n + j];
    }
  }
  return det;
}

Result<std::unique_ptr<Kernel>> create_det(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!x.defined()) return invalid_argument("input 0 (X) is missing");
    if (x.rank() < 2 || x.dim(x.rank() - 1) != x.dim(x.rank() - 2)) {
      return invalid_argument("Det input must have shape [..., M, M], got ", shape_to_string(x.shape()));
    }
    const int64_t n = x.dim(x.rank() - 1);
    const Shape out_shape(x.shape().begin(), x.shape().end() - 2);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    const int64_t batches = y->numel();
    if (batches == 0) return Status::ok();  // [0, M, M] holds no matrix, however large M
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("Det does not support type ", dtype_name(x.dtype())), {
      const T* in = x.data<T>();
      T* out = y->data<T>();
      std::vector<double> a(static_cast<size_t>(n * n));
      for (int64_t b = 0; b < batches; ++b) {
        for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<double>(to_compute(in[b * n * n + i]));
        out[b] = from_compute<T>(static_cast<compute_t<T>>(det_lu(a, n)));
      }
    });
    return Status::ok();
  });
}

}  // namespace

void register_matmul_einsum_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "Einsum", 12, kLatestVersion, create_einsum);
  XONNX_REGISTER(registry, "", "Det", 11, kLatestVersion, create_det);
}

}  // namespace xonnx
