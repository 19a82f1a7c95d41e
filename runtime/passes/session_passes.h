// Session creation's graph optimization in one call, so that a build without the graph-pass
// library (-DXONNX_WITH_PASSES=OFF: devices that only load files `xonnx convert` wrote) swaps
// its implementation (session_passes.cc) for no_graph_passes.cc and links no pass at all.
#pragma once

#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"
#include "runtime/passes/pipeline.h"

namespace xonnx {
namespace passes {

// The metadata key `xonnx convert` writes on its output; the value is the level it ran
// ("basic", "all"). A build without the pass library warns about models that lack it.
inline constexpr const char* kConvertedMetadataKey = "xonnx.optimization";

// Whether this build holds the graph-pass library.
bool graph_passes_built();

// Runs session_pass_list() over `model` at `level` (none: nothing), folding no tensor larger
// than `fold_size_limit_bytes`; `own_kernels`: the session runs the optimized kernels (the
// rewrites into forms only they run well apply). Without the pass library nothing runs; a
// model the converter did not optimize gets a warning row in the result and a warning log
// naming the fix.
Result<PipelineResult> optimize_for_session(Model& model, OptLevel level, int64_t fold_size_limit_bytes,
                                            bool own_kernels = true);

// "all" when `model` carries the converter's stamp, else "" (see kConvertedMetadataKey).
std::string converted_level(const Model& model);
// Stamps `model` as optimized at `level` by the converter (replaces an older stamp).
void stamp_converted(Model& model, OptLevel level);

}  // namespace passes
}  // namespace xonnx
