// Reference kernels: pooling family. MaxPool, AveragePool, LpPool (N-d, pads / auto_pad /
// dilations / ceil_mode), the Global* pools and MaxUnpool.
//
// Windows are precomputed per call as a CSR list of flat input offsets per output position
// (shared by every N x C plane), so the per-element work is a plain loop.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

enum class PoolKind { kMax, kAvg, kLp };

struct PoolAttrs {
  PoolKind kind = PoolKind::kMax;
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel_shape, strides, pads, dilations;
  int64_t ceil_mode = 0;
  int64_t count_include_pad = 0;
  int64_t storage_order = 0;
  float p = 2.0f;
};

Result<PoolAttrs> parse_pool_attrs(const KernelInit& init, PoolKind kind) {
  PoolAttrs a;
  a.kind = kind;
  XONNX_ASSIGN_OR_RETURN(a.auto_pad, ref::get_auto_pad(init));
  XONNX_ASSIGN_OR_RETURN(a.kernel_shape, init.get_ints("kernel_shape"));
  if (a.kernel_shape.empty()) return invalid_argument("kernel_shape is required");
  XONNX_ASSIGN_OR_RETURN(a.strides, init.get_ints("strides"));
  XONNX_ASSIGN_OR_RETURN(a.pads, init.get_ints("pads"));
  XONNX_ASSIGN_OR_RETURN(a.dilations, init.get_ints("dilations"));
  XONNX_ASSIGN_OR_RETURN(a.ceil_mode, init.get_int("ceil_mode", 0));
  XONNX_ASSIGN_OR_RETURN(a.count_include_pad, init.get_int("count_include_pad", 0));
  XONNX_ASSIGN_OR_RETURN(a.storage_order, init.get_int("storage_order", 0));
  if (kind == PoolKind::kLp) {
    const Attribute* pa = init.attr("p");
    if (pa && pa->type == AttrType::kFloat) {
      a.p = pa->f;  // LpPool-1 has a float p
    } else {
      XONNX_ASSIGN_OR_RETURN(int64_t pi, init.get_int("p", 2));
      a.p = static_cast<float>(pi);
    }
    if (!(a.p > 0)) return invalid_argument("p must be > 0, got ", a.p);
  }
  const size_t nd = a.kernel_shape.size();
  for (int64_t k : a.kernel_shape)
    if (k < 1) return invalid_argument("kernel_shape values must be >= 1, got ", k);
  if (!a.strides.empty() && a.strides.size() != nd)
    return invalid_argument("strides needs ", nd, " values, got ", a.strides.size());
  if (!a.dilations.empty() && a.dilations.size() != nd)
    return invalid_argument("dilations needs ", nd, " values, got ", a.dilations.size());
  if (!a.pads.empty() && a.pads.size() != 2 * nd)
    return invalid_argument("pads needs ", 2 * nd, " values, got ", a.pads.size());
  for (int64_t s : a.strides)
    if (s < 1) return invalid_argument("strides must be >= 1, got ", s);
  for (int64_t d : a.dilations)
    if (d < 1) return invalid_argument("dilations must be >= 1, got ", d);
  for (int64_t p : a.pads)
    if (p < 0) return invalid_argument("pads must be >= 0, got ", p);
  if (a.storage_order != 0 && a.storage_order != 1)
    return invalid_argument("storage_order must be 0 or 1, got ", a.storage_order);
  if (a.strides.empty()) a.strides.assign(nd, 1);
  if (a.dilations.empty()) a.dilations.assign(nd, 1);
  return a;
}

// The pooling windows of one N x C plane. Per spatial dim and output coordinate: the valid
// input coordinates (an arithmetic progression: first, then every dilation) and the
// pad-inclusive count, found in O(1) so that a kernel of 2^31 taps costs no loop over its
// padding. build_chunk() turns a run of output positions [o_begin, o_end) into a CSR list
// (offsets[starts[o] .. starts[o+1]) are the flat input offsets of output o_begin + o), bounded
// in size so huge windows cannot exhaust memory.
struct Windows {
  struct Taps {
    int64_t first = 0, count = 0;  // valid input coordinates first, first + dilation, ...
    int64_t with_pads = 0;         // the taps inside the padded input
  };
  Shape out;
  std::vector<int64_t> pad_begin, pad_end, dilations;
  std::vector<std::vector<Taps>> taps;  // [dim][out coord]
  std::vector<int64_t> in_strides;
  // current chunk
  int64_t o_begin = 0, o_end = 0;
  std::vector<int64_t> starts, offsets;
  std::vector<double> pad_count;  // a product of per-dim counts: up to (2^31)^dims

