#include "runtime/ops/registry.h"

#include <algorithm>
#include <initializer_list>
#include <unordered_map>

#include "runtime/ops/op_families.h"

namespace xonnx {

namespace {
// Which linked family registered each op, recorded while global() registers them.
struct FamilyIndex {
  const char* registering = nullptr;  // short name of the family being registered
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_op;
  size_t linked = 0;
};
FamilyIndex& family_index() {
  static auto* index = new FamilyIndex();
  return *index;
}

const std::unordered_map<std::string, std::vector<int>>& onnx_version_table() {
  // Constant rows, turned into the map by one loop: a braced map initializer of ~200 strings
  // and vectors took 75 s to compile and 35 KB more code.
  struct Row {
    const char* op;
    std::initializer_list<int> versions;
  };
  static const Row kRows[] = {
#define XONNX_ONNX_OP(name, ...) {name, __VA_ARGS__},
#include "runtime/ops/onnx_op_versions.inc"
#undef XONNX_ONNX_OP
      // ONNX Runtime's contrib schemas that it registers in the default domain, as its
      // GenAI model builder writes them (no ai.onnx version of these exists).
      {"SimplifiedLayerNormalization", {1}},
  };
  static const auto* table = [] {
    auto* t = new std::unordered_map<std::string, std::vector<int>>();
    for (const Row& row : kRows) t->emplace(row.op, std::vector<int>(row.versions));
    return t;
  }();
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
    FamilyIndex& index = family_index();
    const OpFamily* families = linked_op_families(&index.linked);
    for (size_t i = 0; i < index.linked; ++i) {
      std::string name = families[i].function;  // register_<name>_ops
      name = name.substr(9, name.size() - 13);
      index.registering = name.c_str();
      families[i].register_ops(*r);
    }
    index.registering = nullptr;
    return r;
  }();
  return *registry;
}

size_t op_family_count() {
  return 0
#define XONNX_OP_FAMILY(family) +1
#include "runtime/ops/ops.def"
#undef XONNX_OP_FAMILY
      ;
}

std::vector<std::string> families_of_op(const std::string& domain, const std::string& op) {
  OpRegistry::global();
  const auto& by_op = family_index().by_op;
  auto it = by_op.find({domain, op});
  return it == by_op.end() ? std::vector<std::string>{} : it->second;
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::kXnnpack: return "xnnpack";
    case Backend::kOptimized: return "optimized";
    case Backend::kReference: return "reference";
  }
  return "unknown";
}

namespace {
int priority_of(const OpDef& d) {
  if (d.priority != kBackendPriority) return d.priority;
  switch (d.backend) {
    case Backend::kXnnpack: return kPriorityXnnpack;
    case Backend::kOptimized: return kPriorityOptimized;
    case Backend::kReference: return kPriorityReference;
  }
  return kPriorityReference;
}
}  // namespace

void OpRegistry::add(const OpDef& def) {
  const OpSpec* spec = find_op_spec(def.domain, def.name);
  if (def.backend == Backend::kReference) spec = find_op_spec(def.domain, def.name, def.min_version);
  if (!spec || (def.backend == Backend::kReference &&
                (spec->min_version != def.min_version || spec->max_version != def.max_version))) {
    unlisted_.push_back(std::string(def.domain) + "::" + def.name + " [" + std::to_string(def.min_version) + ", " +
                        (def.max_version == kLatestVersion ? std::string("latest") : std::to_string(def.max_version)) +
                        "] (" + backend_name(def.backend) + ")");
    return;
  }
  FamilyIndex& index = family_index();
  if (index.registering) {
    auto& families = index.by_op[{def.domain, def.name}];
    if (std::find(families.begin(), families.end(), index.registering) == families.end()) {
      families.push_back(index.registering);
    }
  }
  auto& defs = ops_[{def.domain, def.name}];
  defs.push_back(def);
  // Highest priority first, so resolve() lists candidates in the order they are tried.
  std::stable_sort(defs.begin(), defs.end(),
                   [](const OpDef& a, const OpDef& b) { return priority_of(a) > priority_of(b); });
}

bool OpRegistry::has_fast_kernel(const std::string& domain, const std::string& op, Backend only) const {
  auto it = ops_.find({domain, op});
  if (it == ops_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const OpDef& d) {
    return d.backend != Backend::kReference && (only == Backend::kReference || d.backend == only) &&
           (d.available == nullptr || d.available());
  });
}

RowFunction OpRegistry::row_function(const std::string& name) const {
  auto it = row_functions_.find(name);
  return it == row_functions_.end() ? nullptr : it->second;
}

Result<ResolvedOp> OpRegistry::resolve(const std::string& domain, const std::string& op, int64_t opset) const {
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
      return invalid_model("operator '", op, "' does not exist in opset ", opset, " (first defined in opset ",
                           versions->front(), ")");
    }
  }
  // A selective build links only some op families, or registers only some ops: an op whose
  // reference kernel is left out is not in the build, even when a fast kernel (which may
  // decline a node) is.
  const size_t linked = family_index().linked;
  const bool selective = this == &global() && (kOpSelectiveBuild || linked < op_family_count());
  auto not_selected = [&] {
    const std::string what =
        kOpSelectiveBuild ? std::to_string(kSelectedOpCount) + " ops selected"
                          : std::to_string(linked) + " of " + std::to_string(op_family_count()) + " op families linked";
    return unsupported("operator '", shown, "' is not in this selective build (", what,
                       "; add the model to the build's op selection: xonnx info --ops MODEL...)");
  };
  auto it = ops_.find({domain, op});
  if (it == ops_.end()) {
    if (selective) return not_selected();
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
  if (!resolved.candidates.empty()) {
    if (selective && resolved.def->backend != Backend::kReference) return not_selected();
    resolved.spec = find_op_spec(domain, op, since);
    if (!resolved.spec) {  // add() keeps only listed ops, so this is a fast kernel's wider range
      return unsupported("operator '", shown, "' version ", since, " (opset ", opset,
                         ") has no reference kernel (runtime/ops/ops.def)");
    }
    return resolved;
  }
  std::string have;
  for (const OpDef& def : it->second) {
    have += detail::concat(" [", def.min_version, ", ",
                           def.max_version == kLatestVersion ? std::string("latest") : std::to_string(def.max_version),
                           "]");
  }
  return unsupported("operator '", shown, "' version ", since, " (opset ", opset,
                     ") is not implemented; implemented versions:", have);
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> out;
  for (const auto& [key, defs] : ops_) {
    for (const OpDef& d : defs) out.push_back(&d);
  }
  return out;
}

}  // namespace xonnx
