/* xonnx C API: load an ONNX model and run it.
 *
 * Conventions
 * - Every fallible call returns an xonnx_status* : NULL on success, otherwise an error the
 *   caller owns and frees with xonnx_status_release(). Messages name the node, op, value or
 *   file that is wrong.
 * - Objects are opaque handles created by *_create and freed by *_release (NULL is accepted).
 * - Strings returned by the runtime stay valid as long as the object they came from.
 * - The runtime keeps no pointer to caller memory (model bytes, input buffers, output
 *   buffers) after the call that received it returns.
 * - Threads: the xonnx_session_run* functions may be called on one session from many threads
 *   at once; the session runs them one at a time (a mutex: callers wait, nothing is corrupted).
 *   For runs in parallel, create one session per thread. Different sessions are independent.
 *   Releasing a session while another thread uses it is the caller's error.
 * - No C++ exception ever crosses this API.
 * - Options are opaque objects with setters, so later versions add options without changing
 *   any struct an application compiled against.
 * - Versions: XONNX_VERSION_* (xonnx/version.h) and XONNX_API_VERSION describe the headers;
 *   xonnx_version() and xonnx_api_version() the library the application runs with (they differ
 *   only with a shared libxonnx.so).
 */
#ifndef XONNX_XONNX_H_
#define XONNX_XONNX_H_

#include <stddef.h>
#include <stdint.h>

#include "xonnx/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Incremented whenever functions or types are added to this header (2: xonnx_version;
 * 3: xonnx_set_log_callback). A function introduced in API version N is available when
 * xonnx_api_version() >= N. */
#define XONNX_API_VERSION 3

/* The symbols libxonnx.so exports (everything else in the library is hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define XONNX_API __attribute__((visibility("default")))
#else
#define XONNX_API
#endif

typedef enum xonnx_status_code {
  XONNX_OK = 0,
  XONNX_INVALID_ARGUMENT = 1,
  XONNX_INVALID_MODEL = 2,
  XONNX_UNSUPPORTED = 3,
  XONNX_NOT_FOUND = 4,
  XONNX_IO_ERROR = 5,
  XONNX_RESOURCE_EXHAUSTED = 6,
  XONNX_INTERNAL = 7,
  XONNX_CANCELLED = 8 /* the run was cancelled or passed its deadline */
} xonnx_status_code;

/* Element types; the values equal ONNX TensorProto.DataType. */
typedef enum xonnx_element_type {
  XONNX_TYPE_UNDEFINED = 0,
  XONNX_TYPE_FLOAT32 = 1,
  XONNX_TYPE_UINT8 = 2,
  XONNX_TYPE_INT8 = 3,
  XONNX_TYPE_UINT16 = 4,
  XONNX_TYPE_INT16 = 5,
  XONNX_TYPE_INT32 = 6,
  XONNX_TYPE_INT64 = 7,
  XONNX_TYPE_STRING = 8,
  XONNX_TYPE_BOOL = 9,
  XONNX_TYPE_FLOAT16 = 10,
  XONNX_TYPE_FLOAT64 = 11,
  XONNX_TYPE_UINT32 = 12,
  XONNX_TYPE_UINT64 = 13,
  XONNX_TYPE_BFLOAT16 = 16
} xonnx_element_type;

/* Graph optimization at session creation (xonnx_session_options_set_optimization_level). */
typedef enum xonnx_optimization_level {
  XONNX_OPTIMIZE_NONE = 0,  /* run the graph as loaded */
  XONNX_OPTIMIZE_BASIC = 1, /* constant folding, no-op/Identity removal, float16 computed in float32, CSE, dead code */
  XONNX_OPTIMIZE_ALL = 2    /* also BatchNorm folding, MatMul+Add, LayerNorm, GELU fusions (default) */
} xonnx_optimization_level;

typedef struct xonnx_status xonnx_status;
typedef struct xonnx_session_options xonnx_session_options;
typedef struct xonnx_session xonnx_session;
typedef struct xonnx_tensor xonnx_tensor; /* a runtime-owned output tensor */

/* A tensor described by the caller: used for inputs and for caller-provided output buffers.
 * For inputs, `data` holds `data_bytes` bytes in row-major order. */
