// Reference kernels: signal processing (DFT, STFT, window functions, MelWeightMatrix).
//
// Transforms are direct O(n^2) DFTs in double with exact twiddles (index k*t reduced mod n),
// which keeps results accurate for any length, prime or not.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using ref::is_float_type;
using ref::load_doubles;

using cd = std::complex<double>;
constexpr double kPi = 3.14159265358979323846;

// Stores value(i), a double, into element i of any numeric tensor (float types round, integer
// types truncate).
template <typename ValueAt>
Status store_numeric_fn(Tensor* t, ValueAt&& value) {
  const int64_t n = t->numel();
  XONNX_DISPATCH_NUMERIC(t->dtype(), return unsupported("output type ", dtype_name(t->dtype())), {
    T* p = t->data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(value(i)));
  });
  return Status::ok();
}

Status store_numeric(Tensor* t, const std::vector<double>& v) {
  return store_numeric_fn(t, [&](int64_t i) { return v[static_cast<size_t>(i)]; });
}

Result<int64_t> scalar_int(const Tensor& t, const char* what) {
  if (!dtype_is_integer(t.dtype())) {
    return invalid_argument(what, " must be an integer tensor, got ", dtype_name(t.dtype()));
  }
  if (t.numel() != 1) {
    return invalid_argument(what, " must be a scalar, got shape ", shape_to_string(t.shape()));
  }
  return t.get_as_int64(0);
}

Result<double> scalar_double(const Tensor& t, const char* what) {
  if (t.numel() != 1) {
    return invalid_argument(what, " must be a scalar, got shape ", shape_to_string(t.shape()));
  }
  if (t.dtype() == DataType::kString || t.dtype() == DataType::kBool) {
    return invalid_argument(what, " must be numeric, got ", dtype_name(t.dtype()));
  }
  return t.get_as_double(0);
}

// Twiddle table e^{sign * 2 pi i m / n} for m in [0, n).
std::vector<cd> twiddles(int64_t n, double sign) {
  std::vector<cd> w(static_cast<size_t>(n));
  for (int64_t m = 0; m < n; ++m) {
    const double a = sign * 2.0 * kPi * static_cast<double>(m) / static_cast<double>(n);
    w[m] = cd(std::cos(a), std::sin(a));
  }
  return w;
}

// out[k] = sum_t in[t] * w[(k*t) mod n], for k in [0, out_len); in has n entries.
void dft_direct(const std::vector<cd>& in, const std::vector<cd>& w, int64_t out_len, std::vector<cd>* out) {
  const int64_t n = static_cast<int64_t>(in.size());
  out->assign(static_cast<size_t>(out_len), cd(0, 0));
  for (int64_t k = 0; k < out_len; ++k) {
    cd s(0, 0);
    int64_t idx = 0;
    const int64_t step = k % n;
    for (int64_t t = 0; t < n; ++t) {
      s += in[t] * w[idx];
      idx += step;
      if (idx >= n) idx -= n;
    }
    (*out)[k] = s;
  }
}

// ---------------------------------------------------------------------------------------
// DFT

