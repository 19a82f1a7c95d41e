// Reference kernels: LRN, LpNormalization, MeanVarianceNormalization, Dropout
// (registered from register_normalization_ops in normalization.cc).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/normalization_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

Status check_float_input(const Tensor& t, const char* op) {
  if (!dtype_is_float(t.dtype()) || dtype_bits(t.dtype()) < 16)
    return unsupported(op, " on type ", dtype_name(t.dtype()));
  return Status::ok();
}

// ---- LRN ---------------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> create_lrn(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t size, init.require_int("size"));
  XONNX_ASSIGN_OR_RETURN(float alpha, init.get_float("alpha", 1e-4f));
  XONNX_ASSIGN_OR_RETURN(float beta, init.get_float("beta", 0.75f));
  XONNX_ASSIGN_OR_RETURN(float bias, init.get_float("bias", 1.0f));
  if (size < 1) return invalid_argument("size must be >= 1, got ", size);
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_float_input(x, "LRN"));
    if (x.rank() < 2)
      return invalid_argument("input must have rank >= 2 (N, C, ...), got ", shape_to_string(x.shape()));
    const int64_t N = x.dim(0), C = x.dim(1), sp = x.numel() / std::max<int64_t>(1, N * C);
    const int64_t before = (size - 1) / 2, after = size - 1 - before;
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("LRN on ", dtype_name(x.dtype())), {
      const T* xp = x.data<T>();
      T* yp = y->data<T>();
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C; ++c) {
          const int64_t lo = std::max<int64_t>(0, c - before), hi = std::min<int64_t>(C - 1, c + after);
          for (int64_t j = 0; j < sp; ++j) {
            double sq = 0;
            for (int64_t k = lo; k <= hi; ++k) {
              const double v = static_cast<double>(to_compute(xp[(n * C + k) * sp + j]));
              sq += v * v;
            }
            const int64_t i = (n * C + c) * sp + j;
            const double den = std::pow(static_cast<double>(bias) + static_cast<double>(alpha) / size * sq, beta);
            yp[i] = from_compute<T>(static_cast<compute_t<T>>(static_cast<double>(to_compute(xp[i])) / den));
          }
        }
      }
    });
    return Status::ok();
  });
}

// ---- LpNormalization ---------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> create_lp_normalization(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis, init.get_int("axis", -1));
  XONNX_ASSIGN_OR_RETURN(int64_t p, init.get_int("p", 2));
  if (p != 1 && p != 2) return invalid_argument("p must be 1 or 2, got ", p);
  return make_kernel([axis, p](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_float_input(x, "LpNormalization"));
    XONNX_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(axis, static_cast<int64_t>(x.rank())));
    int64_t outer = 1, len = x.rank() == 0 ? 1 : x.dim(ax), inner = 1;
    for (int64_t i = 0; i < static_cast<int64_t>(x.rank()); ++i) {
      if (i < ax) outer *= x.dim(i);
      if (i > ax) inner *= x.dim(i);
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    if (y->numel() == 0) return Status::ok();  // [0, 2^40] along axis 0: 2^40 empty vectors
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("LpNormalization on ", dtype_name(x.dtype())), {
      const T* xp = x.data<T>();
      T* yp = y->data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * len * inner + i;
          double norm = 0;
          for (int64_t k = 0; k < len; ++k) {
            const double v = static_cast<double>(to_compute(xp[base + k * inner]));
            norm += p == 1 ? std::abs(v) : v * v;
          }
          if (p == 2) norm = std::sqrt(norm);
          for (int64_t k = 0; k < len; ++k) {
            const double v = static_cast<double>(to_compute(xp[base + k * inner]));
            // a zero vector stays zero (instead of 0/0)
            yp[base + k * inner] = from_compute<T>(static_cast<compute_t<T>>(norm == 0 ? 0.0 : v / norm));
          }
        }
      }
    });
    return Status::ok();
  });
}

// ---- MeanVarianceNormalization -----------------------------------------------------------