typedef struct xonnx_tensor_view {
  const char* name; /* graph input/output name; NULL = by position */
  xonnx_element_type type;
  const int64_t* shape; /* `rank` dimensions */
  size_t rank;
  const void* data;
  size_t data_bytes;
} xonnx_tensor_view;

/* A caller-provided output buffer: the runtime writes the result into `data` (capacity
 * `capacity_bytes`) and its shape into `shape` (capacity `shape_capacity` dims). */
typedef struct xonnx_output_buffer {
  const char* name; /* graph output name; NULL = by position */
  void* data;
  size_t capacity_bytes;
  int64_t* shape;
  size_t shape_capacity;
  /* Filled by the runtime: */
  xonnx_element_type type;
  size_t rank;
  size_t data_bytes;
} xonnx_output_buffer;

/* ---- version and status ---- */
/* XONNX_API_VERSION of the library. */
XONNX_API uint32_t xonnx_api_version(void);
/* The library's version, "MAJOR.MINOR.PATCH" (XONNX_VERSION_STRING of its build); static storage. */
XONNX_API const char* xonnx_version(void);
/* A NULL status is success (XONNX_OK, message ""). When even the error object cannot be
 * allocated, the call returns a shared, static XONNX_RESOURCE_EXHAUSTED status, never NULL;
 * releasing it is allowed and does nothing. */
XONNX_API xonnx_status_code xonnx_status_get_code(const xonnx_status* status);
XONNX_API const char* xonnx_status_get_message(const xonnx_status* status);
XONNX_API void xonnx_status_release(xonnx_status* status);

/* ---- diagnostics (API version 3) ---- */
typedef enum xonnx_log_level {
  XONNX_LOG_DEBUG = 0,
  XONNX_LOG_INFO = 1,    /* a fast kernel declined a node and another fast kernel took it */
  XONNX_LOG_WARNING = 2, /* a node runs on its reference kernel although a fast kernel exists */
  XONNX_LOG_ERROR = 3
} xonnx_log_level;
/* `message` is valid during the call only. Called from the thread that caused the message,
 * never from two threads at once; it must not call xonnx_set_log_callback. */
typedef void (*xonnx_log_callback)(xonnx_log_level level, const char* message, void* user_data);
/* Process-wide: messages of `min_level` and above go to `callback` (NULL: none, the default;
 * the library never prints to stderr itself). Messages name the node, op and kernel. */
XONNX_API void xonnx_set_log_callback(xonnx_log_callback callback, void* user_data, xonnx_log_level min_level);

/* ---- session options ---- */
XONNX_API xonnx_status* xonnx_session_options_create(xonnx_session_options** out);
XONNX_API xonnx_status* xonnx_session_options_set_num_threads(xonnx_session_options* options, int num_threads);
/* Largest tensor (weights and intermediates) a session accepts, in bytes. */
XONNX_API xonnx_status* xonnx_session_options_set_max_tensor_bytes(xonnx_session_options* options, int64_t bytes);
/* The graph passes session creation runs (default XONNX_OPTIMIZE_ALL); in memory, the file is
 * not changed. A converted file (`xonnx convert`) gains nothing more from them. */
XONNX_API xonnx_status* xonnx_session_options_set_optimization_level(xonnx_session_options* options,
                                                                     xonnx_optimization_level level);
/* The memory cap in bytes (default: half the physical memory): no tensor may be larger, and the
 * tensors a load allocates, a session's intermediate buffers and a sequence may not add up to
 * more. A model that needs more fails with XONNX_RESOURCE_EXHAUSTED naming what needed it. */
XONNX_API xonnx_status* xonnx_session_options_set_max_memory_bytes(xonnx_session_options* options, int64_t bytes);
/* Wall-clock limit of one xonnx_session_run in seconds (0, the default: none). A run past it
 * fails with XONNX_CANCELLED; it is checked between nodes and loop iterations. */
XONNX_API xonnx_status* xonnx_session_options_set_run_timeout(xonnx_session_options* options, double seconds);
/* The caller reads only rows [start, end) of `axis` of graph output `output` (ONNX Slice bounds:
 * negative from the end, INT64_MAX past it): the session computes that range and the output
 * holds just it, its graph passes moving the cut up through the row-wise ops before it. A
 * language model's logits at the last position: ("logits", 1, -1, INT64_MAX), which runs the
 * head over one row of a prompt instead of all of them. Repeatable, one range per output; a
 * range the model cannot take (no such output, an axis past its rank) fails session creation. */