Result<std::unique_ptr<Kernel>> create_dft(const KernelInit& init) {
  const int version = init.since_version();
  XONNX_ASSIGN_OR_RETURN(int64_t inverse_i, init.get_int("inverse", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t onesided_i, init.get_int("onesided", 0));
  int64_t axis_attr = 1;
  if (version < 20) {
    XONNX_ASSIGN_OR_RETURN(axis_attr, init.get_int("axis", 1));
  }
  const bool inverse = inverse_i != 0, onesided = onesided_i != 0;
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!is_float_type(x.dtype())) {
      return unsupported("input type ", dtype_name(x.dtype()), " is not supported");
    }
    const int64_t r = static_cast<int64_t>(x.rank());
    if (r < 2) return invalid_argument("input must have rank >= 2, got ", shape_to_string(x.shape()));
    const int64_t comp = x.dim(r - 1);
    if (comp != 1 && comp != 2) {
      return invalid_argument("last input dimension must be 1 (real) or 2 (complex), got ", comp);
    }
    int64_t axis = axis_attr;
    if (version >= 20) {
      axis = -2;
      if (ctx.num_inputs() > 2 && ctx.has_input(2)) {
        XONNX_ASSIGN_OR_RETURN(axis, scalar_int(ctx.input(2), "axis"));
      }
    }
    if (axis < -r || axis > r - 2 || axis == -1) {
      return invalid_argument("axis ", axis, " is out of range for input rank ", r,
                              " (the last dimension holds the complex parts)");
    }
    if (axis < 0) axis += r;
    const int64_t in_len = x.dim(axis);
    const bool irfft = inverse && onesided;
    int64_t n = irfft ? 2 * (in_len - 1) : in_len;
    if (ctx.num_inputs() > 1 && ctx.has_input(1)) {
      XONNX_ASSIGN_OR_RETURN(n, scalar_int(ctx.input(1), "dft_length"));
    }
    if (n <= 0) return invalid_argument("dft_length must be positive, got ", n);
    const int64_t out_len = irfft ? n : (onesided ? n / 2 + 1 : n);
    const int64_t out_comp = irfft ? 1 : 2;
    Shape out_shape = x.shape();
    out_shape[axis] = out_len;
    out_shape[r - 1] = out_comp;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < r - 1; ++d) inner *= x.dim(d);
    const std::vector<double> X = load_doubles(x);
    std::vector<double> Y(static_cast<size_t>(outer * out_len * inner * out_comp), 0.0);
    const std::vector<cd> w = twiddles(n, inverse ? 1.0 : -1.0);
    std::vector<cd> sig(static_cast<size_t>(n)), res;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        auto in_at = [&](int64_t t) {
          const int64_t base = ((o * in_len + t) * inner + i) * comp;
          return cd(X[base], comp == 2 ? X[base + 1] : 0.0);
        };
        auto out_base = [&](int64_t k) { return ((o * out_len + k) * inner + i) * out_comp; };
        if (irfft) {
          // numpy irfft: Hermitian extension of the first n/2+1 bins; imaginary parts of the
          // DC (and, for even n, Nyquist) bins are ignored.
          const int64_t bins = n / 2 + 1;
          std::vector<cd> spec(static_cast<size_t>(bins), cd(0, 0));
          for (int64_t k = 0; k < std::min(bins, in_len); ++k) spec[k] = in_at(k);
          for (int64_t t = 0; t < n; ++t) {
            double s = spec[0].real();
            int64_t idx = t % n;
            int64_t pos = idx;
            for (int64_t k = 1; k < bins; ++k, pos = (pos + idx) % n) {
              if (2 * k == n) {
                s += spec[k].real() * w[pos].real();
              } else {
                s += 2.0 * (spec[k] * w[pos]).real();
              }
            }
            Y[out_base(t)] = s / static_cast<double>(n);
          }
          continue;
        }
        for (int64_t t = 0; t < n; ++t) sig[t] = t < in_len ? in_at(t) : cd(0, 0);
        dft_direct(sig, w, out_len, &res);
        for (int64_t k = 0; k < out_len; ++k) {
          cd v = res[k];
          if (inverse) v /= static_cast<double>(n);
          Y[out_base(k)] = v.real();
          Y[out_base(k) + 1] = v.imag();
        }
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
    return store_numeric(y, Y);
  });
}

// ---------------------------------------------------------------------------------------
// STFT