  void build_taps(const PoolAttrs& a, const Shape& in);
  void build_chunk(int64_t begin, int64_t max_entries);
};

void Windows::build_chunk(int64_t begin, int64_t max_entries) {
  const size_t nd = out.size();
  const int64_t out_size = shape_numel(out);
  starts.clear();
  offsets.clear();
  pad_count.clear();
  o_begin = begin;
  std::vector<int64_t> oi(nd, 0), ki(nd, 0);
  for (size_t i = nd, rem = static_cast<size_t>(begin); i-- > 0;) {
    oi[i] = static_cast<int64_t>(rem % static_cast<size_t>(out[i]));
    rem /= static_cast<size_t>(out[i]);
  }
  int64_t o = begin;
  for (; o < out_size; ++o) {
    double pc = 1;
    int64_t count = 1;  // at most the input's spatial size
    for (size_t i = 0; i < nd; ++i) {
      pc *= static_cast<double>(taps[i][oi[i]].with_pads);
      count *= taps[i][oi[i]].count;
    }
    if (o > begin && static_cast<int64_t>(offsets.size()) + count > max_entries) break;
    starts.push_back(static_cast<int64_t>(offsets.size()));
    pad_count.push_back(pc);
    if (count > 0) {
      std::fill(ki.begin(), ki.end(), 0);
      while (true) {
        int64_t off = 0;
        for (size_t i = 0; i < nd; ++i) off += (taps[i][oi[i]].first + ki[i] * dilations[i]) * in_strides[i];
        offsets.push_back(off);
        size_t i = nd;
        while (i-- > 0) {
          if (++ki[i] < taps[i][oi[i]].count) break;
          ki[i] = 0;
        }
        if (i == static_cast<size_t>(-1)) break;
      }
    }
    for (size_t i = nd; i-- > 0;) {
      if (++oi[i] < out[i]) break;
      oi[i] = 0;
    }
  }
  o_end = o;
  starts.push_back(static_cast<int64_t>(offsets.size()));
}

// The output dims and pads of `in`'s windows (their taps come with build_taps, once the output's
// memory is granted: a window per output coordinate).
Result<Windows> make_windows(const PoolAttrs& a, const Shape& in) {
  const size_t nd = in.size();
  Windows w;
  std::vector<int64_t>& pb = w.pad_begin;
  std::vector<int64_t>& pe = w.pad_end;
  pb.assign(nd, 0);
  pe.assign(nd, 0);
  w.out.resize(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t ek = (a.kernel_shape[i] - 1) * a.dilations[i] + 1;
    const int64_t s = a.strides[i];
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      const ref::SamePadding p = ref::same_padding(in[i], s, ek, a.auto_pad == "SAME_UPPER");
      w.out[i] = p.out;
      pb[i] = p.pad_begin;
      pe[i] = p.pad_end;
    } else {
      if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
        pb[i] = a.pads[i];
        pe[i] = a.pads[i + nd];
      }
      w.out[i] = ref::pool_output_size(in[i], pb[i], pe[i], ek, s, a.ceil_mode != 0);
      if (w.out[i] < 0)
        return invalid_argument("spatial dim ", i, ": input ", in[i], " plus pads is smaller than the ",
                                "dilated kernel ", ek);
    }
  }
  w.in_strides.assign(nd, 1);
  for (size_t i = nd - 1; i-- > 0;) w.in_strides[i] = w.in_strides[i + 1] * in[i + 1];
  return w;
}

