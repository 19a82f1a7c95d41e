// Reference kernels: recurrent networks (RNN, GRU, LSTM).
//
// All three share one driver: attributes are parsed at prepare time into RnnConfig; at run
// time the inputs are widened to double, each direction runs its own time loop per batch
// entry (honouring sequence_lens), and Y / Y_h / Y_c are written in the requested layout.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/checked.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::load_doubles;
using ref::store_doubles;

enum class CellKind { kRnn, kGru, kLstm };

enum class ActKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus,
};

struct Activation {
  ActKind kind = ActKind::kTanh;
  double alpha = 0.0;
  double beta = 0.0;

  double operator()(double x) const {
    switch (kind) {
      case ActKind::kRelu: return x > 0 ? x : 0.0;
      case ActKind::kTanh: return std::tanh(x);
      case ActKind::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
      case ActKind::kAffine: return alpha * x + beta;
      case ActKind::kLeakyRelu: return x >= 0 ? x : alpha * x;
      case ActKind::kThresholdedRelu: return x > alpha ? x : 0.0;
      case ActKind::kScaledTanh: return alpha * std::tanh(beta * x);
      case ActKind::kHardSigmoid: return std::max(0.0, std::min(1.0, alpha * x + beta));
      case ActKind::kElu: return x >= 0 ? x : alpha * (std::exp(x) - 1.0);
      case ActKind::kSoftsign: return x / (1.0 + std::fabs(x));
      case ActKind::kSoftplus: return std::log1p(std::exp(-std::fabs(x))) + std::max(x, 0.0);
    }
    return x;
  }
};

struct ActInfo {
  const char* name;
  ActKind kind;
  bool uses_alpha;
  bool uses_beta;
  double def_alpha;
  double def_beta;
};

constexpr ActInfo kActInfos[] = {
    {"relu", ActKind::kRelu, false, false, 0, 0},
    {"tanh", ActKind::kTanh, false, false, 0, 0},
    {"sigmoid", ActKind::kSigmoid, false, false, 0, 0},
    {"affine", ActKind::kAffine, true, true, 1.0, 0.0},
    {"leakyrelu", ActKind::kLeakyRelu, true, false, 0.01, 0},
    {"thresholdedrelu", ActKind::kThresholdedRelu, true, false, 1.0, 0},
    {"scaledtanh", ActKind::kScaledTanh, true, true, 1.0, 1.0},
    {"hardsigmoid", ActKind::kHardSigmoid, true, true, 0.2, 0.5},
    {"elu", ActKind::kElu, true, false, 1.0, 0},
    {"softsign", ActKind::kSoftsign, false, false, 0, 0},
    {"softplus", ActKind::kSoftplus, false, false, 0, 0},
};

