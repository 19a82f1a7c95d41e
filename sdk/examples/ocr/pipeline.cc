#include "sdk/examples/ocr/pipeline.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sdk/examples/ocr/crop.h"
#include "sdk/examples/ocr/preprocess.h"

namespace demo {
namespace {

constexpr int kLineHeight = 48;    // classifier and recogniser input height
constexpr int kClsWidth = 192;     // classifier input width
constexpr int kRecMinWidth = 320;  // recogniser input width for lines up to 320/48 wide

using xonnx::api::Input;
using xonnx::api::Tensor;

Status expect_output(const Tensor& t, const ModelRunner& model, const std::vector<int64_t>& dims) {
  const std::vector<int64_t> shape = t.shape();
  bool ok = t.type() == XONNX_TYPE_FLOAT32 && shape.size() == dims.size();
  for (size_t d = 0; ok && d < dims.size(); ++d) ok = dims[d] < 0 || shape[d] == dims[d];
  if (ok) return Status();
  return Status::error("'" + model.path() + "' returned " + describe_type(t.type(), shape) + ", expected " +
                       describe_type(XONNX_TYPE_FLOAT32, dims));
}

int ceil_width(const Image& line) {
  return static_cast<int>(std::ceil(kLineHeight * static_cast<float>(line.width) / line.height));
}

// PaddleOCR's sorted_boxes: by top-left y then x; boxes whose tops differ by less than 10
// pixels count as one row and go left to right.
void reading_order(std::vector<Quad>* boxes) {
  std::stable_sort(boxes->begin(), boxes->end(), [](const Quad& a, const Quad& b) {
    return a[0].y < b[0].y || (a[0].y == b[0].y && a[0].x < b[0].x);
  });
  for (size_t i = 0; i + 1 < boxes->size(); ++i) {
    for (size_t j = i + 1; j > 0; --j) {
      Quad& prev = (*boxes)[j - 1];
      Quad& cur = (*boxes)[j];
      if (std::fabs(cur[0].y - prev[0].y) < 10 && cur[0].x < prev[0].x) {
        std::swap(prev, cur);
      } else {
        break;
      }
    }
  }
}

}  // namespace

Status OcrPipeline::open(const OcrModels& models, const OcrOptions& options, InputRecorder* recorder) {
  options_ = options;
  if (options.batch < 1) return Status::error("batch must be at least 1");
  Status s = labels_.load(models.dictionary);
  if (s.ok()) s = det_.open(models.detector, "text detector", options.threads, recorder);
  if (s.ok()) s = det_.expect_input(0, XONNX_TYPE_FLOAT32, {-1, 3, -1, -1});
  if (s.ok()) s = det_.expect_output(0, XONNX_TYPE_FLOAT32, {-1, 1, -1, -1});
  if (s.ok() && options.classify) {
    s = cls_.open(models.classifier, "angle classifier", options.threads, recorder);
    if (s.ok()) s = cls_.expect_input(0, XONNX_TYPE_FLOAT32, {-1, 3, kLineHeight, kClsWidth});
    if (s.ok()) s = cls_.expect_output(0, XONNX_TYPE_FLOAT32, {-1, 2});
  }
  if (s.ok()) s = rec_.open(models.recognizer, "text recognizer", options.threads, recorder);
  if (s.ok()) s = rec_.expect_input(0, XONNX_TYPE_FLOAT32, {-1, 3, kLineHeight, -1});
  if (s.ok()) s = rec_.expect_output(0, XONNX_TYPE_FLOAT32, {-1, -1, static_cast<int64_t>(labels_.class_count())});
  return s;
}

Status OcrPipeline::detect(const Image& page, std::vector<Quad>* boxes) {
  // PaddleOCR's DetResizeForTest (limit_type "max"): at most det_max_side, multiples of 32.
  const int long_side = std::max(page.width, page.height);
  const float ratio = long_side > options_.det_max_side ? static_cast<float>(options_.det_max_side) / long_side : 1.0f;
  const int w = std::max(32, static_cast<int>(std::lround(page.width * ratio / 32)) * 32);
  const int h = std::max(32, static_cast<int>(std::lround(page.height * ratio / 32)) * 32);
  Image scaled;
  if (w != page.width || h != page.height) scaled = resize_bilinear(page, w, h);
  buffer_.assign(static_cast<size_t>(3) * h * w, 0.0f);
  write_bgr_planes(scaled.empty() ? page : scaled, kDetNormalization, buffer_.data(), w);
  std::vector<Tensor> out;
  Status s = det_.run({Input::of("", XONNX_TYPE_FLOAT32, {1, 3, h, w}, buffer_)}, &out);
  if (s.ok()) s = expect_output(out[0], det_, {1, 1, h, w});
  if (!s.ok()) return s;
  boxes->clear();
  for (const TextBox& box : db_boxes(out[0].data<float>(), w, h, page.width, page.height, options_.db)) {
    // PaddleOCR's filter_tag_det_res: inside the page, at least 4 pixels each way.
    Quad q = box.corners;
    for (PointF& p : q) {
      p.x = std::clamp(p.x, 0.0f, static_cast<float>(page.width - 1));
      p.y = std::clamp(p.y, 0.0f, static_cast<float>(page.height - 1));
    }
    if (static_cast<int>(distance(q[0], q[1])) <= 3 || static_cast<int>(distance(q[0], q[3])) <= 3) continue;
    boxes->push_back(q);
  }
  reading_order(boxes);
  return Status();
}

Status OcrPipeline::classify(std::vector<Image>* crops, std::vector<bool>* turned) {
  turned->assign(crops->size(), false);
  const size_t item = static_cast<size_t>(3) * kLineHeight * kClsWidth;
  for (size_t first = 0; first < crops->size(); first += options_.batch) {
    const size_t n = std::min(crops->size() - first, static_cast<size_t>(options_.batch));
    buffer_.assign(n * item, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      const Image& line = (*crops)[first + i];
      const Image resized = resize_bilinear(line, std::min(kClsWidth, ceil_width(line)), kLineHeight);
      write_bgr_planes(resized, kRecNormalization, buffer_.data() + i * item, kClsWidth);
    }
    std::vector<Tensor> out;
    Status s = cls_.run(
        {Input::of("", XONNX_TYPE_FLOAT32, {static_cast<int64_t>(n), 3, kLineHeight, kClsWidth}, buffer_)}, &out);
    if (s.ok()) s = expect_output(out[0], cls_, {static_cast<int64_t>(n), 2});
    if (!s.ok()) return s;
    const float* p = out[0].data<float>();
    for (size_t i = 0; i < n; ++i) {
      if (p[2 * i + 1] > p[2 * i] && p[2 * i + 1] >= options_.cls_threshold) {
        (*turned)[first + i] = true;
        (*crops)[first + i] = rotate_180((*crops)[first + i]);
      }
    }
  }
  return Status();
}

Status OcrPipeline::recognize(const std::vector<Image>& crops, std::vector<CtcText>* texts) {
  texts->assign(crops.size(), {});
  // Lines in order of width, as PaddleOCR batches them: a batch is padded to its widest line.
  std::vector<size_t> order(crops.size());
  std::iota(order.begin(), order.end(), 0);
  auto ratio = [&](size_t i) { return static_cast<float>(crops[i].width) / crops[i].height; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ratio(a) < ratio(b); });
  for (size_t first = 0; first < order.size(); first += options_.batch) {
    const size_t n = std::min(order.size() - first, static_cast<size_t>(options_.batch));
    float max_ratio = static_cast<float>(kRecMinWidth) / kLineHeight;
    for (size_t i = 0; i < n; ++i) max_ratio = std::max(max_ratio, ratio(order[first + i]));
    const int width = static_cast<int>(kLineHeight * max_ratio);
    const size_t item = static_cast<size_t>(3) * kLineHeight * width;
    buffer_.assign(n * item, 0.0f);
    for (size_t i = 0; i < n; ++i) {
      const Image& line = crops[order[first + i]];
      const Image resized = resize_bilinear(line, std::min(width, ceil_width(line)), kLineHeight);
      write_bgr_planes(resized, kRecNormalization, buffer_.data() + i * item, width);
    }
    std::vector<Tensor> out;
    const int64_t classes = static_cast<int64_t>(labels_.class_count());
    Status s =
        rec_.run({Input::of("", XONNX_TYPE_FLOAT32, {static_cast<int64_t>(n), 3, kLineHeight, width}, buffer_)}, &out);
    if (s.ok()) s = expect_output(out[0], rec_, {static_cast<int64_t>(n), -1, classes});
    if (!s.ok()) return s;
    const int steps = static_cast<int>(out[0].shape()[1]);
    for (size_t i = 0; i < n; ++i) {
      (*texts)[order[first + i]] =
          ctc_greedy_decode(out[0].data<float>() + i * steps * classes, steps, static_cast<int>(classes), labels_);
    }
  }
  return Status();
}

Status OcrPipeline::run(const Image& page, std::vector<OcrLine>* lines) {
  lines->clear();
  if (page.empty() || page.channels != 3) return Status::error("the page must be a non-empty RGB image");
  std::vector<Quad> boxes;
  Status s = detect(page, &boxes);
  if (!s.ok()) return s;
  std::vector<Image> crops;
  for (const Quad& q : boxes) crops.push_back(crop_quad(page, q));
  std::vector<bool> turned(crops.size(), false);
  if (options_.classify && !crops.empty()) s = classify(&crops, &turned);
  std::vector<CtcText> texts;
  if (s.ok() && !crops.empty()) s = recognize(crops, &texts);
  if (!s.ok()) return s;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (texts[i].score < options_.drop_score) continue;
    lines->push_back({boxes[i], texts[i].text, texts[i].score, turned[i]});
  }
  return Status();
}

}  // namespace demo
