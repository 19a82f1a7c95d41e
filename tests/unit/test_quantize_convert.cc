// convert_file with --quantize: the file shrinks, the written model loads and runs, verification
// compares by cosine, and the report gets the quantization sections.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <random>

#include "converter/convert.h"
#include "converter/report.h"
#include "converter/writer.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace convert {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/xonnx_quantize_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

ValueInfo float_info(const std::string& name, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeInfo::Kind::kTensor;
  v.type.elem_type = DataType::kFloat;
  v.type.has_shape = true;
  for (int64_t d : dims) v.type.dims.push_back(Dim{d, ""});
  return v;
}

// x [2, 128] -> MatMul(w1 [128, 64]) -> Relu -> MatMul(w2 [64, 10]) -> y
Model mlp() {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 0.1f);
  auto weights = [&](int64_t k, int64_t n) {
    std::vector<float> v(static_cast<size_t>(k * n));
    for (float& x : v) x = dist(rng);
    return testing::tensor_of<float>(v, {k, n});
  };
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.graph.initializers.push_back({"w1", weights(128, 64)});
  m.graph.initializers.push_back({"w2", weights(64, 10)});
  Node a;
  a.name = "fc1";
  a.op_type = "MatMul";
  a.inputs = {"x", "w1"};
  a.outputs = {"h"};
  Node r;
  r.name = "relu";
  r.op_type = "Relu";
  r.inputs = {"h"};
  r.outputs = {"hr"};
  Node b;
  b.name = "fc2";
  b.op_type = "MatMul";
  b.inputs = {"hr", "w2"};
  b.outputs = {"y"};
  m.graph.nodes = {a, r, b};
  m.graph.inputs.push_back(float_info("x", {2, 128}));
  m.graph.outputs.push_back(float_info("y", {2, 10}));
  return m;
}

int64_t file_size(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

TEST(QuantizeConvert, Int4FileShrinksVerifiesAndReports) {
  TempDir dir;
  ASSERT_TRUE(write_model(mlp(), dir.file("in.onnx"), WriteOptions()).is_ok());
  for (const char* mode : {"int4", "int8", "fp16"}) {
    ConvertRequest req;
    req.input_path = dir.file("in.onnx");
    req.output_path = dir.file(std::string(mode) + ".onnx");
    auto parsed = parse_quantize_mode(mode);
    ASSERT_TRUE(parsed.is_ok());
    req.quantize.mode = *parsed;
    req.make_inputs = [](const std::vector<ValueInfo>& inputs) -> Result<NamedValues> {
      EXPECT_EQ(inputs.size(), 1u);
      std::vector<float> x(256);
      for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 19) / 19.0f - 0.5f;
      return NamedValues{{"x", testing::tv<float>(x, {2, 128})}};
    };
    auto r = convert_file(req);
    ASSERT_TRUE(r.is_ok()) << mode << ": " << r.status().to_string();
    EXPECT_EQ(r->quantization.quantized.size(), 2u) << mode;
    EXPECT_FALSE(r->verified);
    ASSERT_TRUE(r->quant_verified);
    ASSERT_EQ(r->quant_verification.outputs.size(), 1u);
    EXPECT_GT(r->quant_verification.outputs[0].cosine, 0.98) << mode;
    EXPECT_TRUE(r->quant_verification.ok());
    // No activation is rounded by a Q/DQ pair in these modes: there is no weights-alone variant.
    EXPECT_EQ(r->quant_verification.outputs[0].weights_alone_cosine, -1.0) << mode;
    EXPECT_LT(file_size(req.output_path), file_size(req.input_path) * (*parsed == QuantizeMode::kFp16 ? 6 : 4) / 10)
        << mode;
    const std::string report = make_report(*r);
    EXPECT_NE(report.find(std::string("## Quantization (") + mode + ")"), std::string::npos) << report;
    EXPECT_NE(report.find("## Verification (quantized vs original)"), std::string::npos);
  }
}

TEST(QuantizeConvert, BadOptionsWriteNothing) {
  TempDir dir;
  ASSERT_TRUE(write_model(mlp(), dir.file("in.onnx"), WriteOptions()).is_ok());
  ConvertRequest req;
  req.input_path = dir.file("in.onnx");
  req.output_path = dir.file("out.onnx");
  req.quantize.mode = QuantizeMode::kInt4;
  req.quantize.block_size = 33;
  auto r = convert_file(req);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("block size 33"), std::string::npos);
  EXPECT_EQ(file_size(req.output_path), -1);
}

}  // namespace
}  // namespace convert
}  // namespace xonnx
