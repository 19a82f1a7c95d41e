// The op list (runtime/ops/ops.def) as data: what each op is (domain, name, schema versions,
// arity, family, traits), independent of which kernels implement it. Read-only after static
// initialisation; safe from any thread.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/core/status.h"

namespace xonnx {

// Properties of an op that graph passes ask about instead of keeping their own lists.
enum OpTraits : unsigned {
  kNoTraits = 0,
  // Element-wise on one data input (other inputs, if any, are scalars): the NHWC layout pass
  // carries it through a channels-last region as it is.
  kLayoutAgnostic = 1u << 0,
};

struct OpSpec {
  const char* family;  // "conv": registered by register_conv_ops (runtime/ops/ref/conv.cc)
  const char* domain;  // "" for ONNX
  const char* name;
  // Range of schema since_versions the reference kernel implements (inclusive).
  int min_version;
  int max_version;
  // Node slots, empty (omitted) ones included; a maximum of -1 means variadic.
  int min_inputs;
  int max_inputs;
  int min_outputs;
  int max_outputs;
  unsigned traits;
};

// Every entry of the op list of this build, in ops.def order; *count receives how many.
const OpSpec* op_list(size_t* count);
// The entry of domain::op whose version range holds `since_version`; nullptr if none. A
// negative since_version matches any range (the op's first entry).
const OpSpec* find_op_spec(const std::string& domain, const std::string& op, int since_version = -1);
// Whether domain::op is listed with `trait` (false for ops not in the list).
bool op_has_trait(const std::string& domain, const std::string& op, OpTraits trait);
// "2", "2 to 3", "1 or more": an arity range in error messages.
std::string describe_arity(int min, int max);
// A node of `spec`'s op with n_in input and n_out output slots: an invalid_model error that
// starts with `label` (the node) and names the op's arity when the counts are outside it.
Status check_arity(const OpSpec& spec, const std::string& label, int n_in, int n_out);

}  // namespace xonnx
