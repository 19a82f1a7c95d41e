#include "runtime/ops/op_list.h"

#include <map>
#include <utility>

#include "runtime/ops/registry.h"  // kLatestVersion

// A build that leaves ops out compiles this file against its own copy of the list.
#ifndef XONNX_OPS_DEF
#define XONNX_OPS_DEF "runtime/ops/ops.def"
#endif

namespace xonnx {

const OpSpec* op_list(size_t* count) {
  static const OpSpec kList[] = {
#define XONNX_OP(family, domain, op, since_min, since_max, in_min, in_max, out_min, out_max, traits) \
  {#family, domain, op, since_min, since_max, in_min, in_max, out_min, out_max, traits},
#include XONNX_OPS_DEF
#undef XONNX_OP
  };
  *count = sizeof(kList) / sizeof(kList[0]);
  return kList;
}

namespace {
using SpecIndex = std::multimap<std::pair<std::string, std::string>, const OpSpec*>;
const SpecIndex& spec_index() {
  static const SpecIndex* index = [] {
    auto* m = new SpecIndex();
    size_t n = 0;
    const OpSpec* list = op_list(&n);
    for (size_t i = 0; i < n; ++i) m->emplace(std::make_pair(list[i].domain, list[i].name), &list[i]);
    return m;
  }();
  return *index;
}
}  // namespace

const OpSpec* find_op_spec(const std::string& domain, const std::string& op, int since_version) {
  auto [begin, end] = spec_index().equal_range({domain, op});
  for (auto it = begin; it != end; ++it) {
    const OpSpec* s = it->second;
    if (since_version < 0 || (s->min_version <= since_version && since_version <= s->max_version)) return s;
  }
  return nullptr;
}

bool op_has_trait(const std::string& domain, const std::string& op, OpTraits trait) {
  const OpSpec* s = find_op_spec(domain, op);
  return s != nullptr && (s->traits & trait) != 0;
}

std::string describe_arity(int min, int max) {
  if (max == min) return std::to_string(min);
  if (max < 0) return std::to_string(min) + " or more";
  return std::to_string(min) + " to " + std::to_string(max);
}

Status check_arity(const OpSpec& spec, const std::string& label, int n_in, int n_out) {
  if (n_in < spec.min_inputs || (spec.max_inputs >= 0 && n_in > spec.max_inputs)) {
    return invalid_model(label, "has ", n_in, " inputs; ", spec.name, " takes ",
                         describe_arity(spec.min_inputs, spec.max_inputs));
  }
  if (n_out < spec.min_outputs || (spec.max_outputs >= 0 && n_out > spec.max_outputs)) {
    return invalid_model(label, "has ", n_out, " outputs; ", spec.name, " gives ",
                         describe_arity(spec.min_outputs, spec.max_outputs));
  }
  return Status::ok();
}

}  // namespace xonnx
