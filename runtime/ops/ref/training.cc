// Reference kernels: ai.onnx.preview.training optimizers (version 1): Adagrad, Adam, Momentum.
//
// Inputs are R (learning rate, scalar), T (update count, int64 scalar), then the variadic
// tensors grouped by kind: Adagrad X1..Xn, G1..Gn, H1..Hn; Adam X.., G.., V.., H..;
// Momentum X.., G.., V... Outputs are the updated tensors grouped the same way (without G).
// Arithmetic is in double; each output takes the type of the tensor it updates.
#include <cmath>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

bool is_train_float(DataType t) { return t == DataType::kFloat || t == DataType::kDouble; }

std::vector<double> load(const Tensor& t) {
  const int64_t n = t.numel();
  std::vector<double> out(static_cast<size_t>(n));
  if (t.dtype() == DataType::kFloat) {
    const float* p = t.data<float>();
    for (int64_t i = 0; i < n; ++i) out[i] = p[i];
  } else {
    const double* p = t.data<double>();
    for (int64_t i = 0; i < n; ++i) out[i] = p[i];
  }
  return out;
}

void store(Tensor* t, const std::vector<double>& v) {
  const int64_t n = t->numel();
  if (t->dtype() == DataType::kFloat) {
    float* p = t->data<float>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(v[i]);
  } else {
    double* p = t->data<double>();
    for (int64_t i = 0; i < n; ++i) p[i] = v[i];
  }
}

// The common frame: validates R, T and the groups, then for each group i calls
// `update(r, t, tensors, results)` where tensors[j] is the j-th kind of group i
// (`kinds` of them) and results must be filled with `kinds - 1` vectors (all but G).
template <typename Update>
Status run_optimizer(KernelContext& ctx, int kinds, const char* kind_names, Update update) {
  const Tensor& r = ctx.input(0);
  const Tensor& t = ctx.input(1);
  if (!r.defined() || !t.defined()) return invalid_argument("R and T are required");
  if (!is_train_float(r.dtype()) || r.numel() != 1) {
    return invalid_argument("R must be a float or double scalar, got ", dtype_name(r.dtype()), " ",
                            shape_to_string(r.shape()));
  }
  if (t.dtype() != DataType::kInt64 || t.numel() != 1) {
    return invalid_argument("T must be an int64 scalar, got ", dtype_name(t.dtype()), " ", shape_to_string(t.shape()));
  }
  const size_t rest = ctx.num_inputs() - 2;
  if (rest == 0 || rest % static_cast<size_t>(kinds) != 0) {
    return invalid_argument("expected the optimized tensors as ", kinds, " groups (", kind_names,
                            ") of equal size after R and T, got ", rest, " tensors");
  }
  const size_t n = rest / static_cast<size_t>(kinds);
  const size_t outs_per_group = static_cast<size_t>(kinds - 1);
  if (ctx.num_outputs() > n * outs_per_group) {
    return invalid_argument("at most ", n * outs_per_group, " outputs for ", n, " optimized tensors, got ",
                            ctx.num_outputs());
  }
  const double rv = r.get_as_double(0);
  const int64_t tv = t.get_as_int64(0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<const Tensor*> group;
    for (int j = 0; j < kinds; ++j) {
      const size_t idx = 2 + static_cast<size_t>(j) * n + i;
      const Tensor& x = ctx.input(idx);
      if (!x.defined()) return invalid_argument("input ", idx, " is missing");
      if (!is_train_float(x.dtype())) {
        return invalid_argument("input ", idx, " must be float or double, got ", dtype_name(x.dtype()));
      }
      if (j > 0 && x.shape() != group[0]->shape()) {
        return invalid_argument("input ", idx, " has shape ", shape_to_string(x.shape()),
                                "; the tensor it goes with (input ", 2 + i, ") has ",
                                shape_to_string(group[0]->shape()));
      }
      group.push_back(&x);
    }
    std::vector<std::vector<double>> data;
    for (const Tensor* x : group) data.push_back(load(*x));
    std::vector<std::vector<double>> results(outs_per_group);
    update(rv, tv, data, &results);
    for (size_t j = 0; j < outs_per_group; ++j) {
      const size_t out_idx = j * n + i;
      if (out_idx >= ctx.num_outputs() || !ctx.output_wanted(out_idx)) continue;
      // Output j updates input kind 0 (X) for j == 0, otherwise kind j + 1 (skipping G).
      const Tensor& src = *group[j == 0 ? 0 : j + 1];
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(out_idx, src.dtype(), src.shape()));
      store(y, results[j]);
    }
  }
  return Status::ok();
}