void Windows::build_taps(const PoolAttrs& a, const Shape& in) {
  const size_t nd = in.size();
  const std::vector<int64_t>& pb = pad_begin;
  const std::vector<int64_t>& pe = pad_end;
  // Per dim and output coordinate o, tap k reads base + k * d (base = o * s - pad_begin): valid
  // for k in [k0, k1), inside the padded input for k < k_pad.
  auto ceil_div = [](int64_t n, int64_t d) { return n >= 0 ? (n + d - 1) / d : -(-n / d); };
  dilations = a.dilations;
  taps.resize(nd);
  for (size_t i = 0; i < nd; ++i) {
    const int64_t k = a.kernel_shape[i], d = a.dilations[i];
    taps[i].resize(static_cast<size_t>(out[i]));
    for (int64_t o = 0; o < out[i]; ++o) {
      const int64_t base = o * a.strides[i] - pb[i];
      const int64_t k0 = std::clamp<int64_t>(ceil_div(-base, d), 0, k);
      const int64_t k1 = std::clamp<int64_t>(ceil_div(in[i] - base, d), k0, k);
      Taps& t = taps[i][static_cast<size_t>(o)];
      t.first = base + k0 * d;
      t.count = k1 - k0;
      t.with_pads = std::clamp<int64_t>(ceil_div(in[i] + pe[i] - base, d), 0, k);
    }
  }
}

// Row-major flat spatial offset -> column-major flat spatial index (MaxPool storage_order=1).
int64_t to_column_major(int64_t off, const Shape& in) {
  int64_t idx = 0, mul = 1;
  for (size_t i = 0; i < in.size(); ++i) {
    int64_t inner = 1;
    for (size_t j = i + 1; j < in.size(); ++j) inner *= in[j];
    const int64_t c = (off / inner) % in[i];
    idx += c * mul;
    mul *= in[i];
  }
  return idx;
}

template <typename T>
Status run_pool(KernelContext& ctx, const PoolAttrs& a, Windows& w, const Shape& in) {
  const Tensor& x = ctx.input(0);
  const int64_t N = x.dim(0), C = x.dim(1);
  const int64_t in_size = shape_numel(in), out_size = shape_numel(w.out);
  Shape yshape = {N, C};
  yshape.insert(yshape.end(), w.out.begin(), w.out.end());
  XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), yshape));
  Tensor* ind = nullptr;
  if (a.kind == PoolKind::kMax && ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
    XONNX_ASSIGN_OR_RETURN(ind, ctx.allocate_output(1, DataType::kInt64, yshape));
  }
  if (out_size == 0 || N * C == 0) return Status::ok();  // nothing to pool: no windows to build
  w.build_taps(a, in);
  const T* xp = x.data<T>();
  T* yp = y->data<T>();
  using CT = compute_t<T>;
  constexpr int64_t kMaxEntries = int64_t{1} << 22;  // offsets held at once (32 MiB)
  for (int64_t chunk = 0; chunk < out_size; chunk = w.o_end) {
    w.build_chunk(chunk, kMaxEntries);
    for (int64_t plane = 0; plane < N * C; ++plane) {
      const T* xs = xp + plane * in_size;
      T* ys = yp + plane * out_size;
      for (int64_t o = w.o_begin; o < w.o_end; ++o) {
        const int64_t b = w.starts[o - w.o_begin], e = w.starts[o - w.o_begin + 1];
        if (a.kind == PoolKind::kMax) {
          int64_t best = -1;
          CT bv = std::numeric_limits<CT>::lowest();
          for (int64_t j = b; j < e; ++j) {
            const CT v = to_compute(xs[w.offsets[j]]);
            if (best < 0 ? !(v != v) : v > bv) {  // skip leading NaNs
              bv = v;
              best = w.offsets[j];
            }
          }
          if (best < 0 && e > b) {  // all NaN
            best = w.offsets[b];
            bv = to_compute(xs[best]);
          }
          ys[o] = from_compute<T>(bv);
          if (ind) {
            const int64_t sp = best < 0 ? 0 : (a.storage_order ? to_column_major(best, in) : best);
            ind->data<int64_t>()[plane * out_size + o] = plane * in_size + sp;
          }
        } else if constexpr (!std::is_floating_point_v<CT>) {
          return unsupported("average/Lp pooling on integer type ", dtype_name(x.dtype()));
        } else if (a.kind == PoolKind::kAvg) {
          CT sum = 0;
          for (int64_t j = b; j < e; ++j) sum += to_compute(xs[w.offsets[j]]);
          const double cnt = a.count_include_pad ? w.pad_count[o - w.o_begin] : static_cast<double>(e - b);
          ys[o] = from_compute<T>(cnt > 0 ? sum / static_cast<CT>(cnt) : CT(0));
        } else {
          CT sum = 0;
          if (a.p == 2.0f) {
            for (int64_t j = b; j < e; ++j) {
              const CT v = to_compute(xs[w.offsets[j]]);
              sum += v * v;
            }
            ys[o] = from_compute<T>(std::sqrt(sum));
          } else if (a.p == 1.0f) {
            for (int64_t j = b; j < e; ++j) sum += std::abs(to_compute(xs[w.offsets[j]]));
            ys[o] = from_compute<T>(sum);
          } else {
            for (int64_t j = b; j < e; ++j) sum += std::pow(std::abs(to_compute(xs[w.offsets[j]])), CT(a.p));
            ys[o] = from_compute<T>(std::pow(sum, CT(1) / CT(a.p)));
          }
        }
      }
    }
  }
  return Status::ok();
}

