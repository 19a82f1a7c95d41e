#include "runtime/ops/registry.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

namespace xonnx {

namespace {
const std::unordered_map<std::string, std::vector<int>>& onnx_version_table() {
  static const auto* table = new std::unordered_map<std::string, std::vector<int>>{
#define XONNX_ONNX_OP(name, ...) {name, std::vector<int> __VA_ARGS__},
#include "runtime/ops/onnx_op_versions.inc"
#undef XONNX_ONNX_OP
      // ONNX Runtime's contrib schemas that it registers in the default domain, as its
      // GenAI model builder writes them (no ai.onnx version of these exists).
      {"SimplifiedLayerNormalization", {1}},
  };
  return *table;
}
}  // namespace

const std::vector<int>* OpRegistry::onnx_versions(const std::string& op) {
  const auto& table = onnx_version_table();
  auto it = table.find(op);
  return it == table.end() ? nullptr : &it->second;
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry();
#define XONNX_OP_FAMILY(fn) fn(*r);
#include "runtime/ops/op_families.inc"
#undef XONNX_OP_FAMILY
    return r;
  }();
  return *registry;
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kXnnpack: return "xnnpack";
    case Backend::kOptimized: return "optimized";
    case Backend::kReference: return "reference";
  }
  return "unknown";
}

void OpRegistry::add(const OpDef& def) {
  auto& defs = ops_[{def.domain, def.name}];
  defs.push_back(def);
  // Keep fastest first so resolve() lists candidates in the order they are tried.
  auto rank = [](const OpDef& d) { return d.before_xnnpack ? -1 : static_cast<int>(d.backend); };
  std::stable_sort(defs.begin(), defs.end(), [&](const OpDef& a, const OpDef& b) { return rank(a) < rank(b); });
}

bool OpRegistry::has_fast_kernel(const std::string& domain, const std::string& op) const {
  auto it = ops_.find({domain, op});
  if (it == ops_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [](const OpDef& d) {
    return d.backend != Backend::kReference && (d.available == nullptr || d.available());
  });
}

RowFunction OpRegistry::row_function(const std::string& name) const {
  auto it = row_functions_.find(name);
  return it == row_functions_.end() ? nullptr : it->second;
}

Result<ResolvedOp> OpRegistry::resolve(const std::string& domain, const std::string& op,
                                       int64_t opset) const {
  const std::string shown = domain.empty() ? op : domain + "::" + op;
  int since = static_cast<int>(opset);
  if (domain.empty()) {
    const std::vector<int>* versions = onnx_versions(op);
    if (!versions) return unsupported("unknown ONNX operator '", op, "'");
    since = 0;
    for (int v : *versions) {
      if (v <= opset) since = v;
    }
    if (since == 0) {
      return invalid_model("operator '", op, "' does not exist in opset ", opset,
                           " (first defined in opset ", versions->front(), ")");
    }
  }
  auto it = ops_.find({domain, op});
  if (it == ops_.end()) {
    return unsupported("operator '", shown, "' is not implemented (opset ", opset, ")");
  }
  ResolvedOp resolved;
  resolved.since_version = since;
  for (const OpDef& def : it->second) {
    if (def.min_version <= since && since <= def.max_version) {
      resolved.candidates.push_back(&def);
      resolved.def = &def;  // ends as the slowest (reference) candidate
    }
  }
  if (!resolved.candidates.empty()) return resolved;
  std::ostringstream have;
  for (const OpDef& def : it->second) {
    have << " [" << def.min_version << ", "
         << (def.max_version == kLatestVersion ? std::string("latest")
                                               : std::to_string(def.max_version))
         << "]";
  }
  return unsupported("operator '", shown, "' version ", since, " (opset ", opset,
                     ") is not implemented; implemented versions:", have.str());
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> out;
  for (const auto& [key, defs] : ops_) {
    for (const OpDef& d : defs) out.push_back(&d);
  }
  return out;
}

}  // namespace xonnx
