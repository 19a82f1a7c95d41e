// One model of a demo pipeline: an xonnx session (public C++ API), a check of the model's
// declared inputs and outputs against what the pipeline feeds and reads, the time spent in
// its runs, and optionally a record of every run's inputs (InputRecorder) that
// bench/demo_compare.sh replays in ONNX Runtime, so both engines run exactly the same tensors.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "sdk/examples/common/status.h"
#include "xonnx/xonnx.hpp"

namespace demo {

// Appends each run's inputs to DIR/inputs.bin and a JSON line describing them to
// DIR/runs.jsonl: {"model": PATH, "inputs": [{"name", "type", "dims", "offset", "bytes"}]}.
class InputRecorder {
 public:
  Status open(const std::string& dir);
  // Does nothing once stop() was called (a demo records its first pass only).
  Status record(const std::string& model_path, const std::vector<xonnx::api::Input>& inputs);
  void stop() { active_ = false; }

 private:
  bool active_ = false;
  std::string dir_;
  std::ofstream runs_;
  std::ofstream data_;
  uint64_t offset_ = 0;
};

class ModelRunner {
 public:
  // `role` names the model in messages ("detector"); `recorder` may be null and must outlive
  // this runner otherwise.
  Status open(const std::string& path, const std::string& role, int threads, InputRecorder* recorder = nullptr);

  // Fails unless input/output `index` is declared with `type` and rank dims.size(), and every
  // dim that is not -1 in `dims` is declared equal (or symbolic) in the model.
  Status expect_input(size_t index, xonnx_element_type type, const std::vector<int64_t>& dims) const;
  Status expect_output(size_t index, xonnx_element_type type, const std::vector<int64_t>& dims) const;
  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }
  const xonnx::api::TensorInfo& input_info(size_t index) const { return inputs_[index]; }
  const xonnx::api::TensorInfo& output_info(size_t index) const { return outputs_[index]; }

  Status run(const std::vector<xonnx::api::Input>& inputs, std::vector<xonnx::api::Tensor>* outputs);

  const std::string& path() const { return path_; }
  double run_seconds() const { return run_seconds_; }  // summed over run() calls
  int64_t run_count() const { return run_count_; }
  void reset_stats() {
    run_seconds_ = 0;
    run_count_ = 0;
  }

 private:
  Status expect(const xonnx::api::TensorInfo& info, const char* kind, xonnx_element_type type,
                const std::vector<int64_t>& dims) const;

  std::string path_;
  std::string role_;
  xonnx::api::Session session_;
  std::vector<xonnx::api::TensorInfo> inputs_;
  std::vector<xonnx::api::TensorInfo> outputs_;
  InputRecorder* recorder_ = nullptr;
  double run_seconds_ = 0;
  int64_t run_count_ = 0;
};

// Seconds since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "float32[?,3,48,?]"
std::string describe_type(xonnx_element_type type, const std::vector<int64_t>& dims);

}  // namespace demo
