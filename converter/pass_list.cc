// The converter's passes, in the order the pipeline applies them.
#include "converter/pass.h"

namespace xonnx {
namespace convert {

const std::vector<PassDef>& pass_list() {
  static const std::vector<PassDef> passes = {};
  return passes;
}

}  // namespace convert
}  // namespace xonnx
