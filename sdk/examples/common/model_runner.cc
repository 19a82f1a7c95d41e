#include "sdk/examples/common/model_runner.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace demo {
namespace {

const char* type_name(xonnx_element_type type) {
  switch (type) {
    case XONNX_TYPE_FLOAT32: return "float32";
    case XONNX_TYPE_UINT8: return "uint8";
    case XONNX_TYPE_INT8: return "int8";
    case XONNX_TYPE_INT32: return "int32";
    case XONNX_TYPE_INT64: return "int64";
    case XONNX_TYPE_BOOL: return "bool";
    case XONNX_TYPE_FLOAT16: return "float16";
    case XONNX_TYPE_FLOAT64: return "float64";
    default: return "other";
  }
}

std::string dims_json(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string describe_type(xonnx_element_type type, const std::vector<int64_t>& dims) {
  std::string s = std::string(type_name(type)) + "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s + "]";
}

Status InputRecorder::open(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::error("cannot create '" + dir + "': " + std::strerror(errno));
  }
  dir_ = dir;
  runs_.open(dir + "/runs.jsonl", std::ios::trunc);
  data_.open(dir + "/inputs.bin", std::ios::binary | std::ios::trunc);
  if (!runs_ || !data_) return Status::error("cannot write the input record in '" + dir + "'");
  offset_ = 0;
  active_ = true;
  return Status();
}

Status InputRecorder::record(const std::string& model_path, const std::vector<xonnx::api::Input>& inputs) {
  if (!active_) return Status();
  std::string line = "{\"model\":" + json_string(model_path) + ",\"inputs\":[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    const xonnx::api::Input& in = inputs[i];
    line += std::string(i ? "," : "") + "{\"name\":" + json_string(in.name) + ",\"type\":\"" + type_name(in.type) +
            "\",\"dims\":" + dims_json(in.shape) + ",\"offset\":" + std::to_string(offset_) +
            ",\"bytes\":" + std::to_string(in.data_bytes) + "}";
    data_.write(static_cast<const char*>(in.data), static_cast<std::streamsize>(in.data_bytes));
    offset_ += in.data_bytes;
  }
  runs_ << line << "]}\n";
  if (!runs_ || !data_) return Status::error("cannot write the input record in '" + dir_ + "'");
  return Status();
}

Status ModelRunner::open(const std::string& path, const std::string& role, int threads, InputRecorder* recorder) {
  path_ = path;
  role_ = role;
  recorder_ = recorder;
  xonnx::api::SessionConfig config;
  config.num_threads = threads;
  if (xonnx::api::Error e = session_.open(path, config)) {
    return Status::error("cannot load the " + role + " model '" + path + "': " + e.message);
  }
  inputs_.assign(session_.input_count(), {});
  outputs_.assign(session_.output_count(), {});
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (xonnx::api::Error e = session_.input_info(i, &inputs_[i])) return Status::error(path + ": " + e.message);
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (xonnx::api::Error e = session_.output_info(i, &outputs_[i])) return Status::error(path + ": " + e.message);
  }
  return Status();
}

Status ModelRunner::expect(const xonnx::api::TensorInfo& info, const char* kind, xonnx_element_type type,
                           const std::vector<int64_t>& dims) const {
  bool ok = info.type == type && (!info.has_shape || info.dims.size() == dims.size());
  for (size_t d = 0; ok && info.has_shape && d < dims.size(); ++d) {
    ok = dims[d] < 0 || info.dims[d] < 0 || info.dims[d] == dims[d];
  }
  if (ok) return Status();
  return Status::error("the " + role_ + " model '" + path_ + "' " + kind + " '" + info.name + "' is " +
                       describe_type(info.type, info.dims) + "; this pipeline needs " + describe_type(type, dims));
}

Status ModelRunner::expect_input(size_t index, xonnx_element_type type, const std::vector<int64_t>& dims) const {
  if (index >= inputs_.size()) {
    return Status::error("the " + role_ + " model '" + path_ + "' has " + std::to_string(inputs_.size()) +
                         " inputs; this pipeline needs at least " + std::to_string(index + 1));
  }
  return expect(inputs_[index], "input", type, dims);
}

Status ModelRunner::expect_output(size_t index, xonnx_element_type type, const std::vector<int64_t>& dims) const {
  if (index >= outputs_.size()) {
    return Status::error("the " + role_ + " model '" + path_ + "' has " + std::to_string(outputs_.size()) +
                         " outputs; this pipeline needs at least " + std::to_string(index + 1));
  }
  return expect(outputs_[index], "output", type, dims);
}

Status ModelRunner::run(const std::vector<xonnx::api::Input>& inputs, std::vector<xonnx::api::Tensor>* outputs) {
  if (recorder_) {
    Status s = recorder_->record(path_, inputs);
    if (!s.ok()) return s;
  }
  const auto start = std::chrono::steady_clock::now();
  xonnx::api::Error e = session_.run(inputs, outputs);
  run_seconds_ += seconds_since(start);
  ++run_count_;
  if (e) return Status::error("the " + role_ + " model '" + path_ + "' failed: " + e.message);
  return Status();
}

}  // namespace demo