struct RnnConfig {
  CellKind kind = CellKind::kRnn;
  int num_gates = 1;
  int acts_per_dir = 1;
  int64_t hidden_size = -1;  // -1: infer from R
  int num_directions = 1;
  bool reverse_only = false;
  std::vector<Activation> acts;  // acts_per_dir * num_directions
  std::optional<double> clip;
  bool linear_before_reset = false;
  bool input_forget = false;
  int64_t layout = 0;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Result<RnnConfig> parse_config(const KernelInit& init, CellKind kind) {
  RnnConfig cfg;
  cfg.kind = kind;
  std::vector<std::string> default_acts;
  switch (kind) {
    case CellKind::kRnn:
      cfg.num_gates = 1;
      cfg.acts_per_dir = 1;
      default_acts = {"Tanh"};
      break;
    case CellKind::kGru:
      cfg.num_gates = 3;
      cfg.acts_per_dir = 2;
      default_acts = {"Sigmoid", "Tanh"};
      break;
    case CellKind::kLstm:
      cfg.num_gates = 4;
      cfg.acts_per_dir = 3;
      default_acts = {"Sigmoid", "Tanh", "Tanh"};
      break;
  }
  if (init.has_attr("hidden_size")) {
    XONNX_ASSIGN_OR_RETURN(cfg.hidden_size, init.get_int("hidden_size", -1));
    if (cfg.hidden_size <= 0) {
      return invalid_model("hidden_size must be positive, got ", cfg.hidden_size);
    }
  }
  XONNX_ASSIGN_OR_RETURN(std::string direction, init.get_string("direction", "forward"));
  if (direction == "forward") {
    cfg.num_directions = 1;
  } else if (direction == "reverse") {
    cfg.num_directions = 1;
    cfg.reverse_only = true;
  } else if (direction == "bidirectional") {
    cfg.num_directions = 2;
  } else {
    return invalid_model("direction must be forward, reverse or bidirectional, got '", direction, "'");
  }
  XONNX_ASSIGN_OR_RETURN(std::vector<std::string> names, init.get_strings("activations"));
  if (names.empty()) {
    for (int d = 0; d < cfg.num_directions; ++d) {
      names.insert(names.end(), default_acts.begin(), default_acts.end());
    }
  } else if (static_cast<int>(names.size()) == cfg.acts_per_dir && cfg.num_directions == 2) {
    std::vector<std::string> twice = names;
    twice.insert(twice.end(), names.begin(), names.end());
    names = twice;
  }
  if (static_cast<int>(names.size()) != cfg.acts_per_dir * cfg.num_directions) {
    return invalid_model("activations has ", names.size(), " entries, expected ", cfg.acts_per_dir * cfg.num_directions,
                         " (", cfg.acts_per_dir, " per direction)");
  }
  XONNX_ASSIGN_OR_RETURN(std::vector<float> alphas, init.get_floats("activation_alpha"));
  XONNX_ASSIGN_OR_RETURN(std::vector<float> betas, init.get_floats("activation_beta"));
  size_t ai = 0, bi = 0;
  for (const std::string& name : names) {
    const std::string key = lower(name);
    const ActInfo* info = nullptr;
    for (const ActInfo& a : kActInfos) {
      if (key == a.name) info = &a;
    }
    if (!info) return unsupported("activation function '", name, "' is not supported");
    Activation act;
    act.kind = info->kind;
    act.alpha = info->def_alpha;
    act.beta = info->def_beta;
    if (info->uses_alpha && ai < alphas.size()) act.alpha = alphas[ai++];
    if (info->uses_beta && bi < betas.size()) act.beta = betas[bi++];
    cfg.acts.push_back(act);
  }
  if (init.has_attr("clip")) {
    XONNX_ASSIGN_OR_RETURN(float clip, init.get_float("clip", 0.0f));
    if (!(clip > 0.0f)) return invalid_model("clip must be positive, got ", clip);
    cfg.clip = clip;
  }
  if (kind == CellKind::kGru) {
    XONNX_ASSIGN_OR_RETURN(int64_t lbr, init.get_int("linear_before_reset", 0));
    cfg.linear_before_reset = lbr != 0;
  }
  if (kind == CellKind::kLstm) {
    XONNX_ASSIGN_OR_RETURN(int64_t inf, init.get_int("input_forget", 0));
    cfg.input_forget = inf != 0;
  }
  XONNX_ASSIGN_OR_RETURN(cfg.layout, init.get_int("layout", 0));
  if (cfg.layout != 0 && cfg.layout != 1) {
    return invalid_model("layout must be 0 or 1, got ", cfg.layout);
  }
  return cfg;
}

Status check_shape(const Tensor& t, const char* what, const Shape& expected, DataType dt) {
  if (t.dtype() != dt) {
    return invalid_argument(what, " must have the type of X (", dtype_name(dt), "), got ", dtype_name(t.dtype()));
  }
  if (t.shape() != expected) {
    return invalid_argument(what, " has shape ", shape_to_string(t.shape()), ", expected ", shape_to_string(expected));
  }
  return Status::ok();
}

Status run_rnn(const RnnConfig& cfg, KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& r = ctx.input(2);
  if (!x.defined() || !w.defined() || !r.defined()) {
    return invalid_argument("inputs X, W and R are required");
  }
  if (!dtype_is_float(x.dtype()) || dtype_bits(x.dtype()) < 16) {
    return unsupported("X type ", dtype_name(x.dtype()), " is not supported");
  }
  if (w.dtype() != x.dtype() || r.dtype() != x.dtype()) {
    return invalid_argument("W and R must have the type of X (", dtype_name(x.dtype()), ")");
  }
  if (x.rank() != 3) return invalid_argument("X must have rank 3, got shape ", shape_to_string(x.shape()));
  if (w.rank() != 3 || r.rank() != 3) return invalid_argument("W and R must have rank 3");
  const int64_t seq = cfg.layout == 0 ? x.dim(0) : x.dim(1);
  const int64_t batch = cfg.layout == 0 ? x.dim(1) : x.dim(0);
  const int64_t in_size = x.dim(2);
  const int64_t dirs = cfg.num_directions;
  const int64_t G = cfg.num_gates;
  const int64_t H = cfg.hidden_size > 0 ? cfg.hidden_size : r.dim(2);
  if (H <= 0) return invalid_argument("hidden size must be positive, got ", H);
  if (checked_mul(2 * dirs, G, H) < 0) return invalid_argument("hidden size ", H, " is too large");
  XONNX_RETURN_IF_ERROR(check_shape(w, "W", {dirs, G * H, in_size}, x.dtype()));
  XONNX_RETURN_IF_ERROR(check_shape(r, "R", {dirs, G * H, H}, x.dtype()));
  std::vector<double> X = load_doubles(x), W = load_doubles(w), R = load_doubles(r);
  std::vector<double> B(static_cast<size_t>(dirs * 2 * G * H), 0.0);
  if (ctx.has_input(3)) {
    XONNX_RETURN_IF_ERROR(check_shape(ctx.input(3), "B", {dirs, 2 * G * H}, x.dtype()));
    B = load_doubles(ctx.input(3));
  }
  std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
  if (ctx.has_input(4)) {
    const Tensor& sl = ctx.input(4);
    if (!dtype_is_integer(sl.dtype())) return invalid_argument("sequence_lens must be an integer tensor");
    if (sl.shape() != Shape{batch}) {
      return invalid_argument("sequence_lens has shape ", shape_to_string(sl.shape()), ", expected [", batch, "]");
    }
    for (int64_t b = 0; b < batch; ++b) {
      lens[b] = sl.get_as_int64(b);
      if (lens[b] < 0 || lens[b] > seq) {
        return invalid_argument("sequence_lens[", b, "] = ", lens[b], " is outside [0, ", seq, "]");
      }
    }
  }
  const Shape state_shape = cfg.layout == 0 ? Shape{dirs, batch, H} : Shape{batch, dirs, H};
  // States are kept as [dirs][batch][H] internally.
  auto load_state = [&](size_t idx, const char* what, std::vector<double>* out) -> Status {
    out->assign(static_cast<size_t>(dirs * batch * H), 0.0);
    if (!ctx.has_input(idx)) return Status::ok();
    XONNX_RETURN_IF_ERROR(check_shape(ctx.input(idx), what, state_shape, x.dtype()));
    std::vector<double> v = load_doubles(ctx.input(idx));
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < H; ++h) {
          const int64_t src = cfg.layout == 0 ? (d * batch + b) * H + h : (b * dirs + d) * H + h;
          (*out)[(d * batch + b) * H + h] = v[src];
        }
    return Status::ok();
  };
  std::vector<double> H0, C0, P;
  XONNX_RETURN_IF_ERROR(load_state(5, "initial_h", &H0));
  const bool lstm = cfg.kind == CellKind::kLstm;
  if (lstm) {
    XONNX_RETURN_IF_ERROR(load_state(6, "initial_c", &C0));
    P.assign(static_cast<size_t>(dirs * 3 * H), 0.0);
    if (ctx.has_input(7)) {
      XONNX_RETURN_IF_ERROR(check_shape(ctx.input(7), "P", {dirs, 3 * H}, x.dtype()));
      P = load_doubles(ctx.input(7));
    }
  }

