// xonnx-vad: speech segments in a WAV file with silero VAD v5 on xonnx. Reads any sample
// rate and channel count (mixed to mono, resampled to 16 kHz; 8 kHz and below to the model's
// 8 kHz mode), prints one "start-end" line in
// seconds per segment on stdout; timing and, with --truth, the boundary errors on stderr;
// writes the waveform with the segments drawn.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "sdk/examples/common/timing.h"
#include "sdk/examples/vad/plot.h"
#include "sdk/examples/vad/resample.h"
#include "sdk/examples/vad/segmenter.h"
#include "sdk/examples/vad/silero.h"
#include "sdk/examples/vad/wav.h"

namespace {

using demo::SileroVad;
using demo::Status;

int fail(const Status& s) {
  std::fprintf(stderr, "xonnx-vad: error: %s\n", s.message().c_str());
  return 1;
}

// "start-end" seconds per line.
Status read_truth(const std::string& path, int rate, std::vector<demo::Segment>* out) {
  std::ifstream f(path);
  if (!f) return Status::error("cannot open '" + path + "'");
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    if (line.empty()) continue;
    double a = 0, b = 0;
    char dash = 0;
    std::istringstream in(line);
    if (!(in >> a >> dash >> b) || dash != '-' || b < a) {
      return Status::error(path + ":" + std::to_string(n) + ": expected 'start-end' in seconds, got '" + line + "'");
    }
    out->push_back({std::llround(a * rate), std::llround(b * rate)});
  }
  return Status();
}

struct Pass {
  std::vector<float> probabilities;
  std::vector<demo::Segment> segments;
  double resample_s = 0;
  double total_s = 0;
};

// Resampling, the model over every frame, the segmenter: what a device does with a recording.
Status run_pass(const std::vector<float>& mono, int rate, SileroVad* vad, const demo::SegmenterParams& params,
                std::vector<float>* resampled, Pass* pass) {
  const auto start = std::chrono::steady_clock::now();
  Status s = demo::resample(mono, rate, vad->sample_rate(), resampled);
  if (!s.ok()) return s;
  pass->resample_s = demo::seconds_since(start);
  vad->reset();
  const size_t frame_samples = static_cast<size_t>(vad->frame_samples());
  demo::SpeechSegmenter segmenter(params, vad->sample_rate(), vad->frame_samples());
  std::vector<float> frame(frame_samples);
  pass->probabilities.clear();
  for (size_t at = 0; at < resampled->size(); at += frame_samples) {
    const size_t n = std::min(frame_samples, resampled->size() - at);
    std::fill(std::copy_n(resampled->begin() + at, n, frame.begin()), frame.end(), 0.0f);  // the last frame padded
    float p = 0;
    s = vad->process(frame.data(), &p);
    if (!s.ok()) return s;
    pass->probabilities.push_back(p);
    segmenter.push(p);
  }
  pass->segments = segmenter.finish(static_cast<int64_t>(resampled->size()));
  pass->total_s = demo::seconds_since(start);
  return Status();
}

}  // namespace

