// CTC greedy decoding of a text recogniser's per-step class probabilities, with PaddleOCR's
// label layout: class 0 is the CTC blank, class i (1..N) is line i of the dictionary file,
// and class N + 1 is the space character PaddleOCR appends (use_space_char).
#pragma once

#include <string>
#include <vector>

#include "sdk/examples/common/status.h"

namespace demo {

class CtcLabels {
 public:
  // One UTF-8 token per line (line ends "\n" or "\r\n"); the blank and the space are added.
  Status load(const std::string& dictionary_path);
  size_t class_count() const { return labels_.size(); }
  const std::string& label(size_t class_index) const { return labels_[class_index]; }

 private:
  std::vector<std::string> labels_;
};

struct CtcText {
  std::string text;
  float score = 0;  // mean probability of the kept steps (0 when nothing is kept)
};

// `probs` holds `steps` rows of `classes` probabilities; classes must equal
// labels.class_count(). Takes each step's most likely class, merges repeats, drops blanks.
CtcText ctc_greedy_decode(const float* probs, int steps, int classes, const CtcLabels& labels);

}  // namespace demo