Status check_pool_input(const Tensor& x, size_t nd) {
  if (x.rank() != nd + 2)
    return invalid_argument("input X ", shape_to_string(x.shape()), " must have rank ", nd + 2, " (N, C and ", nd,
                            " spatial dims from kernel_shape)");
  return Status::ok();
}

template <PoolKind kKind>
Result<std::unique_ptr<Kernel>> create_pool(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(PoolAttrs a, parse_pool_attrs(init, kKind));
  const bool int_ok = kKind == PoolKind::kMax;
  return make_kernel([a, int_ok](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_pool_input(x, a.kernel_shape.size()));
    const Shape in(x.shape().begin() + 2, x.shape().end());
    XONNX_ASSIGN_OR_RETURN(Windows w, make_windows(a, in));
    if (dtype_is_float(x.dtype())) {
      XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("pooling on type ", dtype_name(x.dtype())),
                           { return run_pool<T>(ctx, a, w, in); });
    }
    if (int_ok) {
      XONNX_DISPATCH_INT(x.dtype(), return unsupported("MaxPool on type ", dtype_name(x.dtype())),
                         { return run_pool<T>(ctx, a, w, in); });
    }
    return unsupported("pooling on type ", dtype_name(x.dtype()));
  });
}

// ---- Global pools ------------------------------------------------------------------------

template <PoolKind kKind>
Result<std::unique_ptr<Kernel>> create_global_pool(const KernelInit& init) {
  float p = 2.0f;
  if (kKind == PoolKind::kLp) {
    const Attribute* pa = init.attr("p");
    if (pa && pa->type == AttrType::kFloat) {
      p = pa->f;
    } else {
      XONNX_ASSIGN_OR_RETURN(int64_t pi, init.get_int("p", 2));
      p = static_cast<float>(pi);
    }
    if (!(p > 0)) return invalid_argument("p must be > 0, got ", p);
  }
  return make_kernel([p](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2)
      return invalid_argument("input X must have rank >= 2 (N, C, ...), got ", shape_to_string(x.shape()));
    Shape yshape = x.shape();
    for (size_t i = 2; i < yshape.size(); ++i) yshape[i] = 1;
    int64_t sp = 1;
    for (size_t i = 2; i < x.rank(); ++i) sp *= x.dim(i);
    const int64_t planes = x.dim(0) * x.dim(1);
    if (kKind == PoolKind::kMax && sp == 0 && planes > 0)
      return invalid_argument("GlobalMaxPool over an empty spatial extent ", shape_to_string(x.shape()));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), yshape));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("global pooling on type ", dtype_name(x.dtype())), {
      using CT = compute_t<T>;
      const T* xp = x.data<T>();
      T* yp = y->data<T>();
      for (int64_t pl = 0; pl < planes; ++pl) {
        const T* xs = xp + pl * sp;
        CT acc;
        if (kKind == PoolKind::kMax) {
          acc = to_compute(xs[0]);
          for (int64_t i = 1; i < sp; ++i) {
            const CT v = to_compute(xs[i]);
            if (v > acc || acc != acc) acc = v;
          }
        } else if (kKind == PoolKind::kAvg) {
          acc = 0;
          for (int64_t i = 0; i < sp; ++i) acc += to_compute(xs[i]);
          acc = sp > 0 ? acc / static_cast<CT>(sp) : CT(0);
        } else {
          acc = 0;
          for (int64_t i = 0; i < sp; ++i) acc += std::pow(std::abs(to_compute(xs[i])), CT(p));
          acc = std::pow(acc, CT(1) / CT(p));
        }
        yp[pl] = from_compute<T>(acc);
      }
    });
    return Status::ok();
  });
}

