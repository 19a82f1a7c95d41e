// Chooses the LLM kernel table of the ISA the main table (dispatch.cc) chose.
#include "runtime/ops/optimized/kernels_llm.h"

#include <cstring>

#include "runtime/ops/optimized/kernels.h"

namespace xonnx {
namespace opt {

const LlmKernelTable* llm_avx512_table();   // kernels_llm_avx512.cc
const LlmKernelTable* llm_avx2_table();     // kernels_llm_avx2.cc
const LlmKernelTable* llm_neon_table();     // kernels_llm_neon.cc
const LlmKernelTable* llm_generic_table();  // kernels_llm_generic.cc

namespace {
// As in dispatch.cc, a table's function runs code compiled for its ISA: it is called only for
// an ISA whose main table the CPU already runs.
struct Candidate {
  const char* isa;
  const LlmKernelTable* (*table)();
};
constexpr Candidate kCandidates[] = {
    {"avx512", llm_avx512_table}, {"avx2", llm_avx2_table}, {"neon", llm_neon_table}, {"generic", llm_generic_table}};
}  // namespace

const LlmKernelTable& llm_kernels() {
  static const LlmKernelTable* table = [] {
    for (const Candidate& c : kCandidates) {
      if (std::strcmp(c.isa, kernels().isa) != 0) continue;
      if (const LlmKernelTable* t = c.table()) return t;
    }
    return llm_generic_table();
  }();
  return *table;
}

int supported_llm_tables(const LlmKernelTable** out, int max) {
  const KernelTable* main[4];
  const int n_main = supported_tables(main, 4);
  int n = 0;
  for (const Candidate& c : kCandidates) {
    for (int j = 0; j < n_main && n < max; ++j) {
      if (std::strcmp(c.isa, main[j]->isa) != 0) continue;
      if (const LlmKernelTable* t = c.table()) out[n++] = t;
    }
  }
  return n;
}

}  // namespace opt
}  // namespace xonnx
