/* A tiny application on xonnx's C API: what the packaging tests build against an installed SDK
 * (find_package, pkg-config, add_subdirectory, the .deb) and what the size table measures.
 *
 *   app MODEL [--input IN.bin] [--expect OUT.bin | --write OUT.bin] [--runs N]
 *
 * Runs a model with one float32 input: from IN.bin (raw little-endian floats; symbolic dims take
 * what is left) or, without it, a fixed pattern at the declared shape (symbolic dims = 1). Prints
 * the library version, the first output's shape and its argmax; --expect compares the first
 * output with OUT.bin (|got - want| <= 1e-5 + 1e-4 |want|), --write saves it there; --runs N
 * runs it N more times and prints the median latency (what scripts/measure-sizes.sh reports per
 * build). Warnings the library logs go to stderr. Exit 0 on success, 1 on any failure. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xonnx/xonnx.h"

static int fail_status(const char* what, xonnx_status* status) {
  fprintf(stderr, "%s: %s\n", what, xonnx_status_get_message(status));
  xonnx_status_release(status);
  return 1;
}

/* Warnings (a node fell back to a slower kernel, a model this build cannot optimize) go to
 * stderr, as an application would show them. */
static void print_log(xonnx_log_level level, const char* message, void* user_data) {
  (void)user_data;
  fprintf(stderr, "%s: %s\n", level >= XONNX_LOG_ERROR ? "error" : "warning", message);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Reads a whole file; *bytes receives its size. NULL when it cannot. */
static void* read_file(const char* path, size_t* bytes) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  void* data = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    const long size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc(size > 0 ? (size_t)size : 1)) != NULL &&
        fread(data, 1, (size_t)size, f) != (size_t)size) {
      free(data);
      data = NULL;
    }
    *bytes = size > 0 ? (size_t)size : 0;
  }
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  const char *model = NULL, *input_path = NULL, *expect_path = NULL, *write_path = NULL;
  long runs = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--input") == 0 && i + 1 < argc)
      input_path = argv[++i];
    else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
      expect_path = argv[++i];
    else if (strcmp(argv[i], "--write") == 0 && i + 1 < argc)
      write_path = argv[++i];
    else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc && (runs = strtol(argv[i + 1], NULL, 10)) > 0 && runs <= 100000)
      ++i;
    else if (!model && argv[i][0] != '-')
      model = argv[i];
    else {
      fprintf(stderr, "usage: %s MODEL [--input IN.bin] [--expect OUT.bin | --write OUT.bin] [--runs N (1-100000)]\n", argv[0]);
      return 2;
    }
  }
  if (!model) {
    fprintf(stderr, "usage: %s MODEL [--input IN.bin] [--expect OUT.bin | --write OUT.bin] [--runs N (1-100000)]\n", argv[0]);
    return 2;
  }
  printf("xonnx %s (headers %s, API %u)\n", xonnx_version(), XONNX_VERSION_STRING, xonnx_api_version());

  xonnx_set_log_callback(print_log, NULL, XONNX_LOG_WARNING);
  xonnx_session* session = NULL;
  xonnx_status* st = xonnx_session_create(model, NULL, &session);
  if (st) return fail_status("create", st);
  if (xonnx_session_input_count(session) != 1 || xonnx_session_output_count(session) < 1) {
    fprintf(stderr, "the model must have one input and at least one output\n");
    return 1;
  }

  /* The input: its declared shape, symbolic dims resolved by the file's size (or 1). */
  xonnx_element_type type;
  int64_t shape[8];
  int64_t rank = 0;
  st = xonnx_session_input_info(session, 0, &type, shape, 8, &rank);
  if (st) return fail_status("input_info", st);
  if (type != XONNX_TYPE_FLOAT32 || rank < 0 || rank > 8) {
    fprintf(stderr, "the input must be a float32 tensor of known rank <= 8\n");
    return 1;
  }
  size_t in_bytes = 0;
  float* x = input_path ? (float*)read_file(input_path, &in_bytes) : NULL;
  if (input_path && !x) {
    fprintf(stderr, "cannot read %s\n", input_path);
    return 1;
  }
  size_t known = 1;
  for (int64_t d = 0; d < rank; ++d) known *= shape[d] >= 0 ? (size_t)shape[d] : 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (shape[d] < 0) shape[d] = x ? (int64_t)(in_bytes / sizeof(float) / known) : 1;
  }
  size_t count = 1;
  for (int64_t d = 0; d < rank; ++d) count *= (size_t)shape[d];
  if (x && count * sizeof(float) != in_bytes) {
    fprintf(stderr, "%s holds %zu bytes, the input's shape needs %zu\n", input_path, in_bytes, count * sizeof(float));
    return 1;
  }
  if (!x) {
    x = (float*)malloc(count * sizeof(float) + 1);
    for (size_t i = 0; i < count; ++i) x[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
  }

  const xonnx_tensor_view in = {NULL, XONNX_TYPE_FLOAT32, shape, (size_t)rank, x, count * sizeof(float)};
  const size_t n_out = xonnx_session_output_count(session);
  xonnx_tensor** outs = (xonnx_tensor**)calloc(n_out, sizeof(xonnx_tensor*));
  st = xonnx_session_run(session, &in, 1, outs, n_out);
  if (st) return fail_status("run", st);

  const xonnx_tensor* y = outs[0];
  if (xonnx_tensor_type(y) != XONNX_TYPE_FLOAT32) {
    fprintf(stderr, "the first output is not float32\n");
    return 1;
  }
  const float* values = (const float*)xonnx_tensor_data(y);
  const size_t n = xonnx_tensor_data_bytes(y) / sizeof(float);
  size_t best = 0;
  for (size_t i = 1; i < n; ++i) {
    if (values[i] > values[best]) best = i;
  }
  printf("output %s: [", xonnx_session_output_name(session, 0));
  for (size_t d = 0; d < xonnx_tensor_rank(y); ++d)
    printf("%s%lld", d ? ", " : "", (long long)xonnx_tensor_shape(y)[d]);
  printf("], argmax %zu\n", best);

  int result = 0;
  if (runs > 0) {
    double* ms = (double*)malloc((size_t)runs * sizeof(double));
    xonnx_tensor** again = (xonnx_tensor**)calloc(n_out, sizeof(xonnx_tensor*));
    for (long r = 0; r < runs && result == 0; ++r) {
      const double start = now_ms();
      st = xonnx_session_run(session, &in, 1, again, n_out);
      ms[r] = now_ms() - start;
      if (st) result = fail_status("run", st);
      for (size_t i = 0; i < n_out; ++i) xonnx_tensor_release(again[i]), again[i] = NULL;
    }
    if (result == 0) {
      qsort(ms, (size_t)runs, sizeof(double), compare_doubles);
      printf("median of %ld runs: %.3f ms\n", runs, ms[runs / 2]);
    }
    free(again);
    free(ms);
  }
  if (expect_path) {
    size_t want_bytes = 0;
    float* want = (float*)read_file(expect_path, &want_bytes);
    if (!want || want_bytes != n * sizeof(float)) {
      fprintf(stderr, "%s: cannot read %zu floats\n", expect_path, n);
      result = 1;
    } else {
      size_t bad = 0;
      for (size_t i = 0; i < n; ++i) bad += !(fabsf(values[i] - want[i]) <= 1e-5f + 1e-4f * fabsf(want[i]));
      printf("%s: %zu of %zu values differ\n", expect_path, bad, n);
      result = bad != 0;
    }
    free(want);
  }
  if (write_path) {
    FILE* f = fopen(write_path, "wb");
    if (!f || fwrite(values, sizeof(float), n, f) != n) {
      fprintf(stderr, "cannot write %s\n", write_path);
      result = 1;
    }
    if (f) fclose(f);
  }
  for (size_t i = 0; i < n_out; ++i) xonnx_tensor_release(outs[i]);
  free(outs);
  free(x);
  xonnx_session_release(session);
  if (result == 0) printf("ok\n");
  return result;
}
