// xonnx C++ API: a thin, header-only RAII layer over the C API (xonnx.h).
// Errors are returned as xonnx::api::Error values (never thrown).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "xonnx/xonnx.h"

namespace xonnx {
namespace api {

struct Error {
  xonnx_status_code code = XONNX_OK;
  std::string message;
  explicit operator bool() const { return code != XONNX_OK; }  // true when there is an error
};

inline Error take(xonnx_status* s) {
  Error e;
  if (s) {
    e.code = xonnx_status_get_code(s);
    e.message = xonnx_status_get_message(s);
    xonnx_status_release(s);
  }
  return e;
}

// An output owned by the runtime; moves, never copies.
class Tensor {
 public:
  explicit Tensor(xonnx_tensor* t = nullptr) : t_(t) {}
  xonnx_element_type type() const { return xonnx_tensor_type(t_.get()); }
  std::vector<int64_t> shape() const {
    const int64_t* s = xonnx_tensor_shape(t_.get());
    return std::vector<int64_t>(s, s + xonnx_tensor_rank(t_.get()));
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(xonnx_tensor_data(t_.get()));
  }
  size_t data_bytes() const { return xonnx_tensor_data_bytes(t_.get()); }

 private:
  struct Release {
    void operator()(xonnx_tensor* t) const { xonnx_tensor_release(t); }
  };
  std::unique_ptr<xonnx_tensor, Release> t_;
};

// A caller-owned input: the buffer must live until Session::run returns.
struct Input {
  std::string name;  // empty: by position
  xonnx_element_type type;
  std::vector<int64_t> shape;
  const void* data;
  size_t data_bytes;
  template <typename T>
  static Input of(const std::string& name, xonnx_element_type type, std::vector<int64_t> shape,
                  const std::vector<T>& values) {
    return Input{name, type, std::move(shape), values.data(), values.size() * sizeof(T)};
  }
};

// The declared element type and shape of a graph input or output, as the model states it
// (xonnx_session_input_info / _output_info): an application checks a model against what its
// pre- and post-processing expect before running it.
struct TensorInfo {
  std::string name;
  xonnx_element_type type = XONNX_TYPE_UNDEFINED;
  bool has_shape = false;              // false: the model declares no shape (rank unknown)
  std::vector<int64_t> dims;           // -1 for a symbolic or unknown dim
  std::vector<std::string> dim_names;  // per dim: the symbol ("batch"), or "" when unnamed
};

struct SessionConfig {
  int num_threads = 1;
  int64_t max_tensor_bytes = 0;    // 0: no cap
  int64_t max_memory_bytes = 0;    // 0: the default (half the physical memory)
  double run_timeout_seconds = 0;  // 0: no deadline
  // Outputs read only in part: rows [start, end) of `axis` (xonnx_session_options_add_output_range).
  struct OutputRange {
    std::string output;
    int64_t axis = 0, start = 0, end = INT64_MAX;
  };
  std::vector<OutputRange> output_ranges;
};

// The library's version ("MAJOR.MINOR.PATCH"); XONNX_VERSION_STRING is the headers'.
inline std::string version() { return xonnx_version(); }

class Session {
 public:
  Session() = default;

  // Loads `path`; on failure returns the error and leaves *this empty.
  Error open(const std::string& path, const SessionConfig& config = {}) {
    xonnx_session_options* opts = nullptr;
    Error e = take(xonnx_session_options_create(&opts));
    if (!e) e = take(xonnx_session_options_set_num_threads(opts, config.num_threads));
    if (!e && config.max_tensor_bytes > 0) {
      e = take(xonnx_session_options_set_max_tensor_bytes(opts, config.max_tensor_bytes));
    }
    if (!e && config.max_memory_bytes > 0) {
      e = take(xonnx_session_options_set_max_memory_bytes(opts, config.max_memory_bytes));
    }
    if (!e) e = take(xonnx_session_options_set_run_timeout(opts, config.run_timeout_seconds));
    for (const SessionConfig::OutputRange& r : config.output_ranges) {
      if (!e) e = take(xonnx_session_options_add_output_range(opts, r.output.c_str(), r.axis, r.start, r.end));
    }
    xonnx_session* s = nullptr;
    if (!e) e = take(xonnx_session_create(path.c_str(), opts, &s));
    xonnx_session_options_release(opts);
    s_.reset(s);
    return e;
  }

  bool is_open() const { return s_ != nullptr; }
  // Stops the run in progress (xonnx_session_cancel): the one call allowed from another thread.
  void cancel() { xonnx_session_cancel(s_.get()); }
  size_t input_count() const { return xonnx_session_input_count(s_.get()); }
  size_t output_count() const { return xonnx_session_output_count(s_.get()); }
  std::string input_name(size_t i) const { return name_or_empty(xonnx_session_input_name(s_.get(), i)); }
  std::string output_name(size_t i) const { return name_or_empty(xonnx_session_output_name(s_.get(), i)); }
  // Declared shape of input i, -1 for symbolic or unknown dims; empty when unknown or out of range.
  std::vector<int64_t> input_shape(size_t i) const {
    int64_t rank = 0;
    if (xonnx_status* s = xonnx_session_input_info(s_.get(), i, nullptr, nullptr, 0, &rank)) {
      xonnx_status_release(s);
      return {};
    }
    std::vector<int64_t> dims(rank > 0 ? static_cast<size_t>(rank) : 0);
    take(xonnx_session_input_info(s_.get(), i, nullptr, dims.data(), dims.size(), &rank));
    return dims;
  }

