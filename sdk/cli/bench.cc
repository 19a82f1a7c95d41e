// `xonnx bench MODEL`: latency and memory of a model, like TFLite's benchmark_model.
// Session creation, one first run, warmup runs, then timed runs (a count, or a time budget):
// median, mean, standard deviation, min, max, p90/p95/p99, runs per second, peak RSS;
// --profile adds per-node, per-op-type and per-backend times of the timed runs, and every
// fallback per node: faster kernels that declined it at session creation (with their reasons)
// and timed runs a fast kernel handed to the reference kernel (uncovered input, non-finite
// result).
#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "runtime/exec/session.h"
#include "sdk/cli/commands.h"
#include "sdk/cli/inputs.h"
#include "sdk/cli/optimize.h"
#include "sdk/cli/limit_flags.h"

namespace xonnx {
namespace cli {

namespace {

struct BenchOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  int threads = 1;
  int warmup = 5;
  int iters = 50;
  bool iters_given = false;
  double duration_s = 0;  // > 0: timed runs until this many seconds have passed
  uint32_t seed = 0;
  bool json = false;
  bool profile = false;
  int top = 20;  // --profile: nodes listed in the per-node table (0: all)
  passes::OptLevel optimize = passes::OptLevel::kAll;
  std::vector<OutputRange> output_ranges;
  LimitFlags limits;
};

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double peak_rss_mb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
#ifdef __APPLE__
  return ru.ru_maxrss / (1024.0 * 1024.0);  // bytes
#else
  return ru.ru_maxrss / 1024.0;  // KiB
#endif
}

struct Stats {
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0, p90 = 0, p95 = 0, p99 = 0;
};

// Percentiles by nearest rank (ceil(p n)-th smallest); stddev of the sample (n - 1).
Stats summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  const size_t n = ms.size();
  auto rank = [&](double p) { return ms[std::max<size_t>(1, static_cast<size_t>(std::ceil(p * n))) - 1]; };
  Stats s;
  s.min = ms.front();
  s.max = ms.back();
  s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  s.p90 = rank(0.90);
  s.p95 = rank(0.95);
  s.p99 = rank(0.99);
  for (double v : ms) s.mean += v / n;
  double squares = 0;
  for (double v : ms) squares += (v - s.mean) * (v - s.mean);
  s.stddev = n > 1 ? std::sqrt(squares / (n - 1)) : 0;
  return s;
}

