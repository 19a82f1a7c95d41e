#include "sdk/examples/ocr/ctc.h"

#include <fstream>
#include <iterator>

namespace demo {

Status CtcLabels::load(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::error("cannot open the dictionary '" + path + "'");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  labels_.assign(1, "");  // the CTC blank
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels_.push_back(line);
    start = end + 1;
  }
  if (labels_.size() == 1) return Status::error("the dictionary '" + path + "' is empty");
  labels_.push_back(" ");
  return Status();
}

CtcText ctc_greedy_decode(const float* probs, int steps, int classes, const CtcLabels& labels) {
  CtcText out;
  if (classes <= 0 || static_cast<size_t>(classes) != labels.class_count()) return out;
  double score_sum = 0;
  int kept = 0, previous = -1;
  for (int t = 0; t < steps; ++t) {
    const float* row = probs + static_cast<size_t>(t) * classes;
    int best = 0;
    for (int c = 1; c < classes; ++c) {
      if (row[c] > row[best]) best = c;
    }
    if (best != 0 && best != previous) {
      out.text += labels.label(best);
      score_sum += row[best];
      ++kept;
    }
    previous = best;
  }
  out.score = kept ? static_cast<float>(score_sum / kept) : 0.0f;
  return out;
}

}  // namespace demo
