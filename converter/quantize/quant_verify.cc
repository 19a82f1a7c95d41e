#include "converter/quantize/quant_verify.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace xonnx {
namespace convert {
namespace {

std::string fmt(double v, const char* f = "%.4g") {
  char buf[32];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

}  // namespace

bool QuantVerifyResult::ok() const {
  for (const OutputAgreement& o : outputs) {
    if (o.low) return false;
  }
  return true;
}

OutputAgreement compare_outputs(const std::string& name, const Value& va, const Value& vb, double threshold) {
  OutputAgreement d;
  d.name = name;
  if (!va.is_tensor() || !vb.is_tensor()) {
    d.error = "not a tensor output";
  } else if (va.tensor().shape() != vb.tensor().shape()) {
    d.error = "shape " + shape_to_string(va.tensor().shape()) + " vs " + shape_to_string(vb.tensor().shape());
  } else if (va.tensor().dtype() == DataType::kString || vb.tensor().dtype() == DataType::kString) {
    d.error = "string output";
  }
  if (!d.error.empty()) {
    d.low = true;
    return d;
  }
  const Tensor& a = va.tensor();
  const Tensor& b = vb.tensor();
  d.elements = a.numel();
  double dot = 0, na = 0, nb = 0;
  for (int64_t i = 0; i < d.elements; ++i) {
    const double x = a.get_as_double(i), y = b.get_as_double(i);
    dot += x * y;
    na += x * x;
    nb += y * y;
    const double diff = std::fabs(x - y);
    if (std::isnan(diff) || diff > d.max_abs) d.max_abs = std::isnan(diff) ? NAN : diff;
  }
  if (na == 0 && nb == 0)
    d.cosine = 1.0;
  else if (na == 0 || nb == 0)
    d.cosine = 0.0;
  else
    d.cosine = dot / std::sqrt(na * nb);
  if (a.rank() >= 1 && a.dim(a.rank() - 1) > 1 && dtype_is_float(a.dtype())) {
    const int64_t classes = a.dim(a.rank() - 1);
    d.rows = d.elements / classes;
    int64_t agree = 0;
    for (int64_t r = 0; r < d.rows; ++r) {
      int64_t ia = 0, ib = 0;
      for (int64_t c = 1; c < classes; ++c) {
        if (a.get_as_double(r * classes + c) > a.get_as_double(r * classes + ia)) ia = c;
        if (b.get_as_double(r * classes + c) > b.get_as_double(r * classes + ib)) ib = c;
      }
      agree += ia == ib ? 1 : 0;
    }
    d.top1 = d.rows ? static_cast<double>(agree) / static_cast<double>(d.rows) : 1.0;
  }
  d.low = !(d.cosine >= threshold);
  return d;
}

Result<QuantVerifyResult> compare_quantized(Model original, Model quantized, const NamedValues& inputs, int num_threads,
                                            double threshold) {
  QuantVerifyResult r;
  r.threshold = threshold;
  std::vector<std::string> names_a, names_b;
  for (const ValueInfo& v : original.graph.outputs) names_a.push_back(v.name);
  for (const ValueInfo& v : quantized.graph.outputs) names_b.push_back(v.name);
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> va, run_model(std::move(original), inputs, num_threads, "original"));
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> vb, run_model(std::move(quantized), inputs, num_threads, "quantized"));
  for (size_t i = 0; i < names_a.size() && i < va.size(); ++i) {
    size_t j = 0;
    while (j < names_b.size() && names_b[j] != names_a[i]) ++j;
    if (j >= vb.size()) {
      OutputAgreement d;
      d.name = names_a[i];
      d.error = "the quantized model has no output '" + names_a[i] + "'";
      d.low = true;
      r.outputs.push_back(d);
      continue;
    }
    r.outputs.push_back(compare_outputs(names_a[i], va[i], vb[j], threshold));
  }
  return r;
}

std::string quant_verify_markdown(const QuantVerifyResult& r) {
  std::ostringstream os;
  os << "| output | elements | cosine | max abs diff | top-1 agreement | cosine >= " << fmt(r.threshold)
     << " |\n|---|---:|---:|---:|---:|---|\n";
  for (const OutputAgreement& d : r.outputs) {
    if (!d.error.empty()) {
      os << "| `" << d.name << "` | | | | | **no**: " << d.error << " |\n";
      continue;
    }
    os << "| `" << d.name << "` | " << d.elements << " | " << fmt(d.cosine, "%.6f") << " | " << fmt(d.max_abs) << " | "
       << (d.rows ? fmt(100.0 * d.top1, "%.1f") + "% of " + std::to_string(d.rows) : std::string("-")) << " | "
       << (d.low ? "**no (low)**" : "yes") << " |\n";
  }
  return os.str();
}

}  // namespace convert
}  // namespace xonnx
