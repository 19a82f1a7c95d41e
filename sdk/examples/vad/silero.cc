#include "sdk/examples/vad/silero.h"

#include <algorithm>
#include <cstring>

namespace demo {
namespace {

using xonnx::api::Input;
using xonnx::api::Tensor;

// The index of the input or output called `name`, or an error naming what the model has.
Status find(const ModelRunner& model, bool output, const std::string& name, size_t* slot) {
  std::string names;
  const size_t count = output ? model.output_count() : model.input_count();
  for (size_t i = 0; i < count; ++i) {
    const std::string& n = output ? model.output_info(i).name : model.input_info(i).name;
    if (n == name) {
      *slot = i;
      return Status();
    }
    names += (names.empty() ? "" : ", ") + n;
  }
  return Status::error("the VAD model '" + model.path() + "' has no " + (output ? "output" : "input") + " named '" +
                       name + "' (it has: " + names + "); silero VAD v5 is expected");
}

}  // namespace

Status SileroVad::open(const std::string& model_path, int sample_rate, int threads, InputRecorder* recorder) {
  if (sample_rate != 8000 && sample_rate != 16000) {
    return Status::error("silero VAD runs at 8000 or 16000 Hz, not " + std::to_string(sample_rate));
  }
  sample_rate_ = {sample_rate};
  frame_ = sample_rate / 1000 * 32;
  context_ = sample_rate / 1000 * 4;
  Status s = model_.open(model_path, "voice activity", threads, recorder);
  if (!s.ok()) return s;
  // Inputs and outputs by name; v5 declares input, state, sr -> output, stateN.
  if (model_.input_count() != 3) {
    return Status::error("the VAD model '" + model_path + "' has " + std::to_string(model_.input_count()) +
                         " inputs; silero VAD v5 has 3 (input, state, sr)");
  }
  s = find(model_, false, "input", &input_slot_);
  if (s.ok()) s = find(model_, false, "state", &state_slot_);
  if (s.ok()) s = find(model_, false, "sr", &sr_slot_);
  if (s.ok()) s = find(model_, true, "output", &prob_slot_);
  if (s.ok()) s = find(model_, true, "stateN", &new_state_slot_);
  if (s.ok()) s = model_.expect_input(input_slot_, XONNX_TYPE_FLOAT32, {-1, -1});
  if (s.ok()) s = model_.expect_input(state_slot_, XONNX_TYPE_FLOAT32, {2, -1, -1});
  if (s.ok()) s = model_.expect_input(sr_slot_, XONNX_TYPE_INT64, {});
  if (s.ok()) s = model_.expect_output(prob_slot_, XONNX_TYPE_FLOAT32, {-1, 1});
  if (!s.ok()) return s;
  // The state's width comes from the model (128 in v5) when it declares it.
  const int64_t width = model_.input_info(state_slot_).dims[2];
  state_shape_ = {2, 1, width > 0 ? width : 128};
  reset();
  return Status();
}

void SileroVad::reset() {
  window_.assign(static_cast<size_t>(context_ + frame_), 0.0f);
  state_.assign(static_cast<size_t>(state_shape_[0] * state_shape_[1] * state_shape_[2]), 0.0f);
}

Status SileroVad::process(const float* frame, float* speech_probability) {
  std::copy(window_.end() - context_, window_.end(), window_.begin());  // last frame's tail
  std::copy(frame, frame + frame_, window_.begin() + context_);
  std::vector<Input> inputs(3);
  inputs[input_slot_] = Input::of("input", XONNX_TYPE_FLOAT32, {1, context_ + frame_}, window_);
  inputs[state_slot_] = Input::of("state", XONNX_TYPE_FLOAT32, state_shape_, state_);
  inputs[sr_slot_] = Input::of("sr", XONNX_TYPE_INT64, {}, sample_rate_);
  std::vector<Tensor> out;
  Status s = model_.run(inputs, &out);
  if (!s.ok()) return s;
  const Tensor& prob = out[prob_slot_];
  const Tensor& new_state = out[new_state_slot_];
  if (prob.type() != XONNX_TYPE_FLOAT32 || prob.data_bytes() != sizeof(float) ||
      new_state.type() != XONNX_TYPE_FLOAT32 || new_state.data_bytes() != state_.size() * sizeof(float)) {
    return Status::error("the VAD model '" + model_.path() + "' returned " + describe_type(prob.type(), prob.shape()) +
                         " and " + describe_type(new_state.type(), new_state.shape()) + ", expected float32[1,1] and " +
                         describe_type(XONNX_TYPE_FLOAT32, state_shape_));
  }
  *speech_probability = *prob.data<float>();
  std::memcpy(state_.data(), new_state.data<float>(), new_state.data_bytes());
  return Status();
}

}  // namespace demo
