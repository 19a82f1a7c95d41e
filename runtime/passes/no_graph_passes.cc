// optimize_for_session() of a build without the graph-pass library (-DXONNX_WITH_PASSES=OFF):
// nothing runs. Files `xonnx convert` wrote were optimized on the host; any other model still
// runs correctly, only slower, so it gets a warning (log and report) rather than an error.
#include "runtime/core/log.h"
#include "runtime/passes/session_passes.h"

namespace xonnx {
namespace passes {

bool graph_passes_built() { return false; }

Result<PipelineResult> optimize_for_session(Model& model, OptLevel level, int64_t /*fold_size_limit_bytes*/,
                                            bool /*own_kernels*/) {
  PipelineResult result;
  if (level == OptLevel::kNone || !converted_level(model).empty()) return result;
  const std::string name = model.graph.name.empty() ? std::string("the model") : "model '" + model.graph.name + "'";
  std::string warning = name +
                        " was not optimized by `xonnx convert`, and this build has no graph-pass library "
                        "(XONNX_WITH_PASSES=OFF): it runs unoptimized (slower). Convert it on the host "
                        "(`xonnx convert in.onnx out.onnx`), or set the optimization level to none to run it as it is.";
  log(LogLevel::kWarning, warning);
  result.warnings.push_back(std::move(warning));
  return result;
}

}  // namespace passes
}  // namespace xonnx