Result<std::unique_ptr<Kernel>> create_stft(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t onesided_i, init.get_int("onesided", 1));
  const bool onesided = onesided_i != 0;
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!is_float_type(x.dtype())) {
      return unsupported("signal type ", dtype_name(x.dtype()), " is not supported");
    }
    if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2)) {
      return invalid_argument("signal must be [batch, length, 1 or 2], got ", shape_to_string(x.shape()));
    }
    const int64_t batch = x.dim(0), len = x.dim(1), comp = x.dim(2);
    XONNX_ASSIGN_OR_RETURN(int64_t step, scalar_int(ctx.input(1), "frame_step"));
    if (step <= 0) return invalid_argument("frame_step must be positive, got ", step);
    const bool has_window = ctx.num_inputs() > 2 && ctx.has_input(2);
    const bool has_flen = ctx.num_inputs() > 3 && ctx.has_input(3);
    int64_t flen = len;
    std::vector<double> window;
    if (has_window) {
      const Tensor& wt = ctx.input(2);
      if (wt.rank() != 1 || !is_float_type(wt.dtype())) {
        return invalid_argument("window must be a 1-D float tensor, got ", shape_to_string(wt.shape()));
      }
      window = load_doubles(wt);
      flen = wt.dim(0);
    }
    if (has_flen) {
      XONNX_ASSIGN_OR_RETURN(int64_t fl, scalar_int(ctx.input(3), "frame_length"));
      if (has_window && fl != flen) {
        return invalid_argument("frame_length ", fl, " differs from the window length ", flen);
      }
      flen = fl;
    }
    if (flen <= 0 || flen > len) {
      return invalid_argument("frame_length ", flen, " must be in [1, signal length ", len, "]");
    }
    if (!has_window) window.assign(static_cast<size_t>(flen), 1.0);
    const int64_t frames = (len - flen) / step + 1;
    const int64_t bins = onesided ? flen / 2 + 1 : flen;
    const std::vector<double> X = load_doubles(x);
    std::vector<double> Y(static_cast<size_t>(batch * frames * bins * 2), 0.0);
    const std::vector<cd> w = twiddles(flen, -1.0);
    std::vector<cd> sig(static_cast<size_t>(flen)), res;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t f = 0; f < frames; ++f) {
        for (int64_t t = 0; t < flen; ++t) {
          const int64_t base = (b * len + f * step + t) * comp;
          sig[t] = cd(X[base], comp == 2 ? X[base + 1] : 0.0) * window[t];
        }
        dft_direct(sig, w, bins, &res);
        for (int64_t k = 0; k < bins; ++k) {
          const int64_t o = ((b * frames + f) * bins + k) * 2;
          Y[o] = res[k].real();
          Y[o + 1] = res[k].imag();
        }
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {batch, frames, bins, 2}));
    return store_numeric(y, Y);
  });
}

// ---------------------------------------------------------------------------------------
// Window functions

enum class WindowKind { kHann, kHamming, kBlackman };

Result<DataType> parse_output_datatype(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t odt, init.get_int("output_datatype", 1));
  if (odt <= 0 || odt > kMaxDataTypeValue || !dtype_is_known(static_cast<int32_t>(odt))) {
    return invalid_model("output_datatype ", odt, " is not a valid data type");
  }
  const DataType dt = static_cast<DataType>(odt);
  switch (dt) {
    case DataType::kFloat:
    case DataType::kDouble:
    case DataType::kFloat16:
    case DataType::kBFloat16:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt16:
    case DataType::kUint16:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64: return dt;
    default: return unsupported("output_datatype ", dtype_name(dt), " is not supported");
  }
}

template <WindowKind K>
Result<std::unique_ptr<Kernel>> create_window(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(DataType out_dt, parse_output_datatype(init));
  XONNX_ASSIGN_OR_RETURN(int64_t periodic_i, init.get_int("periodic", 1));
  const bool periodic = periodic_i != 0;
  return make_kernel([=](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(int64_t size, scalar_int(ctx.input(0), "size"));
    if (size < 0) return invalid_argument("size must be non-negative, got ", size);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, {size}));  // checks the memory cap
    // Computed into the output directly: a window may be most of the memory cap.
    const double N = static_cast<double>(periodic ? size : size - 1);
    return store_numeric_fn(y, [N](int64_t i) {
      if (N == 0) return 1.0;
      const double a = 2.0 * kPi * static_cast<double>(i) / N;
      switch (K) {
        case WindowKind::kHann: return 0.5 - 0.5 * std::cos(a);
        case WindowKind::kHamming: return 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * std::cos(a);
        case WindowKind::kBlackman: break;
      }
      return 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2.0 * a);
    });
  });
}

