// xonnx-ocr: PP-OCR (detection, angle classification, recognition) on one image with xonnx.
// Prints the recognised lines on stdout, one per line in reading order; timing and, with
// --truth, the character error rate on stderr; writes the page with the boxes drawn.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "sdk/examples/common/draw.h"
#include "sdk/examples/common/timing.h"
#include "sdk/examples/ocr/cer.h"
#include "sdk/examples/ocr/pipeline.h"

namespace {

struct Args {
  std::string image;
  std::string models_dir;
  demo::OcrModels models;
  std::string output;
  std::string truth;
  std::string record_dir;
  std::string stats_json;
  int repeat = 0;
  demo::OcrOptions options;
};

int fail(const demo::Status& s) {
  std::fprintf(stderr, "xonnx-ocr: error: %s\n", s.message().c_str());
  return 1;
}

void draw_boxes(demo::Image* page, const std::vector<demo::OcrLine>& lines) {
  for (const demo::OcrLine& line : lines) {
    const demo::Rgb color = line.turned ? demo::Rgb{220, 40, 40} : demo::Rgb{20, 170, 60};
    demo::draw_polygon(page, {line.box.begin(), line.box.end()}, color, 2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"xonnx-ocr: read the text in an image (PP-OCRv4 on xonnx)"};
  app.add_option("image", a.image, "page as binary PPM/PGM (scripts/demo-ocr.sh converts other formats)")->required();
  app.add_option("--models", a.models_dir,
                 "folder with ch_PP-OCRv4_det_infer.onnx, ch_ppocr_mobile_v2.0_cls_infer.onnx, "
                 "ch_PP-OCRv4_rec_infer.onnx and ppocr_keys_v1.txt");
  app.add_option("--det", a.models.detector, "detector model (default: from --models)");
  app.add_option("--cls", a.models.classifier, "angle classifier model (default: from --models)");
  app.add_option("--rec", a.models.recognizer, "recognizer model (default: from --models)");
  app.add_option("--dict", a.models.dictionary, "recognizer dictionary (default: from --models)");
  app.add_option("-o,--output", a.output, "write the page with the text boxes drawn (PPM)");
  app.add_option("--threads", a.options.threads, "threads per model")->check(CLI::Range(1, 256));
  app.add_flag("!--no-cls", a.options.classify, "skip the angle classifier");
  app.add_option("--batch", a.options.batch, "text lines per classifier / recognizer run")->check(CLI::Range(1, 1024));
  app.add_option("--box-threshold", a.options.db.box_threshold, "minimum mean text probability of a box");
  app.add_option("--unclip-ratio", a.options.db.unclip_ratio, "how far boxes grow around the detected text");
  app.add_option("--truth", a.truth, "text file with the true lines: print the character error rate");
  app.add_option("--repeat", a.repeat, "run the pipeline this many more times and report the median time")
      ->check(CLI::Range(0, 100000));
  app.add_option("--record", a.record_dir,
                 "write every model input of the first pass to this folder "
                 "(replayed in ONNX Runtime by bench/demo_compare.sh)");
  app.add_option("--stats-json", a.stats_json, "write the timing as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  auto from_dir = [&](std::string* path, const char* name) {
    if (path->empty()) *path = (a.models_dir.empty() ? std::string(".") : a.models_dir) + "/" + name;
  };
  from_dir(&a.models.detector, "ch_PP-OCRv4_det_infer.onnx");
  from_dir(&a.models.classifier, "ch_ppocr_mobile_v2.0_cls_infer.onnx");
  from_dir(&a.models.recognizer, "ch_PP-OCRv4_rec_infer.onnx");
  from_dir(&a.models.dictionary, "ppocr_keys_v1.txt");

  demo::Image page;
  demo::Status s = demo::read_pnm(a.image, &page);
  if (!s.ok()) return fail(s);
  demo::InputRecorder recorder;
  if (!a.record_dir.empty()) {
    s = recorder.open(a.record_dir);
    if (!s.ok()) return fail(s);
  }
  demo::OcrPipeline ocr;
  auto start = std::chrono::steady_clock::now();
  s = ocr.open(a.models, a.options, a.record_dir.empty() ? nullptr : &recorder);
  if (!s.ok()) return fail(s);
  const double load_s = demo::seconds_since(start);

  std::vector<demo::OcrLine> lines;
  start = std::chrono::steady_clock::now();
  s = ocr.run(page, &lines);
  if (!s.ok()) return fail(s);
  const double first_s = demo::seconds_since(start);
  recorder.stop();
  for (const demo::OcrLine& line : lines) std::printf("%s\n", line.text.c_str());
  std::fflush(stdout);

  // Steady state: the same page again (the shapes are known by now); the medians of the
  // whole pass and of each model's share.
  std::vector<double> total, det, cls, rec, rest;
  for (int r = 0; r < a.repeat; ++r) {
    ocr.reset_stats();
    std::vector<demo::OcrLine> again;
    start = std::chrono::steady_clock::now();
    s = ocr.run(page, &again);
    if (!s.ok()) return fail(s);
    total.push_back(demo::seconds_since(start));
    det.push_back(ocr.detector().run_seconds());
    cls.push_back(ocr.classifier().run_seconds());
    rec.push_back(ocr.recognizer().run_seconds());
    rest.push_back(total.back() - det.back() - cls.back() - rec.back());
  }
  const double ms = 1000.0;
  std::fprintf(stderr, "%zu lines; %dx%d image; models loaded in %.0f ms; first pass %.1f ms\n", lines.size(),
               page.width, page.height, load_s * ms, first_s * ms);
  if (a.repeat > 0) {
    const double models_ms = (demo::median(total) - demo::median(rest)) * ms;
    std::fprintf(stderr,
                 "time per image: %.1f ms (median of %d; detector %.1f, classifier %.1f, recognizer %.1f, "
                 "pre/post-processing %.1f)\n",
                 demo::median(total) * ms, a.repeat, demo::median(det) * ms, demo::median(cls) * ms,
                 demo::median(rec) * ms, demo::median(rest) * ms);
    if (!a.stats_json.empty()) {
      std::ofstream f(a.stats_json);
      f << "{\"engine\":\"xonnx\",\"threads\":" << a.options.threads << ",\"repeat\":" << a.repeat
        << ",\"per_image_ms\":" << demo::median(total) * ms << ",\"models_ms\":" << models_ms
        << ",\"other_ms\":" << demo::median(rest) * ms << ",\"det_ms\":" << demo::median(det) * ms
        << ",\"cls_ms\":" << demo::median(cls) * ms << ",\"rec_ms\":" << demo::median(rec) * ms
        << ",\"first_ms\":" << first_s * ms << ",\"load_ms\":" << load_s * ms << "}\n";
      if (!f) return fail(demo::Status::error("cannot write '" + a.stats_json + "'"));
    }
  }

  if (!a.truth.empty()) {
    std::ifstream f(a.truth, std::ios::binary);
    if (!f) return fail(demo::Status::error("cannot open '" + a.truth + "'"));
    std::string truth((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    while (!truth.empty() && truth.back() == '\n') truth.pop_back();
    std::string text;
    for (const demo::OcrLine& line : lines) text += (text.empty() ? "" : "\n") + line.text;
    // PP-OCRv4's Chinese recognizer leaves out most spaces between Latin words (ONNX Runtime
    // gives the same text), so the rate without spaces is reported as well.
    auto without_spaces = [](std::string t) {
      t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
      return t;
    };
    const demo::ErrorRate cer = demo::character_error_rate(text, truth);
    const demo::ErrorRate cer_ns = demo::character_error_rate(without_spaces(text), without_spaces(truth));
    std::fprintf(stderr,
                 "character error rate: %.2f%% (%zu edits over %zu characters, line breaks included); "
                 "spaces left out: %.2f%% (%zu edits over %zu)\n",
                 100.0 * cer.rate(), cer.edits, cer.reference_length, 100.0 * cer_ns.rate(), cer_ns.edits,
                 cer_ns.reference_length);
  }
  if (!a.output.empty()) {
    draw_boxes(&page, lines);
    s = demo::write_pnm(a.output, page);
    if (!s.ok()) return fail(s);
  }
  return 0;
}