int main(int argc, char** argv) {
  std::string wav, model, output, truth_path, record_dir, stats_json;
  int threads = 1, repeat = 0;
  demo::SegmenterParams params;
  CLI::App app{"xonnx-vad: find speech in a WAV file (silero VAD v5 on xonnx)"};
  app.add_option("audio", wav, "WAV file: PCM 8/16/24/32-bit or float, any rate and channel count")->required();
  app.add_option("--model", model, "silero_vad_v5.onnx")->required();
  app.add_option("-o,--output", output, "write the waveform with the segments drawn (PPM)");
  app.add_option("--threads", threads, "threads for the model")->check(CLI::Range(1, 256));
  app.add_option("--threshold", params.threshold, "speech probability that starts a segment")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-speech-ms", params.min_speech_ms, "shorter segments are dropped")
      ->check(CLI::Range(0, 3600000));
  app.add_option("--min-silence-ms", params.min_silence_ms, "silence that ends a segment")
      ->check(CLI::Range(0, 3600000));
  app.add_option("--speech-pad-ms", params.speech_pad_ms, "padding added on each side")->check(CLI::Range(0, 3600000));
  app.add_option("--truth", truth_path, "file of true 'start-end' lines: print each boundary's error");
  app.add_option("--repeat", repeat, "run the whole pass this many more times and report the median")
      ->check(CLI::Range(0, 100000));
  app.add_option("--record", record_dir,
                 "write every model input of the first pass to this folder "
                 "(replayed in ONNX Runtime by bench/demo_compare.sh)");
  app.add_option("--stats-json", stats_json, "write the timing as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  demo::Audio audio;
  Status s = demo::read_wav(wav, &audio);
  if (!s.ok()) return fail(s);
  if (audio.frames() == 0) return fail(Status::error("'" + wav + "' holds no samples"));
  const std::vector<float> mono = demo::mix_to_mono(audio);
  demo::InputRecorder recorder;
  if (!record_dir.empty()) {
    s = recorder.open(record_dir);
    if (!s.ok()) return fail(s);
  }
  SileroVad vad;
  s = vad.open(model, SileroVad::rate_for(audio.sample_rate), threads, record_dir.empty() ? nullptr : &recorder);
  if (!s.ok()) return fail(s);

  std::vector<float> resampled;
  Pass first;
  s = run_pass(mono, audio.sample_rate, &vad, params, &resampled, &first);
  if (!s.ok()) return fail(s);
  recorder.stop();
  const double rate = vad.sample_rate();
  for (const demo::Segment& seg : first.segments) std::printf("%.3f-%.3f\n", seg.start / rate, seg.end / rate);
  std::fflush(stdout);

  std::vector<double> total, model_s, resample_s, rest, other;
  for (int r = 0; r < repeat; ++r) {
    vad.reset_stats();
    Pass again;
    s = run_pass(mono, audio.sample_rate, &vad, params, &resampled, &again);
    if (!s.ok()) return fail(s);
    total.push_back(again.total_s);
    model_s.push_back(vad.model().run_seconds());
    resample_s.push_back(again.resample_s);
    rest.push_back(again.total_s - model_s.back() - again.resample_s);
    other.push_back(again.total_s - model_s.back());
  }
  std::fprintf(stderr, "%zu segments; %.1f s of audio, %d Hz, %d channel%s; %zu frames of %d samples at %d Hz\n",
               first.segments.size(), audio.seconds(), audio.sample_rate, audio.channels,
               audio.channels == 1 ? "" : "s", first.probabilities.size(), vad.frame_samples(), vad.sample_rate());
  if (repeat > 0) {
    const double t = demo::median(total), m = demo::median(model_s), rs = demo::median(resample_s);
    std::fprintf(stderr,
                 "real-time factor: %.4f (%.1f ms for %.1f s, median of %d; model %.1f ms = %.3f ms per frame, "
                 "resampling %.1f ms, rest %.1f ms)\n",
                 t / audio.seconds(), t * 1000, audio.seconds(), repeat, m * 1000,
                 m * 1000 / first.probabilities.size(), rs * 1000, demo::median(rest) * 1000);
    if (!stats_json.empty()) {
      std::ofstream f(stats_json);
      f << "{\"engine\":\"xonnx\",\"threads\":" << threads << ",\"repeat\":" << repeat
        << ",\"audio_s\":" << audio.seconds() << ",\"frames\":" << first.probabilities.size()
        << ",\"total_ms\":" << t * 1000 << ",\"models_ms\":" << m * 1000
        << ",\"other_ms\":" << demo::median(other) * 1000 << ",\"rtf\":" << t / audio.seconds() << "}\n";
      if (!f) return fail(Status::error("cannot write '" + stats_json + "'"));
    }
  }

  std::vector<demo::Segment> truth;
  if (!truth_path.empty()) {
    s = read_truth(truth_path, vad.sample_rate(), &truth);
    if (!s.ok()) return fail(s);
    std::fprintf(stderr, "%zu true segments, %zu found\n", truth.size(), first.segments.size());
    for (size_t i = 0; i < std::min(truth.size(), first.segments.size()); ++i) {
      std::fprintf(stderr, "  segment %zu: start %+.0f ms, end %+.0f ms\n", i + 1,
                   (first.segments[i].start - truth[i].start) / rate * 1000,
                   (first.segments[i].end - truth[i].end) / rate * 1000);
    }
  }
  if (!output.empty()) {
    demo::PlotData plot;
    plot.samples = &resampled;
    plot.sample_rate = vad.sample_rate();
    plot.probabilities = &first.probabilities;
    plot.frame_samples = vad.frame_samples();
    plot.threshold = params.threshold;
    plot.detected = &first.segments;
    plot.truth = truth.empty() ? nullptr : &truth;
    s = demo::write_pnm(output, demo::plot_segments(plot));
    if (!s.ok()) return fail(s);
  }
  return 0;
}
