// Model bytes -> session creation (passes, kernels) -> one run on zero-filled inputs when every
// input has a small fixed shape. Loops are not run: a fuzzed trip count may legitimately run
// for long (the run deadline of docs/security.md bounds it).
#include "runtime/exec/session.h"
#include "tests/fuzz/fuzz_target.h"

namespace {

using namespace xonnx;

bool has_loop(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.op_type == "Loop" || n.op_type == "Scan") return true;
    for (const Attribute& a : n.attributes) {
      if (a.g && has_loop(*a.g)) return true;
      for (const auto& sg : a.graphs) {
        if (has_loop(*sg)) return true;
      }
    }
  }
  return false;
}

void run_once(Session& s) {
  if (has_loop(s.model().graph)) return;
  std::vector<Value> inputs;
  for (const ValueInfo& info : s.inputs()) {
    if (info.type.kind != TypeInfo::Kind::kTensor || !info.type.has_shape) return;
    Shape shape;
    for (const Dim& d : info.type.dims) {
      if (!d.known() || d.value > 64) return;
      shape.push_back(d.value);
    }
    auto t = Tensor::allocate(info.type.elem_type, shape);
    if (!t.is_ok() || t->numel() > 4096) return;
    inputs.push_back(Value(std::move(t).value()));
  }
  (void)s.run(inputs);
}

}  // namespace

XONNX_FUZZ_TARGET(fuzz_session_run) {
  SessionOptions options;
  options.load.max_tensor_bytes = fuzz::kMaxTensorBytes;
  auto session = Session::create_from_memory(data, size, options);
  if (session.is_ok()) run_once(**session);
  return 0;
}
