// The real-data check: int8 static quantization of a CNN trained on scikit-learn's
// digits (tests/models/digits_cnn) must not lose more than 1 point of held-out top-1 accuracy.
// Calibration uses the first 32 held-out images; accuracy is measured on the other 418.
#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <vector>

#include "converter/quantize/quantize.h"
#include "runtime/exec/session.h"
#include "runtime/onnx/loader.h"
#include "sdk/cli/npy.h"

namespace xonnx {
namespace {

const std::string kDir = std::string(XONNX_TEST_MODELS_DIR) + "/digits_cnn";
constexpr int64_t kCalibration = 32;

Tensor rows(const Tensor& x, int64_t begin, int64_t end) {
  Shape shape = x.shape();
  shape[0] = end - begin;
  const int64_t row = x.numel() / x.dim(0);
  Tensor t = Tensor::allocate(DataType::kFloat, shape).value();
  std::copy(x.data<float>() + begin * row, x.data<float>() + end * row, t.data<float>());
  return t;
}

double top1_accuracy(Model model, const Tensor& images, const Tensor& labels) {
  auto session = Session::create_from_model(std::move(model));
  EXPECT_TRUE(session.is_ok()) << session.status().message();
  if (!session.is_ok()) return 0;
  auto out = (*session)->run({Value(images)});
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return 0;
  const Tensor& logits = (*out)[0].tensor();
  const int64_t n = logits.dim(0), classes = logits.dim(1);
  int64_t correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* r = logits.data<float>() + i * classes;
    const int64_t best = std::max_element(r, r + classes) - r;
    correct += best == labels.get_as_int64(kCalibration + i);
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(n);
}

TEST(QuantizeDigits, Int8StaticKeepsHeldOutAccuracyWithinOnePoint) {
  auto x = cli::read_npy(kDir + "/heldout_x.npy");
  auto y = cli::read_npy(kDir + "/heldout_y.npy");
  ASSERT_TRUE(x.is_ok() && y.is_ok());
  ASSERT_EQ(x->dtype(), DataType::kFloat);
  const int64_t n = x->dim(0);
  ASSERT_GT(n, kCalibration + 100);
  const Tensor test_images = rows(*x, kCalibration, n);

  auto float_model = load_model(kDir + "/model.onnx");
  ASSERT_TRUE(float_model.is_ok()) << float_model.status().message();
  Model quantized = *float_model;
  convert::QuantizeOptions options;
  options.mode = convert::QuantizeMode::kInt8;
  for (int64_t i = 0; i < kCalibration; ++i) options.calibration.push_back({{"input", Value(rows(*x, i, i + 1))}});
  auto result = convert::quantize_model(quantized, options);
  ASSERT_TRUE(result.is_ok()) << result.status().message();

  int dequantize_nodes = 0;
  for (const Node& node : quantized.graph.nodes) dequantize_nodes += node.op_type == "DequantizeLinear";
  EXPECT_GT(dequantize_nodes, 0) << "nothing was quantized";

  const double float_acc = top1_accuracy(std::move(float_model).value(), test_images, *y);
  const double int8_acc = top1_accuracy(std::move(quantized), test_images, *y);
  EXPECT_GT(float_acc, 95.0);
  EXPECT_GE(int8_acc, float_acc - 1.0) << "float " << float_acc << "%, int8 " << int8_acc << "%";
}

}  // namespace
}  // namespace xonnx
