// The C++ twin of app.c on xonnx.hpp (header-only over the C API): runs a model with one float32
// input read from IN.bin and compares the first output with OUT.bin.
//   app_cpp MODEL IN.bin OUT.bin
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "xonnx/xonnx.hpp"

static std::vector<float> read_floats(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::copy(bytes.begin(), bytes.begin() + values.size() * sizeof(float), reinterpret_cast<char*>(values.data()));
  return values;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL IN.bin OUT.bin\n", argv[0]);
    return 2;
  }
  std::printf("xonnx %s (headers %s)\n", xonnx::api::version().c_str(), XONNX_VERSION_STRING);
  xonnx::api::Session session;
  if (xonnx::api::Error e = session.open(argv[1])) {
    std::fprintf(stderr, "open: %s\n", e.message.c_str());
    return 1;
  }
  const std::vector<float> x = read_floats(argv[2]);
  const std::vector<float> want = read_floats(argv[3]);
  // The declared shape, its one symbolic dim taking what the file holds.
  std::vector<int64_t> shape = session.input_shape(0);
  int64_t known = 1;
  for (int64_t d : shape) known *= d < 0 ? 1 : d;
  for (int64_t& d : shape) {
    if (d < 0) d = static_cast<int64_t>(x.size()) / known;
  }
  std::vector<xonnx::api::Tensor> outputs;
  xonnx::api::Error e = session.run({xonnx::api::Input::of(session.input_name(0), XONNX_TYPE_FLOAT32, shape, x)}, &outputs);
  if (e) {
    std::fprintf(stderr, "run: %s\n", e.message.c_str());
    return 1;
  }
  const float* got = outputs[0].data<float>();
  const size_t n = outputs[0].data_bytes() / sizeof(float);
  if (n != want.size()) {
    std::fprintf(stderr, "%zu outputs, %zu expected\n", n, want.size());
    return 1;
  }
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += !(std::fabs(got[i] - want[i]) <= 1e-5f + 1e-4f * std::fabs(want[i]));
  std::printf("%zu of %zu values differ\n", bad, n);
  if (bad) return 1;
  std::printf("ok\n");
  return 0;
}
