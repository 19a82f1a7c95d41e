// Chooses the optimized-kernel table for this CPU once (runtime/core/cpu_features.h), and holds
// the switches and counters shared by the optimized op kernels.
#include <atomic>
#include <initializer_list>
#include <cstring>

#include "runtime/core/cpu_features.h"
#include "runtime/core/environment.h"
#include "runtime/ops/optimized/kernels.h"
#include "runtime/ops/optimized/opt_util.h"

namespace xonnx {
namespace opt {
namespace {

std::atomic<bool> g_enabled{true};
std::atomic<uint64_t> g_runs{0};
std::atomic<const KernelTable*> g_table_for_testing{nullptr};

// Best first. A table is built by code compiled for its ISA (the compiler vectorizes even the
// table's construction), so its function is called only once the CPU reports the ISA.
struct Candidate {
  const char* isa;
  const KernelTable* (*table)();
};
constexpr Candidate kCandidates[] = {
    {"avx512", avx512_table}, {"avx2", avx2_table}, {"neon", neon_table}, {"generic", generic_table}};

const KernelTable* choose() {
  // XONNX_OPT_ISA caps the choice at the named table.
  const std::string cap = optimized_isa_cap();
  bool allowed = cap.empty();
  for (const Candidate& c : kCandidates) {
    if (!allowed && cap == c.isa) allowed = true;
    if (!allowed || !cpu_has(c.isa)) continue;
    if (const KernelTable* t = c.table()) return t;
  }
  return generic_table();
}

}  // namespace

const KernelTable& kernels() {
  static const KernelTable* table = choose();
  const KernelTable* forced = g_table_for_testing.load(std::memory_order_relaxed);
  return forced ? *forced : *table;
}

void set_kernels_for_testing(const KernelTable* table) { g_table_for_testing.store(table, std::memory_order_relaxed); }

bool avx512_chosen() {
  static const bool chosen = std::strcmp(kernels().isa, "avx512") == 0;
  return chosen;
}

bool avx512_vnni_chosen() {
#if defined(__x86_64__) || defined(_M_X64)
  static const bool chosen = avx512_chosen() && cpu_has("avx512vnni");
  return chosen;
#else
  return false;
#endif
}

bool fused_activation(const KernelTable& t, const std::string& name, MapFn* fn) {
  *fn = nullptr;
  if (name == "Swish") *fn = t.swish;
  if (name == "HardSwish") *fn = t.hard_swish;
  return name.empty() || *fn != nullptr;
}

int supported_tables(const KernelTable** out, int max) {
  int n = 0;
  for (const Candidate& c : kCandidates) {
    if (n == max || !cpu_has(c.isa)) continue;
    if (const KernelTable* t = c.table()) out[n++] = t;
  }
  return n;
}

bool enabled() {
  // The environment switches (XONNX_DISABLE_OPTIMIZED / _XNNPACK) are SessionOptions, applied
  // by the session; this is the process-wide switch the differential tests flip.
  return g_enabled.load(std::memory_order_relaxed);
}
void set_enabled(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
uint64_t run_count() { return g_runs.load(std::memory_order_relaxed); }

Result<FusedOutput> parse_fused_output(const KernelInit& init, const std::string& prefix, const char* what) {
  FusedOutput out;
  XONNX_ASSIGN_OR_RETURN(out.lo, init.get_float(prefix + "activation_min", out.lo));
  XONNX_ASSIGN_OR_RETURN(out.hi, init.get_float(prefix + "activation_max", out.hi));
  if (!(out.lo < out.hi)) return unsupported(what, ": empty output range ", prefix, "activation_min / _max");
  XONNX_ASSIGN_OR_RETURN(const std::string activation, init.get_string(prefix + "activation", ""));
  if (!fused_activation(kernels(), activation, &out.activation)) return unsupported(what, ": activation ", activation);
  return out;
}

Status init_own_kernel(FastKernel& kernel, const KernelInit& init) {
  if (!enabled()) return unsupported("optimized kernels are disabled");
  return kernel.init_fallback(init, &g_runs);
}

}  // namespace opt
}  // namespace xonnx
