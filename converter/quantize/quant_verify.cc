#include "converter/quantize/quant_verify.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "runtime/ir/graph_edit.h"

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

Model without_activation_rounding(Model m, int* pairs) {
  Graph& g = m.graph;
  const GraphIndex index(g);
  struct Clamp {
    std::string x;
    float lo, hi;
  };
  std::map<size_t, Clamp> clamps;  // by the DQ's index
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& dq = g.nodes[i];
    if (dq.op_type != "DequantizeLinear" || !dq.domain.empty() || dq.inputs.size() < 3) continue;
    const int q = index.producer(dq.inputs[0]);
    if (q < 0) continue;
    const Node& qn = g.nodes[static_cast<size_t>(q)];
    if (qn.op_type != "QuantizeLinear" || !qn.domain.empty() || qn.inputs.size() < 3 ||
        constant_tensor(g, qn.inputs[0]) || qn.inputs[1] != dq.inputs[1] || qn.inputs[2] != dq.inputs[2]) {
      continue;
    }
    const Tensor* scale = constant_tensor(g, qn.inputs[1]);
    const Tensor* zp = constant_tensor(g, qn.inputs[2]);
    if (!scale || !zp || scale->numel() != 1 || zp->numel() != 1 || scale->dtype() != DataType::kFloat ||
        (zp->dtype() != DataType::kUint8 && zp->dtype() != DataType::kInt8)) {
      continue;
    }
    // The Q clamps to its codes' range: that stays (it may stand for a folded Relu / Clip).
    const double qmin = zp->dtype() == DataType::kUint8 ? 0 : -128, qmax = qmin + 255;
    const double sc = scale->data<float>()[0], z = zp->get_as_double(0);
    clamps[i] = {qn.inputs[0], static_cast<float>((qmin - z) * sc), static_cast<float>((qmax - z) * sc)};
  }
  NameAllocator names(g);  // collected once: each clamp adds three names
  std::vector<Node> nodes;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    auto c = clamps.find(i);
    if (c == clamps.end()) {
      nodes.push_back(std::move(g.nodes[i]));
      continue;
    }
    const Node& dq = g.nodes[i];
    const std::string lo =
        add_initializer(g, names, dq.outputs[0] + "_lo", Tensor::from_vector<float>({c->second.lo}, {}));
    const std::string hi =
        add_initializer(g, names, dq.outputs[0] + "_hi", Tensor::from_vector<float>({c->second.hi}, {}));
    Node above;
    above.name = dq.name + "_max";
    above.op_type = "Max";
    above.inputs = {c->second.x, lo};
    above.outputs = {names.fresh(dq.outputs[0] + "_above_lo")};
    Node below;
    below.name = dq.name + "_min";
    below.op_type = "Min";
    below.inputs = {above.outputs[0], hi};
    below.outputs = dq.outputs;
    nodes.push_back(std::move(above));
    nodes.push_back(std::move(below));
  }
  g.nodes = std::move(nodes);
  const int count = static_cast<int>(clamps.size());
  if (pairs) *pairs = count;
  std::set<std::string> read;  // the Qs nothing reads any more go
  for (const Node& n : g.nodes) read.insert(n.inputs.begin(), n.inputs.end());
  for (const ValueInfo& v : g.outputs) read.insert(v.name);
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    dead[i] = g.nodes[i].op_type == "QuantizeLinear" && g.nodes[i].domain.empty() && !read.count(g.nodes[i].outputs[0]);
  }
  erase_nodes(g, dead);
  return m;
}

Result<QuantVerifyResult> compare_quantized(Model original, Model quantized, const NamedValues& inputs, int num_threads,
                                            double threshold) {
  QuantVerifyResult r;
  r.threshold = threshold;
  std::vector<std::string> names_a, names_b;
  for (const ValueInfo& v : original.graph.outputs) names_a.push_back(v.name);
  for (const ValueInfo& v : quantized.graph.outputs) names_b.push_back(v.name);
  int pairs = 0;
  Model weights_alone = without_activation_rounding(clone_model(quantized), &pairs);
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> va, run_model(std::move(original), inputs, num_threads, "original"));
  XONNX_ASSIGN_OR_RETURN(std::vector<Value> vb, run_model(std::move(quantized), inputs, num_threads, "quantized"));
  std::vector<Value> vw;
  if (pairs > 0) {
    XONNX_ASSIGN_OR_RETURN(vw, run_model(std::move(weights_alone), inputs, num_threads, "weights-alone variant"));
  }
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
    if (j < vw.size() && r.outputs.back().error.empty()) {
      r.outputs.back().weights_alone_cosine = compare_outputs(names_a[i], va[i], vw[j], threshold).cosine;
    }
  }
  return r;
}

std::string quant_verify_markdown(const QuantVerifyResult& r) {
  bool split = false;
  for (const OutputAgreement& d : r.outputs) split = split || d.weights_alone_cosine >= 0;
  std::ostringstream os;
  os << "| output | elements | cosine |" << (split ? " cosine, weights alone |" : "")
     << " max abs diff | top-1 agreement | cosine >= " << fmt(r.threshold) << " |\n|---|---:|---:|"
     << (split ? "---:|" : "") << "---:|---:|---|\n";
  for (const OutputAgreement& d : r.outputs) {
    if (!d.error.empty()) {
      os << "| `" << d.name << "` | | |" << (split ? " |" : "") << " | | **no**: " << d.error << " |\n";
      continue;
    }
    os << "| `" << d.name << "` | " << d.elements << " | " << fmt(d.cosine, "%.6f") << " | ";
    if (split) os << (d.weights_alone_cosine >= 0 ? fmt(d.weights_alone_cosine, "%.6f") : std::string("-")) << " | ";
    os << fmt(d.max_abs) << " | "
       << (d.rows ? fmt(100.0 * d.top1, "%.1f") + "% of " + std::to_string(d.rows) : std::string("-")) << " | "
       << (d.low ? "**no (low)**" : "yes") << " |\n";
  }
  if (split) {
    os << "\n\"Weights alone\" runs the quantized model without rounding its activations (each is still clamped "
          "to its quantization range). Close to the cosine: the weights' rounding causes the loss, and the model "
          "is that sensitive to 8-bit weights. Close to 1: the activations' rounding does (try more calibration "
          "samples or --calibration-method percentile). Either way, --target-cosine keeps the layers that cost the "
          "most in float, and --exclude the ones you name.\n";
  }
  return os.str();
}

}  // namespace convert
}  // namespace xonnx