  Error input_info(size_t i, TensorInfo* out) const {
    return info(i, out, xonnx_session_input_info, xonnx_session_input_name, xonnx_session_input_dim_name);
  }
  Error output_info(size_t i, TensorInfo* out) const {
    return info(i, out, xonnx_session_output_info, xonnx_session_output_name, xonnx_session_output_dim_name);
  }

  Error run(const std::vector<Input>& inputs, std::vector<Tensor>* outputs) {
    std::vector<xonnx_tensor_view> views;
    for (const Input& in : inputs) {
      views.push_back({in.name.empty() ? nullptr : in.name.c_str(), in.type, in.shape.data(), in.shape.size(), in.data,
                       in.data_bytes});
    }
    std::vector<xonnx_tensor*> raw(output_count(), nullptr);
    Error e = take(xonnx_session_run(s_.get(), views.data(), views.size(), raw.data(), raw.size()));
    outputs->clear();
    if (!e) {
      for (xonnx_tensor* t : raw) outputs->emplace_back(t);
    }
    return e;
  }

 private:
  static std::string name_or_empty(const char* s) { return s ? s : ""; }
  using InfoFn = xonnx_status* (*)(const xonnx_session*, size_t, xonnx_element_type*, int64_t*, size_t, int64_t*);
  using NameFn = const char* (*)(const xonnx_session*, size_t);
  using DimNameFn = const char* (*)(const xonnx_session*, size_t, size_t);
  Error info(size_t i, TensorInfo* out, InfoFn info_fn, NameFn name_fn, DimNameFn dim_name_fn) const {
    int64_t rank = -1;
    Error e = take(info_fn(s_.get(), i, &out->type, nullptr, 0, &rank));
    if (e) return e;
    out->name = name_or_empty(name_fn(s_.get(), i));
    out->has_shape = rank >= 0;
    out->dims.assign(rank > 0 ? static_cast<size_t>(rank) : 0, -1);
    out->dim_names.clear();
    if (rank > 0) e = take(info_fn(s_.get(), i, &out->type, out->dims.data(), out->dims.size(), &rank));
    for (size_t d = 0; d < out->dims.size(); ++d) out->dim_names.push_back(name_or_empty(dim_name_fn(s_.get(), i, d)));
    return e;
  }
  struct Release {
    void operator()(xonnx_session* s) const { xonnx_session_release(s); }
  };
  std::unique_ptr<xonnx_session, Release> s_;
};

// Text generation from a GenAI model folder (xonnx_generator_*): one sequence, one thread.
class Generator {
 public:
  Generator() = default;

  // Loads `model_dir`; on failure returns the error and leaves *this empty.
  Error open(const std::string& model_dir, int num_threads = 1, int32_t max_length = 0) {
    xonnx_generator* g = nullptr;
    Error e = take(xonnx_generator_create(model_dir.c_str(), num_threads, max_length, &g));
    g_.reset(g);
    return e;
  }
  bool is_open() const { return g_ != nullptr; }

  // temperature 0: greedy; top_k 0 / top_p 1 / repetition_penalty 1: off; seed -1: random.
  Error set_sampling(float temperature, int32_t top_k = 0, float top_p = 1.0f, float repetition_penalty = 1.0f,
                     int64_t seed = -1) {
    return take(xonnx_generator_set_sampling(g_.get(), temperature, top_k, top_p, repetition_penalty, seed));
  }
  Error append_text(const std::string& text, bool add_special_tokens = false) {
    return take(xonnx_generator_append_text(g_.get(), text.c_str(), add_special_tokens ? 1 : 0));
  }
  Error append_tokens(const std::vector<int32_t>& ids) {
    return take(xonnx_generator_append_tokens(g_.get(), ids.data(), ids.size()));
  }
  Error next_token(int32_t* token) { return take(xonnx_generator_next_token(g_.get(), token)); }
  bool is_done() const { return xonnx_generator_is_done(g_.get()) != 0; }
  std::vector<int32_t> tokens() const {
    const int32_t* t = xonnx_generator_tokens(g_.get());
    return std::vector<int32_t>(t, t + xonnx_generator_token_count(g_.get()));
  }
  void rewind(size_t length) { xonnx_generator_rewind(g_.get(), length); }
  // The text `token` adds to the stream so far (complete characters only).
  std::string stream_text(int32_t token) {
    const char* s = xonnx_generator_stream_text(g_.get(), token);
    return s ? s : "";
  }
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = true) const {
    size_t length = 0;
    std::string out;
    if (take(xonnx_generator_decode(g_.get(), ids.data(), ids.size(), skip_special_tokens, nullptr, 0, &length))) {
      return out;
    }
    out.resize(length + 1);
    take(xonnx_generator_decode(g_.get(), ids.data(), ids.size(), skip_special_tokens, &out[0], out.size(), &length));
    out.resize(length);
    return out;
  }

 private:
  struct Release {
    void operator()(xonnx_generator* g) const { xonnx_generator_release(g); }
  };
  std::unique_ptr<xonnx_generator, Release> g_;
};

}  // namespace api
}  // namespace xonnx