// ---------------------------------------------------------------------------------------
// MelWeightMatrix

Result<std::unique_ptr<Kernel>> create_mel_weight_matrix(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(DataType out_dt, parse_output_datatype(init));
  return make_kernel([=](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(int64_t num_mel, scalar_int(ctx.input(0), "num_mel_bins"));
    XONNX_ASSIGN_OR_RETURN(int64_t dft_length, scalar_int(ctx.input(1), "dft_length"));
    XONNX_ASSIGN_OR_RETURN(int64_t sample_rate, scalar_int(ctx.input(2), "sample_rate"));
    XONNX_ASSIGN_OR_RETURN(double lower, scalar_double(ctx.input(3), "lower_edge_hertz"));
    XONNX_ASSIGN_OR_RETURN(double upper, scalar_double(ctx.input(4), "upper_edge_hertz"));
    if (num_mel <= 0 || dft_length <= 0 || sample_rate <= 0) {
      return invalid_argument("num_mel_bins, dft_length and sample_rate must be positive (got ", num_mel, ", ",
                              dft_length, ", ", sample_rate, ")");
    }
    if (!(lower >= 0) || !(upper > lower)) {
      return invalid_argument("need 0 <= lower_edge_hertz < upper_edge_hertz, got ", lower, ", ", upper);
    }
    const int64_t spec_bins = dft_length / 2 + 1;
    const double low_mel = 2595.0 * std::log10(1.0 + lower / 700.0);
    const double high_mel = 2595.0 * std::log10(1.0 + upper / 700.0);
    const double mel_step = (high_mel - low_mel) / static_cast<double>(num_mel + 2);
    std::vector<int64_t> fb(static_cast<size_t>(num_mel + 2));
    for (int64_t i = 0; i < num_mel + 2; ++i) {
      const double mel = static_cast<double>(i) * mel_step + low_mel;
      const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
      fb[i] =
          static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
      if (fb[i] < 0 || fb[i] >= spec_bins) {
        return invalid_argument("upper_edge_hertz ", upper, " maps past the last spectrogram bin (", spec_bins,
                                " bins for dft_length ", dft_length, ", sample_rate ", sample_rate, ")");
      }
    }
    std::vector<double> out(static_cast<size_t>(spec_bins * num_mel), 0.0);
    for (int64_t i = 0; i < num_mel; ++i) {
      const int64_t lo = fb[i], c = fb[i + 1], hi = fb[i + 2];
      if (c == lo) {
        out[c * num_mel + i] = 1.0;
      } else {
        for (int64_t j = lo; j <= c; ++j) {
          out[j * num_mel + i] = static_cast<double>(j - lo) / static_cast<double>(c - lo);
        }
      }
      if (hi > c) {
        for (int64_t j = c; j < hi; ++j) {
          out[j * num_mel + i] = static_cast<double>(hi - j) / static_cast<double>(hi - c);
        }
      }
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out_dt, {spec_bins, num_mel}));
    return store_numeric(y, out);
  });
}

}  // namespace

void register_signal_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "DFT", 17, kLatestVersion, create_dft);
  XONNX_REGISTER(registry, "", "STFT", 17, kLatestVersion, create_stft);
  XONNX_REGISTER(registry, "", "HannWindow", 17, kLatestVersion, create_window<WindowKind::kHann>);
  XONNX_REGISTER(registry, "", "HammingWindow", 17, kLatestVersion, create_window<WindowKind::kHamming>);
  XONNX_REGISTER(registry, "", "BlackmanWindow", 17, kLatestVersion, create_window<WindowKind::kBlackman>);
  XONNX_REGISTER(registry, "", "MelWeightMatrix", 17, kLatestVersion, create_mel_weight_matrix);
}

}  // namespace xonnx