// A time in ms as text: microseconds (one decimal) below a millisecond, else ms with three.
std::string time_text(double ms) {
  char buf[32];
  if (ms < 1)
    std::snprintf(buf, sizeof buf, "%.1f us", ms * 1000);
  else
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct Total {
  double us = 0;
  int64_t calls = 0;
  std::string op;
  Backend backend = Backend::kReference;
};

template <typename Map>
std::vector<typename Map::const_iterator> by_time(const Map& m) {
  std::vector<typename Map::const_iterator> v;
  for (auto it = m.begin(); it != m.end(); ++it) v.push_back(it);
  std::stable_sort(v.begin(), v.end(), [](auto a, auto b) { return a->second.us > b->second.us; });
  return v;
}

// A node some faster kernel did not run: declined at creation, or runs handed to the reference.
struct Fallback {
  std::string op;
  Backend backend = Backend::kReference;           // the kernel that took the node
  std::string declined;                            // "backend: reason; ..." at session creation
  int64_t runs = 0, uncovered = 0, nonfinite = 0;  // over the timed runs
};

// Self times (a Loop/If/Scan node's own time excludes its body's nodes, listed separately
// under "Loop_name > ..."), summed over the timed runs.
struct ProfileSummary {
  std::map<std::string, Total> nodes;         // by node ("scope > node" inside subgraphs)
  std::map<std::string, Total> ops;           // by op type
  std::map<std::string, Total> op_backends;   // by "op type\tbackend"
  std::map<std::string, Total> backends;      // by backend; calls = distinct nodes
  std::map<std::string, Fallback> fallbacks;  // by node, for nodes with any fallback
  double all_us = 0;
};

ProfileSummary summarize_profile(const Profiler& profiler) {
  ProfileSummary s;
  for (const Profiler::Entry& e : profiler.entries()) {
    const std::string key = e.scope.empty() ? e.node : e.scope + " > " + e.node;
    Total& n = s.nodes[key];
    n.us += e.self_us;
    n.calls += 1;
    n.op = e.op_type;
    n.backend = e.backend;
    for (Total* t : {&s.ops[e.op_type], &s.op_backends[e.op_type + "\t" + backend_name(e.backend)]}) {
      t->us += e.self_us;
      t->calls += 1;
      t->op = e.op_type;
      t->backend = e.backend;
    }
    s.backends[backend_name(e.backend)].us += e.self_us;
    s.all_us += e.self_us;
    if (!e.declined.empty() || e.uncovered || e.nonfinite) {
      Fallback& f = s.fallbacks[key];
      f.op = e.op_type;
      f.backend = e.backend;
      f.declined = e.declined;
      f.uncovered += e.uncovered;
      f.nonfinite += e.nonfinite;
    }
  }
  for (auto& [key, f] : s.fallbacks) f.runs = s.nodes[key].calls;
  for (const auto& [key, n] : s.nodes) s.backends[backend_name(n.backend)].calls += 1;
  if (s.all_us <= 0) s.all_us = 1;
  return s;
}

void print_profile(const ProfileSummary& s, int iters, int top) {
  // Times per run, in ms (or us for models that run in under a millisecond).
  const bool in_us = s.all_us / iters < 1000;
  const char* unit = in_us ? "us" : "ms";
  const double per_run = (in_us ? 1.0 : 1e-3) / iters;

  const size_t shown = top > 0 ? std::min<size_t>(s.nodes.size(), static_cast<size_t>(top)) : s.nodes.size();
  std::printf("\nTop %zu of %zu nodes by self time (%s per run):\n", shown, s.nodes.size(), unit);
  std::printf("%10s %7s %7s  %-10s %-20s %s\n", unit, "%", "calls", "backend", "op", "node");
  auto sorted_nodes = by_time(s.nodes);
  for (size_t i = 0; i < shown; ++i) {
    const auto& [key, n] = *sorted_nodes[i];
    std::printf("%10.3f %6.1f%% %7.4g  %-10s %-20s %s\n", n.us * per_run, 100 * n.us / s.all_us,
                static_cast<double>(n.calls) / iters, backend_name(n.backend), n.op.c_str(), key.c_str());
  }
  std::printf("\nOp types (%s per run):\n", unit);
  std::printf("%10s %7s %7s  %s\n", unit, "%", "calls", "op");
  for (auto it : by_time(s.ops)) {
    std::printf("%10.3f %6.1f%% %7.4g  %s\n", it->second.us * per_run, 100 * it->second.us / s.all_us,
                static_cast<double>(it->second.calls) / iters, it->first.c_str());
  }
  std::printf("\nBackends (%s per run):\n", unit);
  std::printf("%10s %7s %7s  %s\n", unit, "%", "nodes", "backend");
  for (auto it : by_time(s.backends)) {
    std::printf("%10.3f %6.1f%% %7lld  %s\n", it->second.us * per_run, 100 * it->second.us / s.all_us,
                static_cast<long long>(it->second.calls), it->first.c_str());
  }
  std::printf("(profiled: the times above include the profiler's small per-node overhead)\n");
  if (s.fallbacks.empty()) {
    std::printf("\nFallbacks: none (every node ran on its first candidate kernel, on every run)\n");
    return;
  }
  std::printf(
      "\nFallbacks (%zu nodes): kernels that declined the node at session creation; timed runs\n"
      "handed to the reference kernel for an input the fast kernel does not cover (uncovered) or\n"
      "a result that was not finite (nonfinite):\n",
      s.fallbacks.size());
  std::printf("%-10s %9s %9s  %-20s %s\n", "backend", "uncovered", "nonfinite", "op", "node");
  for (const auto& [key, f] : s.fallbacks) {
    std::printf("%-10s %4lld/%-4lld %4lld/%-4lld  %-20s %s\n", backend_name(f.backend),
                static_cast<long long>(f.uncovered), static_cast<long long>(f.runs),
                static_cast<long long>(f.nonfinite), static_cast<long long>(f.runs), f.op.c_str(), key.c_str());
    if (!f.declined.empty()) std::printf("%10s declined: %s\n", "", f.declined.c_str());
  }
}

// The profile as JSON members: backend_nodes (distinct nodes per backend), backend_ms (per run),
// top_nodes (the 10 slowest nodes), ops (per op type and backend, slowest first) and
// max_reference_node (the slowest node on the reference backend, or null); "share" is the
// fraction of the profiled run time.
void write_profile_json(std::ostringstream& js, const ProfileSummary& s, int iters) {
  const double per_run_ms = 1e-3 / iters;
  auto node_json = [&](const std::string& name, const Total& n) {
    js << "{\"node\":" << json_string(name) << ",\"op\":" << json_string(n.op)
       << ",\"backend\":" << json_string(backend_name(n.backend)) << ",\"ms\":" << n.us * per_run_ms
       << ",\"share\":" << n.us / s.all_us << "}";
  };
  const char* sep = "";
  js << ",\"backend_nodes\":{";
  for (const auto& [name, b] : s.backends) {
    js << sep << json_string(name) << ":" << b.calls;
    sep = ",";
  }
  js << "},\"backend_ms\":{";
  sep = "";
  for (const auto& [name, b] : s.backends) {
    js << sep << json_string(name) << ":" << b.us * per_run_ms;
    sep = ",";
  }
  js << "},\"top_nodes\":[";
  const auto sorted_nodes = by_time(s.nodes);
  for (size_t i = 0; i < std::min<size_t>(sorted_nodes.size(), 10); ++i) {
    js << (i ? "," : "");
    node_json(sorted_nodes[i]->first, sorted_nodes[i]->second);
  }
  js << "],\"ops\":[";
  sep = "";
  for (auto it : by_time(s.op_backends)) {
    const Total& t = it->second;
    js << sep << "{\"op\":" << json_string(t.op) << ",\"backend\":" << json_string(backend_name(t.backend))
       << ",\"ms\":" << t.us * per_run_ms << ",\"share\":" << t.us / s.all_us
       << ",\"calls\":" << static_cast<double>(t.calls) / iters << "}";
    sep = ",";
  }
  js << "],\"fallbacks\":[";
  sep = "";
  for (const auto& [key, f] : s.fallbacks) {
    js << sep << "{\"node\":" << json_string(key) << ",\"op\":" << json_string(f.op)
       << ",\"backend\":" << json_string(backend_name(f.backend)) << ",\"declined\":" << json_string(f.declined)
       << ",\"runs\":" << f.runs << ",\"uncovered_runs\":" << f.uncovered << ",\"nonfinite_runs\":" << f.nonfinite
       << "}";
    sep = ",";
  }
  js << "],\"max_reference_node\":";
  const auto ref = std::find_if(sorted_nodes.begin(), sorted_nodes.end(),
                                [](auto it) { return it->second.backend == Backend::kReference; });
  if (ref == sorted_nodes.end()) {
    js << "null";
  } else {
    node_json((*ref)->first, (*ref)->second);
  }
}

int bench_model(const BenchOptions& opt) {
  SessionOptions so;
  so.num_threads = opt.threads;
  so.optimization = opt.optimize;
  so.output_ranges = opt.output_ranges;
  if (Status s = apply_limit_flags(opt.limits, so); !s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 2;
  }
  const auto t0 = Clock::now();
  auto created = Session::create(opt.model, so);
  const double init_ms = ms_since(t0);
  if (!created.is_ok()) {
    std::fprintf(stderr, "error: %s\n", created.status().to_string().c_str());
    return 1;
  }
  Session& session = **created;
  auto specs = parse_input_specs(session.inputs(), opt.inputs, opt.shapes);
  if (!specs.is_ok()) {
    std::fprintf(stderr, "error: %s\n", specs.status().message().c_str());
    return 2;
  }
  specs->max_bytes = so.load.max_memory_bytes;
  auto made = make_inputs(session.inputs(), *specs, opt.seed);
  if (!made.is_ok()) {
    std::fprintf(stderr, "error: %s\n", made.status().to_string().c_str());
    return 1;
  }
  std::printf("model      %s\nthreads    %d\n", opt.model.c_str(), opt.threads);
  std::vector<Value> inputs;
  for (size_t i = 0; i < made->size(); ++i) {
    const Tensor& t = (*made)[i].tensor;
    std::printf("input      %s %s %s%s\n", session.inputs()[i].name.c_str(), dtype_name(t.dtype()),
                shape_to_string(t.shape()).c_str(), (*made)[i].from_file ? "" : " (random)");
    inputs.push_back(Value(t));
  }
  auto run_once = [&](double& ms) -> bool {
    const auto start = Clock::now();
    auto out = session.run(inputs);
    ms = ms_since(start);
    if (!out.is_ok()) std::fprintf(stderr, "error: %s\n", out.status().to_string().c_str());
    return out.is_ok();
  };
  double first_ms = 0, ms = 0;
  if (!run_once(first_ms)) return 1;
  for (int i = 0; i < opt.warmup; ++i) {
    if (!run_once(ms)) return 1;
  }
  Profiler profiler;
  if (opt.profile) session.set_profiler(&profiler);
  // --iters runs, or with --duration as many as fit in the budget (--iters, when given, caps them).
  const int max_iters = opt.duration_s > 0 && !opt.iters_given ? INT_MAX : opt.iters;
  std::vector<double> times;
  const auto timed_start = Clock::now();
  while (static_cast<int>(times.size()) < max_iters) {
    if (!run_once(ms)) return 1;
    times.push_back(ms);
    if (opt.duration_s > 0 && ms_since(timed_start) >= opt.duration_s * 1000) break;
  }
  const double timed_ms = ms_since(timed_start);
  session.set_profiler(nullptr);
  const int iters = static_cast<int>(times.size());
  const Stats st = summarize(times);
  const double runs_per_s = timed_ms > 0 ? iters * 1000.0 / timed_ms : 0;
  const double rss = peak_rss_mb();

  double graph_ms = 0;  // of init: the optimization passes and the QDQ/NHWC rewrites
  for (const passes::PassStats& p : session.optimization_report().passes) graph_ms += p.ms;
  std::printf("init       %s (session creation; graph passes %s, optimize %s)\n", time_text(init_ms).c_str(),
              time_text(graph_ms).c_str(), passes::opt_level_name(opt.optimize));
  std::printf("first run  %s\n", time_text(first_ms).c_str());
  std::printf("warmup     %d runs\n", opt.warmup);
  std::printf("timed      %d runs in %.3f s: %.1f runs/s\n", iters, timed_ms / 1000, runs_per_s);
  std::printf("latency    median %s, mean %s, stddev %s\n", time_text(st.median).c_str(), time_text(st.mean).c_str(),
              time_text(st.stddev).c_str());
  std::printf("           min %s, p90 %s, p95 %s, p99 %s, max %s\n", time_text(st.min).c_str(),
              time_text(st.p90).c_str(), time_text(st.p95).c_str(), time_text(st.p99).c_str(),
              time_text(st.max).c_str());
  std::printf("peak RSS   %.1f MB\n", rss);
  const ProfileSummary summary = opt.profile ? summarize_profile(profiler) : ProfileSummary{};
  if (opt.profile) {
    print_profile(summary, iters, opt.top);
    print_optimization_report(session.optimization_report(), opt.optimize);
  }
  if (opt.json) {
    std::ostringstream js;
    js.precision(9);
    js << "{\"engine\":\"xonnx\",\"model\":" << json_string(opt.model) << ",\"threads\":" << opt.threads
       << ",\"warmup\":" << opt.warmup << ",\"iters\":" << iters << ",\"init_ms\":" << init_ms
       << ",\"graph_passes_ms\":" << graph_ms << ",\"first_ms\":" << first_ms << ",\"median_ms\":" << st.median
       << ",\"mean_ms\":" << st.mean << ",\"stddev_ms\":" << st.stddev << ",\"min_ms\":" << st.min
       << ",\"max_ms\":" << st.max << ",\"p90_ms\":" << st.p90 << ",\"p95_ms\":" << st.p95 << ",\"p99_ms\":" << st.p99
       << ",\"runs_per_s\":" << runs_per_s << ",\"peak_rss_mb\":" << rss << ",\"optimize\":\""
       << passes::opt_level_name(opt.optimize) << "\"";
    if (opt.profile) write_profile_json(js, summary, iters);
    js << "}";
    std::printf("%s\n", js.str().c_str());
  }
  return 0;
}

}  // namespace

