// `xonnx info MODEL`: inputs, outputs (with symbolic dims), opsets, op histogram.
#include <cstdio>
#include <map>

#include "runtime/onnx/loader.h"
#include "runtime/ops/registry.h"
#include "sdk/cli/commands.h"

namespace xonnx {
namespace cli {

std::string describe_type(const TypeInfo& t) {
  switch (t.kind) {
    case TypeInfo::Kind::kTensor: {
      std::string s = dtype_name(t.elem_type);
      if (!t.has_shape) return s + "[?]";
      s += "[";
      for (size_t i = 0; i < t.dims.size(); ++i) {
        if (i) s += ", ";
        s += t.dims[i].known() ? std::to_string(t.dims[i].value)
                               : (t.dims[i].param.empty() ? "?" : t.dims[i].param);
      }
      return s + "]";
    }
    case TypeInfo::Kind::kSequence: return "sequence<" + (t.elem ? describe_type(*t.elem) : "?") + ">";
    case TypeInfo::Kind::kOptional: return "optional<" + (t.elem ? describe_type(*t.elem) : "?") + ">";
    case TypeInfo::Kind::kMap: return "map";
    case TypeInfo::Kind::kSparseTensor: return "sparse_tensor";
    default: return "unknown";
  }
}

namespace {

void count_ops(const Graph& g, std::map<std::string, int>& hist) {
  for (const Node& n : g.nodes) {
    ++hist[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type];
    for (const Attribute& a : n.attributes) {
      if (a.g) count_ops(*a.g, hist);
      for (const auto& sg : a.graphs) count_ops(*sg, hist);
    }
  }
}

int run_info(const std::string& path, bool list_ops) {
  if (list_ops) {
    for (const OpDef* d : OpRegistry::global().all()) {
      std::printf("%s%s%s  versions %d..%s\n", d->domain, *d->domain ? "::" : "", d->name,
                  d->min_version,
                  d->max_version == kLatestVersion ? "latest" : std::to_string(d->max_version).c_str());
    }
    return 0;
  }
  auto model = load_model(path);
  if (!model.is_ok()) {
    std::fprintf(stderr, "error: %s\n", model.status().to_string().c_str());
    return 1;
  }
  const Model& m = *model;
  std::printf("model: %s\nir_version: %lld\nproducer: %s %s\n", path.c_str(),
              static_cast<long long>(m.ir_version), m.producer_name.c_str(), m.producer_version.c_str());
  std::printf("opsets:");
  for (const auto& [domain, version] : m.opset_imports) {
    std::printf(" %s=%lld", domain.empty() ? "ai.onnx" : domain.c_str(), static_cast<long long>(version));
  }
  std::printf("\ninputs:\n");
  for (const ValueInfo& v : m.graph.inputs) {
    if (m.graph.find_initializer(v.name)) continue;
    std::printf("  %s: %s\n", v.name.c_str(), describe_type(v.type).c_str());
  }
  std::printf("outputs:\n");
  for (const ValueInfo& v : m.graph.outputs) {
    std::printf("  %s: %s\n", v.name.c_str(), describe_type(v.type).c_str());
  }
  int64_t weight_bytes = 0;
  for (const NamedTensor& t : m.graph.initializers) weight_bytes += static_cast<int64_t>(t.tensor.nbytes());
  std::printf("initializers: %zu (%.2f MB)\n", m.graph.initializers.size(), weight_bytes / 1e6);
  std::map<std::string, int> hist;
  count_ops(m.graph, hist);
  std::printf("nodes: %zu\nops:\n", m.graph.nodes.size());
  for (const auto& [op, count] : hist) std::printf("  %-28s %d\n", op.c_str(), count);
  return 0;
}

}  // namespace

Runner add_info_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto list_ops = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand("info", "Print a model's inputs, outputs, opsets and op histogram");
  sub->add_option("model", *path, "Model file (.onnx)");
  sub->add_flag("--ops", *list_ops, "List the operators this build implements instead");
  return [path, list_ops] {
    if (path->empty() && !*list_ops) {
      std::fprintf(stderr, "error: info needs MODEL (or --ops)\n");
      return 2;
    }
    return run_info(*path, *list_ops);
  };
}

}  // namespace cli
}  // namespace xonnx
