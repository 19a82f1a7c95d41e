// Session: a loaded, validated, prepared model that can run many times.
//
// Creation does all the work that can fail on the model (op lookup, attribute checks,
// topological order, liveness); run() only computes and checks input shapes/types.
// A Session is not safe to run from two threads at once; create one per thread.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/core/value.h"
#include "runtime/ir/graph.h"
#include "runtime/onnx/loader.h"

namespace xonnx {

struct SessionOptions {
  int num_threads = 1;
  // Use only reference kernels (also forced by the environment variable XONNX_DISABLE_XNNPACK=1).
  bool disable_xnnpack = false;
  // Caps every tensor: initializers at load and every intermediate at run time (bytes).
  LoadOptions load;
};

class Subgraph;  // a compiled graph (exec/subgraph.h)
struct SessionState;

class Session {
 public:
  static Result<std::unique_ptr<Session>> create(const std::string& path,
                                                 const SessionOptions& options = {});
  static Result<std::unique_ptr<Session>> create_from_memory(const void* data, size_t size,
                                                             const SessionOptions& options = {});
  // Takes an already loaded (and function-inlined) model.
  static Result<std::unique_ptr<Session>> create_from_model(Model model,
                                                            const SessionOptions& options = {});
  ~Session();

  // Graph inputs that are not initializers, in declaration order; and graph outputs.
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  const Model& model() const { return model_; }

  // Runs with one value per entry of inputs(), in order. Returns one value per output.
  Result<std::vector<Value>> run(const std::vector<Value>& inputs);
  // Runs with named inputs (any order); missing non-optional inputs are an error.
  Result<std::vector<Value>> run_named(const std::vector<std::pair<std::string, Value>>& inputs);

 private:
  Session() = default;
  Model model_;
  SessionOptions options_;
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
  std::shared_ptr<SessionState> state_;
  std::shared_ptr<Subgraph> plan_;
};

}  // namespace xonnx
