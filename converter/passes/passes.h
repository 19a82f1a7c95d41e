// Every converter pass, one function each (converter/passes/<name>.cc); the order they run in
// is the table in converter/pass_list.cc.
#pragma once

#include "converter/pass.h"

namespace xonnx {
namespace convert {

}  // namespace convert
}  // namespace xonnx
