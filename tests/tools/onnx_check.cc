// onnx_check FILE...: libonnx's full check of each model (checker::check_model, then strict
// shape inference with type checks: what onnx.checker.check_model(full_check=True) does).
// Prints "OK FILE" or "FAIL FILE: reason"; exits 1 if any file fails. Links the FULL
// libprotobuf through libonnx, so it is a test tool only, never part of xonnx.
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string check(const std::string& path) {
  try {
    onnx::checker::check_model(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) return "cannot open";
    std::stringstream bytes;
    bytes << in.rdbuf();
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes.str())) return "not a valid ModelProto";
    const onnx::ShapeInferenceOptions strict(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: onnx_check MODEL.onnx...\n");
    return 2;
  }
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string error = check(argv[i]);
    if (error.empty()) {
      std::printf("OK   %s\n", argv[i]);
    } else {
      std::printf("FAIL %s: %s\n", argv[i], error.c_str());
      ++failed;
    }
  }
  return failed ? 1 : 0;
}