Runner add_bench_command(CLI::App& app) {
  auto opt = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand("bench", "Measure a model's latency and memory");
  sub->add_option("model", opt->model, "Model file (.onnx)")->required();
  sub->add_option("--threads", opt->threads, "Threads (default 1)")->check(CLI::Range(1, 1024));
  sub->add_option("--warmup", opt->warmup, "Untimed runs after the first run (default 5, at least 1)")
      ->check(CLI::Range(1, 1000000));
  CLI::Option* iters = sub->add_option("--iters", opt->iters, "Timed runs (default 50; with --duration, the most)")
                           ->check(CLI::Range(1, 100000000));
  sub->add_option("--duration", opt->duration_s,
                  "Time budget in seconds: timed runs until it is used up (at least one run)")
      ->check(CLI::Range(1e-6, 1e6));
  sub->add_option("--shape", opt->shapes,
                  "NAME=d0,d1,... shape of a random input (fixes symbolic dims; empty = scalar); repeatable");
  sub->add_option("--input,-i", opt->inputs, "NAME=FILE (.npy or TensorProto .pb); repeatable");
  sub->add_option("--seed", opt->seed, "Seed for random inputs (default 0)");
  add_limit_flags(sub, opt->limits);
  sub->add_flag("--json", opt->json, "Print the results as one JSON object on the last line");
  add_optimize_option(sub, &opt->optimize);
  add_output_range_option(sub, &opt->output_ranges);
  sub->add_flag(
      "--profile", opt->profile,
      "Time every node of the timed runs; print per-node, per-op and per-backend tables and every fallback per node");
  sub->add_option("--top", opt->top, "--profile: how many nodes the per-node table lists (default 20, 0: all)")
      ->check(CLI::Range(0, 1000000));
  return [opt, iters] {
    opt->iters_given = iters->count() > 0;
    return bench_model(*opt);
  };
}

}  // namespace cli
}  // namespace xonnx
