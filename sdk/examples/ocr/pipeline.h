// PP-OCR end to end on one page: text detection (DB), angle classification, recognition (CTC),
// with PaddleOCR's pre- and post-processing (PaddleOCR's tools/infer/predict_system.py is the
// reference) on three ONNX models run by xonnx.
#pragma once

#include <string>
#include <vector>

#include "sdk/examples/common/image.h"
#include "sdk/examples/common/model_runner.h"
#include "sdk/examples/ocr/ctc.h"
#include "sdk/examples/ocr/db_postprocess.h"

namespace demo {

struct OcrModels {
  std::string detector;    // DB text detector: x float32[N,3,H,W] -> float32[N,1,H,W]
  std::string classifier;  // angle classifier: x float32[N,3,48,192] -> float32[N,2] (0 / 180 degrees)
  std::string recognizer;  // CRNN/SVTR: x float32[N,3,48,W] -> float32[N,T,classes]
  std::string dictionary;  // the recogniser's labels, one per line
};

struct OcrOptions {
  int threads = 1;
  DbParams db;
  int det_max_side = 960;      // pages larger than this are scaled down for the detector
  bool classify = true;        // run the angle classifier
  float cls_threshold = 0.9f;  // turn a line when "180 degrees" is at least this likely
  int batch = 6;               // lines per classifier / recogniser run
  float drop_score = 0.5f;     // lines recognised with a lower mean probability are dropped
};

struct OcrLine {
  Quad box;  // in page pixels
  std::string text;
  float score = 0;      // mean probability of the recognised characters
  bool turned = false;  // the classifier found the line upside down
};

class OcrPipeline {
 public:
  // Loads and checks the models; `recorder` (may be null) records every model run's inputs.
  Status open(const OcrModels& models, const OcrOptions& options, InputRecorder* recorder = nullptr);
  // The page's text lines in reading order (top to bottom, left to right).
  Status run(const Image& page, std::vector<OcrLine>* lines);

  const ModelRunner& detector() const { return det_; }
  const ModelRunner& classifier() const { return cls_; }
  const ModelRunner& recognizer() const { return rec_; }
  void reset_stats() {
    det_.reset_stats();
    cls_.reset_stats();
    rec_.reset_stats();
  }

 private:
  Status detect(const Image& page, std::vector<Quad>* boxes);
  Status classify(std::vector<Image>* crops, std::vector<bool>* turned);
  Status recognize(const std::vector<Image>& crops, std::vector<CtcText>* texts);

  OcrOptions options_;
  CtcLabels labels_;
  ModelRunner det_, cls_, rec_;
  std::vector<float> buffer_;  // model input, reused across runs
};

}  // namespace demo