Result<std::unique_ptr<Kernel>> create_mvn(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> axes, init.get_ints("axes", {0, 2, 3}));
  return make_kernel([axes](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(check_float_input(x, "MeanVarianceNormalization"));
    const int64_t rank = static_cast<int64_t>(x.rank());
    Shape reduced = x.shape();
    for (int64_t a : axes) {
      XONNX_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, "axes"));
      reduced[ax] = 1;
    }
    const int64_t rn = shape_numel(reduced);
    const double count = rn > 0 ? static_cast<double>(x.numel()) / static_cast<double>(rn) : 0.0;
    std::vector<double> sum(static_cast<size_t>(rn), 0.0), sq(static_cast<size_t>(rn), 0.0);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("MeanVarianceNormalization on ", dtype_name(x.dtype())), {
      const T* xp = x.data<T>();
      T* yp = y->data<T>();
      ref::for_each_broadcast(x.shape(), {reduced}, [&](int64_t o, const std::vector<int64_t>& off) {
        const double v = static_cast<double>(to_compute(xp[o]));
        sum[off[0]] += v;
        sq[off[0]] += v * v;
      });
      for (int64_t r = 0; r < rn; ++r) {
        sum[r] /= count;                                                    // mean
        sq[r] = std::sqrt(std::max(0.0, sq[r] / count - sum[r] * sum[r]));  // std
      }
      ref::for_each_broadcast(x.shape(), {reduced}, [&](int64_t o, const std::vector<int64_t>& off) {
        const double v = static_cast<double>(to_compute(xp[o]));
        yp[o] = from_compute<T>(static_cast<compute_t<T>>((v - sum[off[0]]) / (sq[off[0]] + 1e-9)));
      });
    });
    return Status::ok();
  });
}

// ---- Dropout -----------------------------------------------------------------------------

// Uniform [0, 1) doubles exactly as numpy's legacy RandomState(seed).uniform: MT19937 seeded
// with init_genrand(seed) (std::mt19937's seeding) and 53-bit doubles from two draws.
double next_uniform(std::mt19937& gen) {
  const uint32_t a = gen() >> 5, b = gen() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

Result<std::unique_ptr<Kernel>> create_dropout(const KernelInit& init) {
  const int version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(float attr_ratio, init.get_float("ratio", 0.5f));
  const bool has_seed = init.has_attr("seed");
  XONNX_ASSIGN_OR_RETURN(int64_t seed, init.get_int("seed", 0));
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    double ratio = attr_ratio;
    bool training = false;  // versions < 12 run as inference (identity) in this runtime
    if (version >= 12) {
      ratio = 0.5;
      if (ctx.has_input(1)) {
        const Tensor& r = ctx.input(1);
        if (r.numel() != 1 || !dtype_is_float(r.dtype()))
          return invalid_argument("ratio must be a float scalar, got ", dtype_name(r.dtype()), " ",
                                  shape_to_string(r.shape()));
        ratio = r.get_as_double(0);
      }
      if (ctx.has_input(2)) {
        const Tensor& t = ctx.input(2);
        if (t.numel() != 1 || t.dtype() != DataType::kBool)
          return invalid_argument("training_mode must be a bool scalar, got ", dtype_name(t.dtype()), " ",
                                  shape_to_string(t.shape()));
        training = t.data<bool>()[0];
      }
    }
    const bool want_mask = ctx.num_outputs() > 1 && ctx.output_wanted(1);
    const DataType mask_type = version >= 10 ? DataType::kBool : x.dtype();
    if (!training || ratio == 0) {
      ctx.set_output(0, x);
      if (want_mask) {
        XONNX_ASSIGN_OR_RETURN(Tensor * m, ctx.allocate_output(1, mask_type, x.shape()));
        XONNX_DISPATCH_ALL_BYTES(mask_type, return unsupported("Dropout mask of type ", dtype_name(mask_type)), {
          T* mp = m->data<T>();
          for (int64_t i = 0; i < m->numel(); ++i) mp[i] = from_compute<T>(compute_t<T>(1));
        });
      }
      return Status::ok();
    }
    if (!(ratio >= 0 && ratio < 1)) return invalid_argument("ratio must be in [0, 1), got ", ratio);
    XONNX_RETURN_IF_ERROR(check_float_input(x, "training Dropout"));
    std::mt19937 gen(has_seed ? static_cast<uint32_t>(seed) : std::random_device{}());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    Tensor* m = nullptr;
    if (want_mask) {
      XONNX_ASSIGN_OR_RETURN(m, ctx.allocate_output(1, DataType::kBool, x.shape()));
    }
    const double rf = static_cast<double>(static_cast<float>(ratio));
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("Dropout on ", dtype_name(x.dtype())), {
      using CT = compute_t<T>;
      const CT scale = CT(1) / (CT(1) - static_cast<CT>(ratio));
      const T* xp = x.data<T>();
      T* yp = y->data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const bool keep = next_uniform(gen) >= rf;
        yp[i] = keep ? from_compute<T>(to_compute(xp[i]) * scale) : from_compute<T>(CT(0));
        if (m) m->data<bool>()[i] = keep;
      }
    });
    return Status::ok();
  });
}

}  // namespace

void register_normalization_misc_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "LRN", 1, kLatestVersion, create_lrn);
  XONNX_REGISTER(registry, "", "LpNormalization", 1, kLatestVersion, create_lp_normalization);
  XONNX_REGISTER(registry, "", "MeanVarianceNormalization", 9, kLatestVersion, create_mvn);
  XONNX_REGISTER(registry, "", "Dropout", 1, kLatestVersion, create_dropout);
}

}  // namespace xonnx
