// The kernel table. Each op family registers its kernels from one function listed in
// ops.def (explicit, no static initializers: a static library would drop them); what an op is
// (versions, arity, traits) is the op list's (runtime/ops/op_list.h), not the kernel's.
#pragma once

#include <climits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ir/opset.h"
#include "runtime/ops/kernel.h"
#include "runtime/ops/op_list.h"

namespace xonnx {

using KernelFactory = Result<std::unique_ptr<Kernel>> (*)(const KernelInit& init);
// An element-wise float function, y[i] = f(x[i]) for i < n (y may be x).
using RowFunction = void (*)(const float* x, float* y, int64_t n);

constexpr int kLatestVersion = INT_MAX;

// Where a kernel comes from. At session creation the registry offers the candidates for a
// node by priority; a fast factory may decline, and the next one is tried. The reference
// kernel is always last and defines the semantics.
enum class Backend : int { kXnnpack = 0, kOptimized = 1, kReference = 2 };
const char* backend_name(Backend b);

// Candidates are tried highest priority first. A kernel that leaves OpDef::priority at
// kBackendPriority gets its backend's: XNNPACK before the own kernels before the reference.
constexpr int kBackendPriority = -1;
constexpr int kPriorityReference = 0;
constexpr int kPriorityOptimized = 10;
constexpr int kPriorityXnnpack = 20;
// An own kernel that beats XNNPACK's on what it accepts.
constexpr int kPriorityBeforeXnnpack = 30;

struct OpDef {
  const char* domain;  // "" for ONNX, "com.microsoft", "ai.onnx.ml", ...
  const char* name;
  // Range of schema since_versions this kernel implements (inclusive).
  int min_version;
  int max_version;
  KernelFactory create;
  Backend backend = Backend::kReference;
  int priority = kBackendPriority;
  // A fast kernel's capability on this CPU: false when its factory would decline every node
  // (it needs an ISA this CPU lacks, or its backend is switched off). nullptr: always
  // available. Passes ask through OpRegistry::has_fast_kernel.
  bool (*available)() = nullptr;
};

struct ResolvedOp {
  // Candidates for the node, fastest backend first; the last is the reference kernel.
  std::vector<const OpDef*> candidates;
  const OpDef* def = nullptr;    // the reference (or only) candidate
  const OpSpec* spec = nullptr;  // the op list's entry: arity and traits
  int since_version = 0;
};

class OpRegistry {
 public:
  // The registry with every op family of this build.
  static const OpRegistry& global();

  // Adds a kernel of an op of the op list. A kernel of an op the list does not hold is left out
  // (a build with a shorter list) and named by unlisted_ops(); a reference kernel must cover
  // exactly its entry's versions (else it is left out and named there too).
  void add(const OpDef& def);
  // "domain::op [min, max]" of each kernel add() left out; empty in a build of the full list.
  const std::vector<std::string>& unlisted_ops() const { return unlisted_; }
  // Finds the kernel for `op` in `domain` at the model's imported `opset`. Errors name the
  // op, domain and version and say what is implemented instead.
  Result<ResolvedOp> resolve(const std::string& domain, const std::string& op, int64_t opset) const;
  // Whether a fast (non-reference) kernel that is available on this CPU is registered for
  // `op`: the session-time passes rewrite a graph into an op that only a fast kernel makes
  // worthwhile (QGemm, the layout pass's fused internal ops) only when this holds, so they
  // ask here instead of including a backend.
  // `only` narrows it to one fast backend's kernel (kReference, the default: any of them); the
  // QDQ pass asks for the optimized QLinearMatMul when the weights have per-column scales,
  // which XNNPACK's declines.
  bool has_fast_kernel(const std::string& domain, const std::string& op, Backend only = Backend::kReference) const;
  // Element-wise functions one backend provides to the others by name, so that neither
  // includes the other: the optimized backend's ISA-dispatched "Swish" and "HardSwish", which
  // XNNPACK's NHWC Conv applies as its fused activation. row_function is nullptr when no
  // backend of this build provides `name`.
  void add_row_function(const std::string& name, RowFunction fn) { row_functions_[name] = fn; }
  RowFunction row_function(const std::string& name) const;
  // Every registered op (for `xonnx info --ops`, docs and tests).
  std::vector<const OpDef*> all() const;
  // The ONNX since_versions of a default-domain op, empty if unknown.
  static const std::vector<int>* onnx_versions(const std::string& op);

 private:
  std::map<std::pair<std::string, std::string>, std::vector<OpDef>> ops_;
  std::map<std::string, RowFunction> row_functions_;
  std::vector<std::string> unlisted_;
};

// One function per op family, each defined in runtime/ops/ref/<family>.cc.
#define XONNX_OP_FAMILY(family) void register_##family##_ops(OpRegistry& registry);
#include "runtime/ops/ops.def"
#undef XONNX_OP_FAMILY

// Per-op selection at compile time. A selective build (-DXONNX_OPS=ops.txt) compiles the
// runtime with XONNX_SELECTED_OPS naming its generated list of XONNX_SELECTED_OP(domain, op)
// lines; every other build selects every op.
struct SelectedOp {
  std::string_view domain;
  std::string_view op;
};
#ifdef XONNX_SELECTED_OPS
inline constexpr SelectedOp kSelectedOps[] = {
#define XONNX_SELECTED_OP(domain, op) {domain, op},
#include XONNX_SELECTED_OPS
#undef XONNX_SELECTED_OP
};
inline constexpr bool kOpSelectiveBuild = true;
inline constexpr size_t kSelectedOpCount = sizeof(kSelectedOps) / sizeof(kSelectedOps[0]);
#else
inline constexpr bool kOpSelectiveBuild = false;
inline constexpr size_t kSelectedOpCount = 0;
#endif
constexpr bool op_selected(std::string_view domain, std::string_view op) {
#ifdef XONNX_SELECTED_OPS
  for (const SelectedOp& s : kSelectedOps) {
    if (s.domain == domain && s.op == op) return true;
  }
  return false;
#else
  static_cast<void>(domain);
  static_cast<void>(op);
  return true;
#endif
}

}  // namespace xonnx

// Registers a kernel: OpRegistry::add(OpDef{domain, op, ...}) when op_selected(domain, op).
// For any other op it compiles to nothing, so nothing references that op's kernels and the
// linker's --gc-sections drops them (domain and op must be constant expressions).
#define XONNX_REGISTER(registry, domain, op, ...)                                                            \
  do {                                                                                                       \
    if constexpr (::xonnx::op_selected(domain, op)) (registry).add(::xonnx::OpDef{domain, op, __VA_ARGS__}); \
  } while (0)