// ---- MaxUnpool ---------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> create_max_unpool(const KernelInit& init) {
  std::vector<int64_t> kernel, strides, pads;
  XONNX_ASSIGN_OR_RETURN(kernel, init.get_ints("kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(strides, init.get_ints("strides"));
  XONNX_ASSIGN_OR_RETURN(pads, init.get_ints("pads"));
  const size_t nd = kernel.size();
  if (nd == 0) return invalid_argument("kernel_shape is required");
  if (strides.empty()) strides.assign(nd, 1);
  if (pads.empty()) pads.assign(2 * nd, 0);
  if (strides.size() != nd || pads.size() != 2 * nd)
    return invalid_argument("strides needs ", nd, " values and pads ", 2 * nd);
  for (int64_t s : strides)
    if (s < 1) return invalid_argument("strides must be >= 1, got ", s);
  return make_kernel([kernel, strides, pads, nd](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    if (x.rank() != nd + 2) return invalid_argument("X must have rank ", nd + 2, ", got ", shape_to_string(x.shape()));
    if (ind.dtype() != DataType::kInt64)
      return invalid_argument("indices I must be int64, got ", dtype_name(ind.dtype()));
    if (ind.shape() != x.shape())
      return invalid_argument("indices I ", shape_to_string(ind.shape()), " must have X's shape ",
                              shape_to_string(x.shape()));
    // Indices address the inferred shape; an explicit output_shape (>= inferred per dim)
    // places that block at the origin of a larger zero tensor.
    Shape inferred = {x.dim(0), x.dim(1)};
    for (size_t i = 0; i < nd; ++i)
      inferred.push_back((x.dim(i + 2) - 1) * strides[i] - pads[i] - pads[i + nd] + kernel[i]);
    for (int64_t d : inferred)
      if (d < 0) return invalid_argument("inferred output shape ", shape_to_string(inferred), " has a negative dim");
    Shape yshape = inferred;
    if (ctx.has_input(2)) {
      XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> os, ctx.input(2).to_int64_vector());
      if (os.size() != nd + 2) return invalid_argument("output_shape must have ", nd + 2, " values, got ", os.size());
      for (size_t i = 0; i < os.size(); ++i)
        if (os[i] < inferred[i] || (i < 2 && os[i] != inferred[i]))
          return invalid_argument("output_shape ", shape_to_string(os), " is smaller than the inferred shape ",
                                  shape_to_string(inferred));
      yshape = os;
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), yshape));
    const int64_t n = x.numel(), total = shape_numel(inferred);
    const bool same = yshape == inferred;
    const int64_t* ip = ind.data<int64_t>();
    XONNX_DISPATCH_ALL_BYTES(x.dtype(), return unsupported("MaxUnpool on type ", dtype_name(x.dtype())), {
      const T* xp = x.data<T>();
      T* yp = y->data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if (ip[i] < 0 || ip[i] >= total)
          return invalid_argument("index ", ip[i], " at position ", i, " is outside the output of ", total,
                                  " elements");
        int64_t dst = ip[i];
        if (!same) {  // re-linearize the inferred-shape coordinates in the output shape
          int64_t rem = ip[i], mul = 1;
          dst = 0;
          for (size_t d = inferred.size(); d-- > 0;) {
            dst += (rem % inferred[d]) * mul;
            rem /= inferred[d];
            mul *= yshape[d];
          }
        }
        yp[dst] = xp[i];
      }
    });
    return Status::ok();
  });
}

}  // namespace

void register_pool_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "MaxPool", 1, kLatestVersion, create_pool<PoolKind::kMax>);
  XONNX_REGISTER(registry, "", "AveragePool", 1, kLatestVersion, create_pool<PoolKind::kAvg>);
  XONNX_REGISTER(registry, "", "LpPool", 1, kLatestVersion, create_pool<PoolKind::kLp>);
  XONNX_REGISTER(registry, "", "GlobalMaxPool", 1, kLatestVersion, create_global_pool<PoolKind::kMax>);
  XONNX_REGISTER(registry, "", "GlobalAveragePool", 1, kLatestVersion, create_global_pool<PoolKind::kAvg>);
  XONNX_REGISTER(registry, "", "GlobalLpPool", 1, kLatestVersion, create_global_pool<PoolKind::kLp>);
  XONNX_REGISTER(registry, "", "MaxUnpool", 9, kLatestVersion, create_max_unpool);
}

}  // namespace xonnx