// ---------------------------------------------------------------- Adagrad
Result<std::unique_ptr<Kernel>> create_adagrad(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(float decay_factor, init.get_float("decay_factor", 0.0f));
  XONNX_ASSIGN_OR_RETURN(float epsilon, init.get_float("epsilon", 1e-6f));
  XONNX_ASSIGN_OR_RETURN(float norm, init.get_float("norm_coefficient", 0.0f));
  return make_kernel([=](KernelContext& ctx) -> Status {
    return run_optimizer(
        ctx, 3, "X, G, H",
        [&](double r, int64_t t, const std::vector<std::vector<double>>& d, std::vector<std::vector<double>>* out) {
          const std::vector<double>& x = d[0];
          const std::vector<double>& g = d[1];
          const std::vector<double>& h = d[2];
          const double lr = r / (1.0 + static_cast<double>(t) * decay_factor);
          std::vector<double>& x_new = (*out)[0];
          std::vector<double>& h_new = (*out)[1];
          x_new.resize(x.size());
          h_new.resize(x.size());
          for (size_t i = 0; i < x.size(); ++i) {
            const double gr = norm * x[i] + g[i];
            h_new[i] = h[i] + gr * gr;
            x_new[i] = x[i] - lr * gr / (std::sqrt(h_new[i]) + epsilon);
          }
        });
  });
}

// ---------------------------------------------------------------- Adam
Result<std::unique_ptr<Kernel>> create_adam(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(float alpha, init.get_float("alpha", 0.9f));
  XONNX_ASSIGN_OR_RETURN(float beta, init.get_float("beta", 0.999f));
  XONNX_ASSIGN_OR_RETURN(float epsilon, init.get_float("epsilon", 1e-6f));
  XONNX_ASSIGN_OR_RETURN(float norm, init.get_float("norm_coefficient", 0.0f));
  XONNX_ASSIGN_OR_RETURN(float norm_post, init.get_float("norm_coefficient_post", 0.0f));
  return make_kernel([=](KernelContext& ctx) -> Status {
    return run_optimizer(
        ctx, 4, "X, G, V, H",
        [&](double r, int64_t t, const std::vector<std::vector<double>>& d, std::vector<std::vector<double>>* out) {
          const std::vector<double>& x = d[0];
          const std::vector<double>& g = d[1];
          const std::vector<double>& v = d[2];
          const std::vector<double>& h = d[3];
          const double a = alpha, b = beta;
          double lr = r;
          if (t > 0) {
            const double td = static_cast<double>(t);
            lr = r * std::sqrt(1.0 - std::pow(b, td)) / (1.0 - std::pow(a, td));
          }
          std::vector<double>& x_new = (*out)[0];
          std::vector<double>& v_new = (*out)[1];
          std::vector<double>& h_new = (*out)[2];
          x_new.resize(x.size());
          v_new.resize(x.size());
          h_new.resize(x.size());
          for (size_t i = 0; i < x.size(); ++i) {
            const double gr = norm * x[i] + g[i];
            v_new[i] = a * v[i] + (1.0 - a) * gr;
            h_new[i] = b * h[i] + (1.0 - b) * gr * gr;
            const double xn = x[i] - lr * (v_new[i] / (std::sqrt(h_new[i]) + epsilon));
            x_new[i] = (1.0 - norm_post) * xn;
          }
        });
  });
}

// ---------------------------------------------------------------- Momentum
Result<std::unique_ptr<Kernel>> create_momentum(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(float alpha, init.require_float("alpha"));
  XONNX_ASSIGN_OR_RETURN(float beta, init.require_float("beta"));
  XONNX_ASSIGN_OR_RETURN(float norm, init.require_float("norm_coefficient"));
  XONNX_ASSIGN_OR_RETURN(std::string mode, init.require_string("mode"));
  if (mode != "standard" && mode != "nesterov") {
    return invalid_model("mode must be 'standard' or 'nesterov', got '", mode, "'");
  }
  const bool nesterov = mode == "nesterov";
  return make_kernel([=](KernelContext& ctx) -> Status {
    return run_optimizer(
        ctx, 3, "X, G, V",
        [&](double r, int64_t t, const std::vector<std::vector<double>>& d, std::vector<std::vector<double>>* out) {
          const std::vector<double>& x = d[0];
          const std::vector<double>& g = d[1];
          const std::vector<double>& v = d[2];
          // The gradient's coefficient is 1 at the first iteration.
          const double b = t > 0 ? static_cast<double>(beta) : 1.0;
          const double a = alpha;
          std::vector<double>& x_new = (*out)[0];
          std::vector<double>& v_new = (*out)[1];
          x_new.resize(x.size());
          v_new.resize(x.size());
          for (size_t i = 0; i < x.size(); ++i) {
            const double gr = norm * x[i] + g[i];
            v_new[i] = a * v[i] + b * gr;
            x_new[i] = nesterov ? x[i] - r * (gr + a * v_new[i]) : x[i] - r * v_new[i];
          }
        });
  });
}

}  // namespace

void register_training_ops(OpRegistry& registry) {
  constexpr const char* kDomain = "ai.onnx.preview.training";
  XONNX_REGISTER(registry, kDomain, "Adagrad", 1, 1, create_adagrad);
  XONNX_REGISTER(registry, kDomain, "Adam", 1, 1, create_adam);
  XONNX_REGISTER(registry, kDomain, "Momentum", 1, 1, create_momentum);
}

}  // namespace xonnx