XONNX_API xonnx_status* xonnx_session_options_add_output_range(xonnx_session_options* options, const char* output,
                                                               int64_t axis, int64_t start, int64_t end);
XONNX_API void xonnx_session_options_release(xonnx_session_options* options);

/* ---- sessions ---- */
/* `options` may be NULL for defaults. External data resolves relative to the model's folder. */
XONNX_API xonnx_status* xonnx_session_create(const char* model_path, const xonnx_session_options* options,
                                             xonnx_session** out);
/* From memory; the model must not use external data. `data` may be freed after the call. */
XONNX_API xonnx_status* xonnx_session_create_from_memory(const void* data, size_t size,
                                                         const xonnx_session_options* options, xonnx_session** out);
XONNX_API void xonnx_session_release(xonnx_session* session);

XONNX_API size_t xonnx_session_input_count(const xonnx_session* session);
XONNX_API size_t xonnx_session_output_count(const xonnx_session* session);
/* Name of input/output `index`; NULL if out of range. */
XONNX_API const char* xonnx_session_input_name(const xonnx_session* session, size_t index);
XONNX_API const char* xonnx_session_output_name(const xonnx_session* session, size_t index);
/* Declared element type and shape. Symbolic or unknown dims are reported as -1, and
 * xonnx_session_*_dim_name gives the symbol ("batch") or "" when unnamed. *rank is set to the
 * declared rank (or -1 if unknown); at most `capacity` dims are written. */
XONNX_API xonnx_status* xonnx_session_input_info(const xonnx_session* session, size_t index, xonnx_element_type* type,
                                                 int64_t* dims, size_t capacity, int64_t* rank);
XONNX_API xonnx_status* xonnx_session_output_info(const xonnx_session* session, size_t index, xonnx_element_type* type,
                                                  int64_t* dims, size_t capacity, int64_t* rank);
XONNX_API const char* xonnx_session_input_dim_name(const xonnx_session* session, size_t index, size_t dim);
XONNX_API const char* xonnx_session_output_dim_name(const xonnx_session* session, size_t index, size_t dim);

/* Stops the session's run in progress at its next check (between nodes and loop iterations);
 * that run fails with XONNX_CANCELLED. The one session call that may come from another thread
 * while a run executes; runs that start afterwards are not affected. */
XONNX_API void xonnx_session_cancel(xonnx_session* session);

/* Runs with `num_inputs` inputs (all graph inputs). On success `outputs[i]` (an array of
 * xonnx_session_output_count() entries the caller supplies) receives a runtime-owned tensor
 * the caller frees with xonnx_tensor_release(). */
XONNX_API xonnx_status* xonnx_session_run(xonnx_session* session, const xonnx_tensor_view* inputs, size_t num_inputs,
                                          xonnx_tensor** outputs, size_t num_outputs);
/* Runs and copies each output into the caller's buffer. Fails with XONNX_INVALID_ARGUMENT
 * naming the output and the bytes needed when a buffer is too small. */
XONNX_API xonnx_status* xonnx_session_run_into(xonnx_session* session, const xonnx_tensor_view* inputs,
                                               size_t num_inputs, xonnx_output_buffer* outputs, size_t num_outputs);

/* Runs with some outputs written straight into caller-owned buffers: each entry of
 * `bound_outputs` names a graph output, and its `data` (writable, `data_bytes` bytes) receives
 * that output, whose type and shape must be exactly the entry's (else XONNX_INVALID_ARGUMENT
 * naming the output). The caller owns the buffers; the runtime writes them during this call
 * only and keeps no pointer to them afterwards. A bound buffer may also be passed in `inputs`:
 * this is how a decoder's KV cache is appended in place (past_present_share_buffer: the
 * max-length buffer given as past_key is bound as present_key, and GroupQueryAttention writes
 * only the new positions; other ops write a temporary copied into the buffer). `outputs` is
 * as for xonnx_session_run, with NULL at the bound outputs. */
