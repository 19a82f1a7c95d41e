// The C API over runtime::Session. Errors become xonnx_status objects; no exception
// crosses this boundary.
#include "xonnx/xonnx.h"

#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "runtime/core/log.h"
#include "runtime/exec/session.h"
#include "sdk/src/c_api_internal.h"

struct xonnx_session_options {
  xonnx::SessionOptions options;
};

struct xonnx_session {
  std::unique_ptr<xonnx::Session> session;
};

struct xonnx_tensor {
  xonnx::Tensor tensor;
};

// The C enums are the runtime's, value for value: codes, types and levels pass by cast.
#define XONNX_SAME_VALUE(c_value, cpp_value) \
  static_assert(static_cast<int>(c_value) == static_cast<int>(cpp_value), #c_value " != " #cpp_value)
XONNX_SAME_VALUE(XONNX_OK, xonnx::StatusCode::kOk);
XONNX_SAME_VALUE(XONNX_INVALID_ARGUMENT, xonnx::StatusCode::kInvalidArgument);
XONNX_SAME_VALUE(XONNX_INVALID_MODEL, xonnx::StatusCode::kInvalidModel);
XONNX_SAME_VALUE(XONNX_UNSUPPORTED, xonnx::StatusCode::kUnsupported);
XONNX_SAME_VALUE(XONNX_NOT_FOUND, xonnx::StatusCode::kNotFound);
XONNX_SAME_VALUE(XONNX_IO_ERROR, xonnx::StatusCode::kIo);
XONNX_SAME_VALUE(XONNX_RESOURCE_EXHAUSTED, xonnx::StatusCode::kResourceExhausted);
XONNX_SAME_VALUE(XONNX_INTERNAL, xonnx::StatusCode::kInternal);
XONNX_SAME_VALUE(XONNX_CANCELLED, xonnx::StatusCode::kCancelled);
XONNX_SAME_VALUE(XONNX_TYPE_UNDEFINED, xonnx::DataType::kUndefined);
XONNX_SAME_VALUE(XONNX_TYPE_FLOAT32, xonnx::DataType::kFloat);
XONNX_SAME_VALUE(XONNX_TYPE_UINT8, xonnx::DataType::kUint8);
XONNX_SAME_VALUE(XONNX_TYPE_INT8, xonnx::DataType::kInt8);
XONNX_SAME_VALUE(XONNX_TYPE_UINT16, xonnx::DataType::kUint16);
XONNX_SAME_VALUE(XONNX_TYPE_INT16, xonnx::DataType::kInt16);
XONNX_SAME_VALUE(XONNX_TYPE_INT32, xonnx::DataType::kInt32);
XONNX_SAME_VALUE(XONNX_TYPE_INT64, xonnx::DataType::kInt64);
XONNX_SAME_VALUE(XONNX_TYPE_STRING, xonnx::DataType::kString);
XONNX_SAME_VALUE(XONNX_TYPE_BOOL, xonnx::DataType::kBool);
XONNX_SAME_VALUE(XONNX_TYPE_FLOAT16, xonnx::DataType::kFloat16);
XONNX_SAME_VALUE(XONNX_TYPE_FLOAT64, xonnx::DataType::kDouble);
XONNX_SAME_VALUE(XONNX_TYPE_UINT32, xonnx::DataType::kUint32);
XONNX_SAME_VALUE(XONNX_TYPE_UINT64, xonnx::DataType::kUint64);
XONNX_SAME_VALUE(XONNX_TYPE_BFLOAT16, xonnx::DataType::kBFloat16);
XONNX_SAME_VALUE(XONNX_LOG_DEBUG, xonnx::LogLevel::kDebug);
XONNX_SAME_VALUE(XONNX_LOG_INFO, xonnx::LogLevel::kInfo);
XONNX_SAME_VALUE(XONNX_LOG_WARNING, xonnx::LogLevel::kWarning);
XONNX_SAME_VALUE(XONNX_LOG_ERROR, xonnx::LogLevel::kError);
XONNX_SAME_VALUE(XONNX_OPTIMIZE_NONE, xonnx::passes::OptLevel::kNone);
XONNX_SAME_VALUE(XONNX_OPTIMIZE_BASIC, xonnx::passes::OptLevel::kBasic);
XONNX_SAME_VALUE(XONNX_OPTIMIZE_ALL, xonnx::passes::OptLevel::kAll);
#undef XONNX_SAME_VALUE

namespace {

using xonnx::capi::bad_arg;
using xonnx::capi::from_status;
using xonnx::capi::guarded;
using xonnx::capi::make_status;

const xonnx::ValueInfo* info_at(const std::vector<xonnx::ValueInfo>& infos, size_t index) {
  return index < infos.size() ? &infos[index] : nullptr;
}

xonnx_status* describe(const xonnx::ValueInfo* info, xonnx_element_type* type, int64_t* dims, size_t capacity,
                       int64_t* rank) {
  if (!info) return bad_arg("index out of range");
  if (type) *type = static_cast<xonnx_element_type>(info->type.elem_type);
  if (rank) *rank = info->type.has_shape ? static_cast<int64_t>(info->type.dims.size()) : -1;
  if (dims) {
    for (size_t d = 0; d < info->type.dims.size() && d < capacity; ++d) {
      dims[d] = info->type.dims[d].known() ? info->type.dims[d].value : -1;
    }
  }
  return nullptr;
}

const char* dim_name(const xonnx::ValueInfo* info, size_t dim) {
  if (!info || dim >= info->type.dims.size()) return nullptr;
  return info->type.dims[dim].param.c_str();
}

// Wraps caller buffers as tensors (views: no copy) in graph-input order.
xonnx_status* bind_inputs(const xonnx::Session& session, const xonnx_tensor_view* inputs, size_t num_inputs,
                          std::vector<xonnx::Value>* out, std::vector<const void*>* input_storage) {
  const auto& infos = session.inputs();
  if (num_inputs != infos.size()) {
    return bad_arg("the model takes " + std::to_string(infos.size()) + " inputs, got " + std::to_string(num_inputs));
  }
  if (num_inputs && !inputs) return bad_arg("inputs is NULL");
  out->assign(infos.size(), xonnx::Value());
  for (size_t i = 0; i < num_inputs; ++i) {
    const xonnx_tensor_view& v = inputs[i];
    size_t slot = i;
    if (v.name) {
      slot = infos.size();
      for (size_t k = 0; k < infos.size(); ++k) {
        if (infos[k].name == v.name) slot = k;
      }
      if (slot == infos.size()) return bad_arg(std::string("the model has no input named '") + v.name + "'");
    }
    const std::string label = "input '" + infos[slot].name + "'";
    if (!(*out)[slot].empty()) return bad_arg(label + " is given twice");
    const auto dtype = static_cast<xonnx::DataType>(v.type);
    if (!xonnx::dtype_is_known(v.type) || v.type == XONNX_TYPE_STRING) {
      return bad_arg(label + ": unsupported element type " + std::to_string(v.type));
    }
    if (v.rank && !v.shape) return bad_arg(label + ": shape is NULL");
    xonnx::Shape shape(v.shape, v.shape + v.rank);
    const int64_t n = xonnx::shape_numel(shape);
    if (n < 0) return bad_arg(label + ": invalid shape " + xonnx::shape_to_string(shape));
    const int64_t bytes = xonnx::dtype_storage_bytes(dtype, n);
    if (bytes < 0 || static_cast<size_t>(bytes) != v.data_bytes) {
      return bad_arg(label + ": " + std::to_string(v.data_bytes) + " bytes given, shape " +
                     xonnx::shape_to_string(shape) + " of " + xonnx::dtype_name(dtype) + " needs " +
                     std::to_string(bytes));
    }
    if (bytes > 0 && !v.data) return bad_arg(label + ": data is NULL");
    auto storage = xonnx::Storage::view(v.data, static_cast<size_t>(bytes), nullptr);
    input_storage->push_back(storage.get());
    (*out)[slot] = xonnx::Value(xonnx::Tensor(dtype, std::move(shape), std::move(storage)));
  }
  return nullptr;
}

using Bindings = std::vector<std::pair<std::string, xonnx::Tensor>>;

// Runs and returns tensors that do not point into caller memory.
// `bindings`: outputs written into caller buffers for this run (Session::run_bound); `bound`
// marks them, left undefined in results.
xonnx_status* run_session(xonnx_session* s, const xonnx_tensor_view* inputs, size_t num_inputs, size_t num_outputs,
                          std::vector<xonnx::Tensor>* results, const Bindings* bindings = nullptr,
                          const std::vector<bool>* bound = nullptr) {
  if (!s) return bad_arg("session is NULL");
  if (num_outputs != s->session->outputs().size()) {
    return bad_arg("the model has " + std::to_string(s->session->outputs().size()) + " outputs, " +
                   std::to_string(num_outputs) + " requested");
  }
  std::vector<xonnx::Value> values;
  std::vector<const void*> caller_storage;
  if (xonnx_status* err = bind_inputs(*s->session, inputs, num_inputs, &values, &caller_storage)) return err;
  std::vector<xonnx::Value> outs;
  const xonnx::Status run = bindings ? s->session->run_bound(values, *bindings, outs) : s->session->run(values, outs);
  if (!run.is_ok()) return from_status(run);
  for (size_t i = 0; i < outs.size(); ++i) {
    const xonnx::Value& v = outs[i];
    if (bound && (*bound)[i]) {
      results->emplace_back();
      continue;
    }
    if (!v.is_tensor()) {
      return make_status(XONNX_UNSUPPORTED, "output '" + s->session->outputs()[i].name +
                                                "' is not a tensor (sequences are not exposed by the C API)");
    }
    xonnx::Tensor t = v.tensor();
    for (const void* p : caller_storage) {
      if (t.storage().get() == p) {  // an output aliasing an input buffer: copy it out
        auto copy = t.clone();
        if (!copy.is_ok()) return from_status(copy.status());
        t = std::move(copy).value();
      }
    }
    results->push_back(std::move(t));
  }
  return nullptr;
}

// The C callback behind the runtime's log sink (one process-wide callback, as the sink).
std::atomic<xonnx_log_callback> g_log_callback{nullptr};
void forward_log(xonnx::LogLevel level, const char* message, void* user_data) {
  if (xonnx_log_callback callback = g_log_callback.load()) {
    callback(static_cast<xonnx_log_level>(level), message, user_data);
  }
}

}  // namespace

extern "C" {

uint32_t xonnx_api_version(void) { return XONNX_API_VERSION; }
const char* xonnx_version(void) { return XONNX_VERSION_STRING; }

xonnx_status_code xonnx_status_get_code(const xonnx_status* status) { return status ? status->code : XONNX_OK; }
const char* xonnx_status_get_message(const xonnx_status* status) { return status ? status->message.c_str() : ""; }
void xonnx_status_release(xonnx_status* status) {
  if (status != xonnx::capi::out_of_memory()) delete status;
}

void xonnx_set_log_callback(xonnx_log_callback callback, void* user_data, xonnx_log_level min_level) {
  // Unset first (this waits for a message in progress), so no message reaches the new callback
  // with the old user_data.
  xonnx::set_log_sink(nullptr, nullptr, xonnx::LogLevel::kError);
  g_log_callback.store(callback);
  xonnx::set_log_sink(callback ? forward_log : nullptr, user_data, static_cast<xonnx::LogLevel>(min_level));
}

xonnx_status* xonnx_session_options_create(xonnx_session_options** out) {
  return guarded([&]() -> xonnx_status* {
    if (!out) return bad_arg("out is NULL");
    *out = new xonnx_session_options();
    return nullptr;
  });
}
xonnx_status* xonnx_session_options_set_num_threads(xonnx_session_options* options, int num_threads) {
  return guarded([&]() -> xonnx_status* {
    if (!options) return bad_arg("options is NULL");
    if (num_threads < 1) return bad_arg("num_threads must be >= 1, got " + std::to_string(num_threads));
    options->options.num_threads = num_threads;
    return nullptr;
  });
}
xonnx_status* xonnx_session_options_set_max_tensor_bytes(xonnx_session_options* options, int64_t bytes) {
  return guarded([&]() -> xonnx_status* {
    if (!options) return bad_arg("options is NULL");
    if (bytes <= 0) return bad_arg("max_tensor_bytes must be positive, got " + std::to_string(bytes));
    options->options.load.max_tensor_bytes = bytes;
    return nullptr;
  });
}
xonnx_status* xonnx_session_options_set_optimization_level(xonnx_session_options* options,
                                                           xonnx_optimization_level level) {
  return guarded([&]() -> xonnx_status* {
    if (!options) return bad_arg("options is NULL");
    if (level < XONNX_OPTIMIZE_NONE || level > XONNX_OPTIMIZE_ALL) {
      return bad_arg("optimization level must be XONNX_OPTIMIZE_NONE, _BASIC or _ALL, got " +
                     std::to_string(static_cast<int>(level)));
    }
    options->options.optimization = static_cast<xonnx::passes::OptLevel>(level);
    return nullptr;
  });
}
xonnx_status* xonnx_session_options_set_max_memory_bytes(xonnx_session_options* options, int64_t bytes) {
  return guarded([&]() -> xonnx_status* {
    if (!options) return bad_arg("options is NULL");
    if (bytes <= 0) return bad_arg("max_memory_bytes must be positive, got " + std::to_string(bytes));
    options->options.load.max_memory_bytes = bytes;
    return nullptr;
  });
}
xonnx_status* xonnx_session_options_set_run_timeout(xonnx_session_options* options, double seconds) {
  return guarded([&]() -> xonnx_status* {
    if (!options) return bad_arg("options is NULL");
    if (!(seconds >= 0)) return bad_arg("the run timeout must be >= 0 seconds, got " + std::to_string(seconds));
    options->options.run_timeout_seconds = seconds;
    return nullptr;
  });
}
xonnx_status* xonnx_session_options_add_output_range(xonnx_session_options* options, const char* output, int64_t axis,
                                                     int64_t start, int64_t end) {
  return guarded([&]() -> xonnx_status* {
    if (!options) return bad_arg("options is NULL");
    if (!output) return bad_arg("output is NULL");
    options->options.output_ranges.push_back({output, axis, start, end});
    return nullptr;
  });
}
void xonnx_session_options_release(xonnx_session_options* options) { delete options; }
void xonnx_session_cancel(xonnx_session* session) {
  if (session && session->session) session->session->cancel();
}

xonnx_status* xonnx_session_create(const char* model_path, const xonnx_session_options* options, xonnx_session** out) {
  return guarded([&]() -> xonnx_status* {
    if (!model_path || !out) return bad_arg("model_path and out must not be NULL");
    *out = nullptr;
    auto session = xonnx::Session::create(model_path, options ? options->options : xonnx::SessionOptions());
    if (!session.is_ok()) return from_status(session.status());
    *out = new xonnx_session{std::move(session).value()};
    return nullptr;
  });
}

xonnx_status* xonnx_session_create_from_memory(const void* data, size_t size, const xonnx_session_options* options,
                                               xonnx_session** out) {
  return guarded([&]() -> xonnx_status* {
    if (!data || !out) return bad_arg("data and out must not be NULL");
    *out = nullptr;
    auto session = xonnx::Session::create_from_memory(data, size, options ? options->options : xonnx::SessionOptions());
    if (!session.is_ok()) return from_status(session.status());
    *out = new xonnx_session{std::move(session).value()};
    return nullptr;
  });
}

void xonnx_session_release(xonnx_session* session) { delete session; }

size_t xonnx_session_input_count(const xonnx_session* s) { return s ? s->session->inputs().size() : 0; }
size_t xonnx_session_output_count(const xonnx_session* s) { return s ? s->session->outputs().size() : 0; }
const char* xonnx_session_input_name(const xonnx_session* s, size_t index) {
  const xonnx::ValueInfo* info = s ? info_at(s->session->inputs(), index) : nullptr;
  return info ? info->name.c_str() : nullptr;
}
const char* xonnx_session_output_name(const xonnx_session* s, size_t index) {
  const xonnx::ValueInfo* info = s ? info_at(s->session->outputs(), index) : nullptr;
  return info ? info->name.c_str() : nullptr;
}
xonnx_status* xonnx_session_input_info(const xonnx_session* s, size_t index, xonnx_element_type* type, int64_t* dims,
                                       size_t capacity, int64_t* rank) {
  return guarded([&]() -> xonnx_status* {
    if (!s) return bad_arg("session is NULL");
    return describe(info_at(s->session->inputs(), index), type, dims, capacity, rank);
  });
}
xonnx_status* xonnx_session_output_info(const xonnx_session* s, size_t index, xonnx_element_type* type, int64_t* dims,
                                        size_t capacity, int64_t* rank) {
  return guarded([&]() -> xonnx_status* {
    if (!s) return bad_arg("session is NULL");
    return describe(info_at(s->session->outputs(), index), type, dims, capacity, rank);
  });
}
const char* xonnx_session_input_dim_name(const xonnx_session* s, size_t index, size_t dim) {
  return s ? dim_name(info_at(s->session->inputs(), index), dim) : nullptr;
}
const char* xonnx_session_output_dim_name(const xonnx_session* s, size_t index, size_t dim) {
  return s ? dim_name(info_at(s->session->outputs(), index), dim) : nullptr;
}

xonnx_status* xonnx_session_run(xonnx_session* session, const xonnx_tensor_view* inputs, size_t num_inputs,
                                xonnx_tensor** outputs, size_t num_outputs) {
  return guarded([&]() -> xonnx_status* {
    if (num_outputs && !outputs) return bad_arg("outputs is NULL");
    std::vector<xonnx::Tensor> results;
    if (xonnx_status* err = run_session(session, inputs, num_inputs, num_outputs, &results)) return err;
    for (size_t i = 0; i < results.size(); ++i) outputs[i] = new xonnx_tensor{std::move(results[i])};
    return nullptr;
  });
}

xonnx_status* xonnx_session_run_with_binding(xonnx_session* session, const xonnx_tensor_view* inputs, size_t num_inputs,
                                             const xonnx_tensor_view* bound_outputs, size_t num_bound,
                                             xonnx_tensor** outputs, size_t num_outputs) {
  return guarded([&]() -> xonnx_status* {
    if (!session) return bad_arg("session is NULL");
    if (num_outputs && !outputs) return bad_arg("outputs is NULL");
    if (num_bound && !bound_outputs) return bad_arg("bound_outputs is NULL");
    const auto& infos = session->session->outputs();
    std::vector<bool> bound(infos.size(), false);
    Bindings bindings;  // for this call only (another thread's run never writes them)
    for (size_t b = 0; b < num_bound; ++b) {
      const xonnx_tensor_view& v = bound_outputs[b];
      if (!v.name) return bad_arg("bound output " + std::to_string(b) + " has no name");
      size_t which = infos.size();
      for (size_t k = 0; k < infos.size(); ++k) {
        if (infos[k].name == v.name) which = k;
      }
      const std::string label = std::string("bound output '") + v.name + "'";
      if (which == infos.size()) return bad_arg(std::string("the model has no output named '") + v.name + "'");
      if (bound[which]) return bad_arg(label + " is given twice");
      if (!xonnx::dtype_is_known(v.type) || v.type == XONNX_TYPE_STRING) {
        return bad_arg(label + ": unsupported element type " + std::to_string(v.type));
      }
      if (v.rank && !v.shape) return bad_arg(label + ": shape is NULL");
      const auto dtype = static_cast<xonnx::DataType>(v.type);
      xonnx::Shape shape(v.shape, v.shape + v.rank);
      const int64_t n = xonnx::shape_numel(shape);
      const int64_t bytes = n < 0 ? -1 : xonnx::dtype_storage_bytes(dtype, n);
      if (bytes < 0 || static_cast<size_t>(bytes) != v.data_bytes) {
        return bad_arg(label + ": " + std::to_string(v.data_bytes) + " bytes given for shape " +
                       xonnx::shape_to_string(shape) + " of " + xonnx::dtype_name(dtype));
      }
      if (bytes > 0 && !v.data) return bad_arg(label + ": data is NULL");
      auto storage = xonnx::Storage::view(v.data, static_cast<size_t>(bytes), nullptr);
      bindings.emplace_back(v.name, xonnx::Tensor(dtype, std::move(shape), std::move(storage)));
      bound[which] = true;
    }
    std::vector<xonnx::Tensor> results;
    if (xonnx_status* err = run_session(session, inputs, num_inputs, num_outputs, &results, &bindings, &bound)) {
      return err;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      outputs[i] = bound[i] ? nullptr : new xonnx_tensor{std::move(results[i])};
    }
    return nullptr;
  });
}

xonnx_status* xonnx_session_run_into(xonnx_session* session, const xonnx_tensor_view* inputs, size_t num_inputs,
                                     xonnx_output_buffer* outputs, size_t num_outputs) {
  return guarded([&]() -> xonnx_status* {
    if (num_outputs && !outputs) return bad_arg("outputs is NULL");
    std::vector<xonnx::Tensor> results;
    if (xonnx_status* err = run_session(session, inputs, num_inputs, num_outputs, &results)) return err;
    const auto& infos = session->session->outputs();
    for (size_t i = 0; i < num_outputs; ++i) {
      xonnx_output_buffer& buf = outputs[i];
      size_t which = i;
      if (buf.name) {
        which = infos.size();
        for (size_t k = 0; k < infos.size(); ++k) {
          if (infos[k].name == buf.name) which = k;
        }
        if (which == infos.size()) return bad_arg(std::string("the model has no output named '") + buf.name + "'");
      }
      const xonnx::Tensor& t = results[which];
      if (t.dtype() == xonnx::DataType::kString)
        return make_status(XONNX_UNSUPPORTED, "string outputs are not exposed by the C API");
      const std::string label = "output '" + infos[which].name + "'";
      if (t.rank() > buf.shape_capacity) {
        return bad_arg(label + " has rank " + std::to_string(t.rank()) + ", shape capacity is " +
                       std::to_string(buf.shape_capacity));
      }
      if (t.nbytes() > buf.capacity_bytes) {
        return bad_arg(label + " needs " + std::to_string(t.nbytes()) + " bytes, buffer has " +
                       std::to_string(buf.capacity_bytes));
      }
      if (t.nbytes() && !buf.data) return bad_arg(label + ": data is NULL");
      if (t.rank() && !buf.shape) return bad_arg(label + ": shape is NULL");
      if (t.nbytes()) std::memcpy(buf.data, t.raw_data(), t.nbytes());
      for (size_t d = 0; d < t.rank(); ++d) buf.shape[d] = t.dim(d);
      buf.rank = t.rank();
      buf.type = static_cast<xonnx_element_type>(t.dtype());
      buf.data_bytes = t.nbytes();
    }
    return nullptr;
  });
}

xonnx_element_type xonnx_tensor_type(const xonnx_tensor* t) {
  return t ? static_cast<xonnx_element_type>(t->tensor.dtype()) : XONNX_TYPE_UNDEFINED;
}
size_t xonnx_tensor_rank(const xonnx_tensor* t) { return t ? t->tensor.rank() : 0; }
const int64_t* xonnx_tensor_shape(const xonnx_tensor* t) { return t ? t->tensor.shape().data() : nullptr; }
const void* xonnx_tensor_data(const xonnx_tensor* t) { return t ? t->tensor.raw_data() : nullptr; }
size_t xonnx_tensor_data_bytes(const xonnx_tensor* t) { return t ? t->tensor.nbytes() : 0; }
void xonnx_tensor_release(xonnx_tensor* t) { delete t; }

}  // extern "C"