  // Y as [seq][dirs][batch][H]; final states as [dirs][batch][H].
  std::vector<double> Y(static_cast<size_t>(seq * dirs * batch * H), 0.0);
  std::vector<double> Yh = H0, Yc = C0;
  auto clip = [&](double v) {
    if (cfg.clip) return std::max(-*cfg.clip, std::min(*cfg.clip, v));
    return v;
  };
  std::vector<double> hprev(H), cprev(H), gx(G * H), gh(G * H), hnew(H), cnew(H), zg(H), rg(H);
  for (int64_t d = 0; d < dirs; ++d) {
    const bool reverse = cfg.reverse_only || d == 1;
    const double* Wd = W.data() + d * G * H * in_size;
    const double* Rd = R.data() + d * G * H * H;
    const double* Wb = B.data() + d * 2 * G * H;
    const double* Rb = Wb + G * H;
    const Activation* act = cfg.acts.data() + d * cfg.acts_per_dir;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        hprev[h] = H0[(d * batch + b) * H + h];
        if (lstm) cprev[h] = C0[(d * batch + b) * H + h];
      }
      const int64_t len = lens[b];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        const double* xt = X.data() + (cfg.layout == 0 ? (t * batch + b) : (b * seq + t)) * in_size;
        // gx = W xt + Wb, gh = R hprev + Rb
        for (int64_t g = 0; g < G * H; ++g) {
          double sx = Wb[g], sh = Rb[g];
          const double* wrow = Wd + g * in_size;
          for (int64_t i = 0; i < in_size; ++i) sx += wrow[i] * xt[i];
          const double* rrow = Rd + g * H;
          for (int64_t j = 0; j < H; ++j) sh += rrow[j] * hprev[j];
          gx[g] = sx;
          gh[g] = sh;
        }
        switch (cfg.kind) {
          case CellKind::kRnn:
            for (int64_t h = 0; h < H; ++h) hnew[h] = act[0](clip(gx[h] + gh[h]));
            break;
          case CellKind::kGru: {
            // gates z, r, h
            for (int64_t h = 0; h < H; ++h) {
              zg[h] = act[0](clip(gx[h] + gh[h]));
              rg[h] = act[0](clip(gx[H + h] + gh[H + h]));
            }
            for (int64_t h = 0; h < H; ++h) {
              double pre;
              if (cfg.linear_before_reset) {
                pre = gx[2 * H + h] + rg[h] * gh[2 * H + h];
              } else {
                const double* rrow = Rd + (2 * H + h) * H;
                double s = Rb[2 * H + h];
                for (int64_t j = 0; j < H; ++j) s += rrow[j] * rg[j] * hprev[j];
                pre = gx[2 * H + h] + s;
              }
              const double hh = act[1](clip(pre));
              hnew[h] = (1.0 - zg[h]) * hh + zg[h] * hprev[h];
            }
            break;
          }
          case CellKind::kLstm: {
            // gates i, o, f, c; peepholes i, o, f
            const double* Pd = P.data() + d * 3 * H;
            for (int64_t h = 0; h < H; ++h) {
              const double i_g = act[0](clip(gx[h] + gh[h] + Pd[h] * cprev[h]));
              double f_g = act[0](clip(gx[2 * H + h] + gh[2 * H + h] + Pd[2 * H + h] * cprev[h]));
              if (cfg.input_forget) f_g = 1.0 - i_g;
              const double c_g = act[1](clip(gx[3 * H + h] + gh[3 * H + h]));
              const double c = f_g * cprev[h] + i_g * c_g;
              const double o_g = act[0](clip(gx[H + h] + gh[H + h] + Pd[H + h] * c));
              cnew[h] = c;
              hnew[h] = o_g * act[2](c);
            }
            break;
          }
        }
        for (int64_t h = 0; h < H; ++h) {
          hprev[h] = hnew[h];
          if (lstm) cprev[h] = cnew[h];
          Y[((t * dirs + d) * batch + b) * H + h] = hnew[h];
        }
      }
      for (int64_t h = 0; h < H; ++h) {
        Yh[(d * batch + b) * H + h] = hprev[h];
        if (lstm) Yc[(d * batch + b) * H + h] = cprev[h];
      }
    }
  }

  const DataType dt = x.dtype();
  if (ctx.output_wanted(0)) {
    const Shape yshape = cfg.layout == 0 ? Shape{seq, dirs, batch, H} : Shape{batch, seq, dirs, H};
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, yshape));
    if (cfg.layout == 0) {
      store_doubles(y, Y);
    } else {
      std::vector<double> t(Y.size());
      for (int64_t s = 0; s < seq; ++s)
        for (int64_t d = 0; d < dirs; ++d)
          for (int64_t b = 0; b < batch; ++b)
            for (int64_t h = 0; h < H; ++h)
              t[((b * seq + s) * dirs + d) * H + h] = Y[((s * dirs + d) * batch + b) * H + h];
      store_doubles(y, t);
    }
  }
  auto write_state = [&](size_t idx, const std::vector<double>& st) -> Status {
    if (idx >= ctx.num_outputs() || !ctx.output_wanted(idx)) return Status::ok();
    XONNX_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output(idx, dt, state_shape));
    if (cfg.layout == 0) {
      store_doubles(out, st);
      return Status::ok();
    }
    std::vector<double> t(st.size());
    for (int64_t d = 0; d < dirs; ++d)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < H; ++h) t[(b * dirs + d) * H + h] = st[(d * batch + b) * H + h];
    store_doubles(out, t);
    return Status::ok();
  };
  XONNX_RETURN_IF_ERROR(write_state(1, Yh));
  if (lstm) XONNX_RETURN_IF_ERROR(write_state(2, Yc));
  return Status::ok();
}

template <CellKind K>
Result<std::unique_ptr<Kernel>> create_recurrent(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(RnnConfig cfg, parse_config(init, K));
  return make_kernel([cfg](KernelContext& ctx) -> Status { return run_rnn(cfg, ctx); });
}

}  // namespace

void register_rnn_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "RNN", 1, kLatestVersion, create_recurrent<CellKind::kRnn>);
  XONNX_REGISTER(registry, "", "GRU", 1, kLatestVersion, create_recurrent<CellKind::kGru>);
  XONNX_REGISTER(registry, "", "LSTM", 1, kLatestVersion, create_recurrent<CellKind::kLstm>);
}

}  // namespace xonnx