xonnx_status* xonnx_session_run_with_binding(xonnx_session* session, const xonnx_tensor_view* inputs, size_t num_inputs,
                                             const xonnx_tensor_view* bound_outputs, size_t num_bound,
                                             xonnx_tensor** outputs, size_t num_outputs);

/* ---- runtime-owned tensors ---- */
XONNX_API xonnx_element_type xonnx_tensor_type(const xonnx_tensor* tensor);
XONNX_API size_t xonnx_tensor_rank(const xonnx_tensor* tensor);
XONNX_API const int64_t* xonnx_tensor_shape(const xonnx_tensor* tensor);
XONNX_API const void* xonnx_tensor_data(const xonnx_tensor* tensor);
XONNX_API size_t xonnx_tensor_data_bytes(const xonnx_tensor* tensor);
XONNX_API void xonnx_tensor_release(xonnx_tensor* tensor);

/* ---- text generation (GenAI model folders) ----
 * A generator holds one sequence of a language model in an ONNX Runtime GenAI folder
 * (genai_config.json, model.onnx + external data, tokenizer.json, tokenizer_config.json): the
 * tokens so far and their KV cache, preallocated to the maximum length. Append a prompt (text
 * or token ids), then call xonnx_generator_next_token until it reports the end. One thread at a
 * time per generator; generators are independent. docs/genai.md has an example. */
typedef struct xonnx_generator xonnx_generator;

/* Loads the folder. `num_threads` <= 0 means 1; `max_length` <= 0 means genai_config.json's
 * search.max_length (at most model.context_length). Sampling starts as the folder's search
 * defaults (greedy unless do_sample). Errors name the file and field. */
xonnx_status* xonnx_generator_create(const char* model_dir, int num_threads, int32_t max_length, xonnx_generator** out);
void xonnx_generator_release(xonnx_generator* generator);

/* Sampling of the next tokens: temperature 0 is greedy; top_k 0 keeps all tokens; top_p 1
 * keeps all; repetition_penalty 1 is none; seed -1 seeds from the OS. Invalid values fail
 * naming the parameter. */
xonnx_status* xonnx_generator_set_sampling(xonnx_generator* generator, float temperature, int32_t top_k, float top_p,
                                           float repetition_penalty, int64_t seed);

/* Appends UTF-8 text (special tokens written in it are recognised; the tokenizer's
 * post-processor adds BOS and the like only when add_special_tokens is nonzero), or token ids. */
xonnx_status* xonnx_generator_append_text(xonnx_generator* generator, const char* text, int add_special_tokens);
xonnx_status* xonnx_generator_append_tokens(xonnx_generator* generator, const int32_t* ids, size_t count);

/* Runs the model over what was appended and chooses the next token, which is appended too.
 * Fails when the sequence is full (xonnx_generator_is_done) or empty. */
xonnx_status* xonnx_generator_next_token(xonnx_generator* generator, int32_t* token);
/* 1 when the last token is one of the model's end-of-sequence ids or the sequence is full. */
int xonnx_generator_is_done(const xonnx_generator* generator);

/* The sequence (prompt and generated tokens); the pointer is valid until the next call that
 * changes the sequence. */
size_t xonnx_generator_token_count(const xonnx_generator* generator);
const int32_t* xonnx_generator_tokens(const xonnx_generator* generator);
/* Keeps the first `length` tokens (the KV cache of the rest is reused), for a new turn or a
 * new continuation. */
void xonnx_generator_rewind(xonnx_generator* generator, size_t length);

/* Text of `token` when streamed after the tokens given before: complete UTF-8 only (a
 * character split over tokens comes with its last token), special tokens left out. Valid
 * until the next call on the generator. NULL only for a NULL generator. */
const char* xonnx_generator_stream_text(xonnx_generator* generator, int32_t token);
/* Decodes ids into `buffer` (NUL-terminated, at most `capacity` bytes with the NUL);
 * `*length` receives the text's full length, so a too small buffer can be retried. */
xonnx_status* xonnx_generator_decode(const xonnx_generator* generator, const int32_t* ids, size_t count,
                                     int skip_special_tokens, char* buffer, size_t capacity, size_t* length);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XONNX_XONNX_H_ */
