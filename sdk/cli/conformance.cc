// `xonnx conformance DIR`: runs ONNX backend-test style cases
// (DIR/<case>/model.onnx + test_data_set_*/{input,output}_N.pb) and compares outputs.
// Each case runs in a forked child (-j N of them at once), so a crash or a hang in one case fails
// that case only.
#include <sys/wait.h>
#include <unistd.h>
#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "converter/convert.h"
#include "runtime/exec/session.h"
#include "sdk/cli/commands.h"

namespace fs = std::filesystem;

namespace xonnx {
namespace cli {
namespace {

struct Options {
  std::string dir;
  std::string filter;
  std::string json_path;
  std::string manifest;
  std::string write_manifest;
  double rtol = 1e-3;
  double atol = 1e-7;
  int timeout_s = 120;
  int jobs = 1;
  bool verbose = false;
  int convert_level = -1;  // >= 0: round-trip each model through the converter first
};

struct CaseResult {
  std::string name;
  std::string status;  // pass | fail | skip
  std::string reason;
  double ms = 0;
};

// Ops whose outputs are random: their expected values cannot be reproduced.
const std::set<std::string>& random_ops() {
  static const std::set<std::string> ops = {"Bernoulli",     "RandomNormal",      "RandomNormalLike",
                                            "RandomUniform", "RandomUniformLike", "Multinomial"};
  return ops;
}

bool uses_random_op(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (random_ops().count(n.op_type)) return true;
    for (const Attribute& a : n.attributes) {
      if (a.g && uses_random_op(*a.g)) return true;
      for (const auto& sg : a.graphs) {
        if (uses_random_op(*sg)) return true;
      }
    }
  }
  return false;
}

std::string compare_tensor(const Tensor& got, const Tensor& want, const Options& opt) {
  if (got.dtype() != want.dtype()) {
    return std::string("dtype ") + dtype_name(got.dtype()) + " != expected " + dtype_name(want.dtype());
  }
  if (got.shape() != want.shape()) {
    return "shape " + shape_to_string(got.shape()) + " != expected " + shape_to_string(want.shape());
  }
  const int64_t n = want.numel();
  if (want.dtype() == DataType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      if (got.string_data()[i] != want.string_data()[i]) {
        return "element " + std::to_string(i) + ": '" + got.string_data()[i] + "' != expected '" +
               want.string_data()[i] + "'";
      }
    }
    return "";
  }
  const bool is_float = dtype_is_float(want.dtype());
  int64_t bad = 0;
  int64_t first = -1;
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    bool ok;
    if (is_float) {
      const double a = got.get_as_double(i);
      const double b = want.get_as_double(i);
      if (std::isnan(a) || std::isnan(b)) {
        ok = std::isnan(a) && std::isnan(b);
      } else if (std::isinf(a) || std::isinf(b)) {
        ok = a == b;
      } else {
        const double diff = std::fabs(a - b);
        ok = diff <= opt.atol + opt.rtol * std::fabs(b);
        if (!ok) worst = std::max(worst, diff);
      }
    } else {
      ok = got.get_as_int64(i) == want.get_as_int64(i);
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) return "";
  std::ostringstream os;
  os << bad << " of " << n << " elements differ; first at " << first << ": got " << got.get_as_double(first)
     << ", expected " << want.get_as_double(first);
  if (is_float) os << " (max abs diff " << worst << ")";
  return os.str();
}

std::string compare_value(const Value& got, const Value& want, const Options& opt) {
  if (want.is_none() || got.is_none()) {
    return got.is_none() == want.is_none() ? "" : "optional presence differs";
  }
  if (want.is_sequence()) {
    if (!got.is_sequence()) return "expected a sequence";
    const auto& g = got.sequence().items;
    const auto& w = want.sequence().items;
    if (g.size() != w.size()) {
      return "sequence length " + std::to_string(g.size()) + " != expected " + std::to_string(w.size());
    }
    for (size_t i = 0; i < g.size(); ++i) {
      std::string r = compare_tensor(g[i], w[i], opt);
      if (!r.empty()) return "sequence item " + std::to_string(i) + ": " + r;
    }
    return "";
  }
  if (!got.is_tensor()) return "expected a tensor";
  return compare_tensor(got.tensor(), want.tensor(), opt);
}

std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p);
  }
  return files;
}

// Loads the case's model, or with --convert the converter's output for it (kept in memory).
Result<Model> load_case_model(const fs::path& case_dir, const Options& opt) {
  const std::string path = (case_dir / "model.onnx").string();
  if (opt.convert_level < 0) return load_model(path);
  LoadOptions keep_functions;
  keep_functions.inline_functions = false;
  XONNX_ASSIGN_OR_RETURN(Model original, load_model(path, keep_functions));
  convert::ConvertOptions co;
  co.level = opt.convert_level;
  auto bytes = convert::convert_model_to_bytes(std::move(original), co);
  if (!bytes.is_ok()) return bytes.status().with_context("convert --level " + std::to_string(co.level) + ": ");
  auto keep = std::make_shared<std::string>(std::move(bytes).value());
  auto converted = load_model_from_memory(keep->data(), keep->size(), case_dir.string(), {}, keep);
  if (!converted.is_ok()) return converted.status().with_context("loading the converted model: ");
  return converted;
}

// Runs one case in this process. Returns {status, reason}.
std::pair<std::string, std::string> run_case(const fs::path& case_dir, const Options& opt) {
  auto model = load_case_model(case_dir, opt);
  if (!model.is_ok()) return {"fail", model.status().to_string()};
  if (uses_random_op(model->graph)) return {"skip", "random output (non-deterministic op)"};
  auto session = Session::create_from_model(std::move(model).value());
  if (!session.is_ok()) return {"fail", session.status().to_string()};
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(case_dir)) {
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) {
      sets.push_back(e.path());
    }
  }
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {"skip", "no test_data_set_* folders"};
  for (const fs::path& set : sets) {
    const auto in_files = numbered_files(set, "input");
    const auto out_files = numbered_files(set, "output");
    const auto& inputs = (*session)->inputs();
    const auto& outputs = (*session)->outputs();
    if (in_files.size() != inputs.size()) {
      return {"fail", set.filename().string() + ": has " + std::to_string(in_files.size()) +
                          " inputs, the model takes " + std::to_string(inputs.size())};
    }
    std::vector<Value> in_values;
    for (size_t i = 0; i < in_files.size(); ++i) {
      auto v = load_value_file(in_files[i].string(), inputs[i].type);
      if (!v.is_ok()) return {"fail", v.status().to_string()};
      in_values.push_back(std::move(v).value());
    }
    auto got = (*session)->run(in_values);
    if (!got.is_ok()) return {"fail", got.status().to_string()};
    if (out_files.size() != outputs.size()) {
      return {"fail", set.filename().string() + ": has " + std::to_string(out_files.size()) +
                          " outputs, the model gives " + std::to_string(outputs.size())};
    }
    for (size_t i = 0; i < out_files.size(); ++i) {
      auto want = load_value_file(out_files[i].string(), outputs[i].type);
      if (!want.is_ok()) return {"fail", want.status().to_string()};
      std::string diff = compare_value((*got)[i], *want, opt);
      if (!diff.empty()) {
        return {"fail", set.filename().string() + " output '" + outputs[i].name + "': " + diff};
      }
    }
  }
  return {"pass", ""};
}

// A case running in a forked child, which writes "status\treason" into a pipe and exits.
struct Child {
  size_t index = 0;  // into the case list
  pid_t pid = -1;
  int fd = -1;
  std::string message;
  std::chrono::steady_clock::time_point start;
};

CaseResult finish(const fs::path& case_dir, Child& child, bool timed_out, const Options& opt) {
  close(child.fd);
  if (timed_out) kill(child.pid, SIGKILL);
  int wstatus = 0;
  waitpid(child.pid, &wstatus, 0);
  CaseResult r;
  r.name = case_dir.filename().string();
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - child.start).count();
  if (timed_out) {
    r.status = "fail";
    r.reason = "timed out after " + std::to_string(opt.timeout_s) + " s";
  } else if (WIFSIGNALED(wstatus)) {
    r.status = "fail";
    r.reason = std::string("crashed: ") + strsignal(WTERMSIG(wstatus));
  } else {
    const size_t tab = child.message.find('\t');
    r.status = tab == std::string::npos ? "fail" : child.message.substr(0, tab);
    r.reason = tab == std::string::npos ? "no result from the case process" : child.message.substr(tab + 1);
  }
  return r;
}

// Starts a case in a child; false when the pipe or fork failed (the caller runs it in process).
bool start_child(const fs::path& case_dir, size_t index, const Options& opt, Child* child) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    auto [status, reason] = run_case(case_dir, opt);
    std::string msg = status + "\t" + reason;
    const char* p = msg.data();
    size_t left = msg.size();
    while (left > 0) {
      const ssize_t w = write(fds[1], p, left);
      if (w <= 0) break;
      p += w;
      left -= static_cast<size_t>(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  child->index = index;
  child->pid = pid;
  child->fd = fds[0];
  child->message.clear();
  child->start = std::chrono::steady_clock::now();
  return true;
}

// "[ 120/1765] 118 passed, 2 failed": rewritten in place on a terminal, else printed at every
// tenth of the suite, to stderr (stdout keeps the results).
class Progress {
 public:
  explicit Progress(size_t total) : total_(total), tty_(isatty(STDERR_FILENO) != 0) {}
  void update(size_t done, int passed, int failed, int skipped) {
    if (!tty_) {
      if (done * 10 < total_ * next_tenth_ && done != total_) return;
      while (next_tenth_ <= 10 && done * 10 >= total_ * next_tenth_) ++next_tenth_;
    }
    std::fprintf(stderr, "%s[%*zu/%zu] %d passed, %d failed, %d skipped%s", tty_ ? "\r" : "",
                 static_cast<int>(std::to_string(total_).size()), done, total_, passed, failed, skipped,
                 tty_ && done < total_ ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  size_t total_;
  bool tty_;
  size_t next_tenth_ = 1;
};

// Runs every case, up to `opt.jobs` at once, each in its own process with its own deadline.
std::vector<CaseResult> run_cases(const std::vector<fs::path>& cases, const Options& opt) {
  std::vector<CaseResult> results(cases.size());
  std::vector<Child> running;
  size_t next = 0, done = 0;
  int passed = 0, failed = 0, skipped = 0;
  Progress progress(cases.size());
  auto record = [&](size_t index, CaseResult r) {
    if (r.status == "pass")
      ++passed;
    else if (r.status == "skip")
      ++skipped;
    else
      ++failed;
    results[index] = std::move(r);
    progress.update(++done, passed, failed, skipped);
  };
  while (done < cases.size()) {
    while (next < cases.size() && static_cast<int>(running.size()) < opt.jobs) {
      Child child;
      if (start_child(cases[next], next, opt, &child)) {
        running.push_back(child);
      } else {  // no pipe or process left: run it here, unprotected
        auto [status, reason] = run_case(cases[next], opt);
        record(next, CaseResult{cases[next].filename().string(), status, reason, 0});
      }
      ++next;
    }
    if (running.empty()) continue;
    const auto now = std::chrono::steady_clock::now();
    std::vector<pollfd> fds;
    auto wait = std::chrono::milliseconds(1000);
    for (const Child& c : running) {
      fds.push_back({c.fd, POLLIN, 0});
      const auto left = c.start + std::chrono::seconds(opt.timeout_s) - now;
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(left));
    }
    poll(fds.data(), fds.size(), std::max<int>(1, static_cast<int>(wait.count())));
    char buf[4096];
    for (size_t i = running.size(); i-- > 0;) {
      Child& c = running[i];
      bool ended = false, timed_out = false;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        const ssize_t n = read(c.fd, buf, sizeof buf);
        if (n > 0)
          c.message.append(buf, static_cast<size_t>(n));
        else
          ended = true;
      }
      if (!ended && std::chrono::steady_clock::now() >= c.start + std::chrono::seconds(opt.timeout_s)) {
        ended = timed_out = true;
      }
      if (!ended) continue;
      const size_t index = c.index;
      CaseResult r = finish(cases[index], c, timed_out, opt);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      record(index, std::move(r));
    }
  }
  return results;
}

std::set<std::string> read_manifest(const std::string& path) {
  std::set<std::string> names;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    line.erase(std::remove_if(line.begin(), line.end(), ::isspace), line.end());
    if (!line.empty()) names.insert(line);
  }
  return names;
}

int run_conformance(const Options& opt) {
  std::vector<fs::path> cases;
  const fs::path root(opt.dir);
  if (!fs::is_directory(root)) {
    std::fprintf(stderr, "error: '%s' is not a directory\n", opt.dir.c_str());
    return 2;
  }
  if (fs::exists(root / "model.onnx")) {
    cases.push_back(root);
  } else {
    for (const auto& e : fs::directory_iterator(root)) {
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
    }
  }
  std::sort(cases.begin(), cases.end());
  std::regex filter;
  if (!opt.filter.empty()) {
    try {
      filter = std::regex(opt.filter);
    } catch (const std::regex_error& e) {
      std::fprintf(stderr, "error: --filter '%s' is not a valid regex: %s\n", opt.filter.c_str(), e.what());
      return 2;
    }
  }
  std::vector<fs::path> selected;
  for (const fs::path& c : cases) {
    if (opt.filter.empty() || std::regex_search(c.filename().string(), filter)) selected.push_back(c);
  }
  if (selected.empty()) {
    std::fprintf(stderr, "error: no cases found under '%s'%s%s%s (a case is a folder with model.onnx)\n",
                 opt.dir.c_str(), opt.filter.empty() ? "" : " matching --filter '", opt.filter.c_str(),
                 opt.filter.empty() ? "" : "'");
    return 1;
  }
  const std::vector<CaseResult> results = run_cases(selected, opt);
  int passed = 0, failed = 0, skipped = 0;
  for (const CaseResult& r : results) {
    if (r.status == "pass")
      ++passed;
    else if (r.status == "skip")
      ++skipped;
    else
      ++failed;
    if (r.status != "pass" || opt.verbose) {
      std::printf("%-5s %s%s%s\n", r.status == "pass" ? "PASS" : (r.status == "skip" ? "SKIP" : "FAIL"), r.name.c_str(),
                  r.reason.empty() ? "" : ": ", r.reason.c_str());
    }
  }
  int exit_code = failed == 0 ? 0 : 1;
  if (!opt.manifest.empty()) {
    const std::set<std::string> expected = read_manifest(opt.manifest);
    std::set<std::string> seen;
    int regressions = 0, new_passes = 0;
    for (const CaseResult& r : results) {
      seen.insert(r.name);
      if (expected.count(r.name) && r.status != "pass") {
        std::printf("REGRESSION %s: %s\n", r.name.c_str(), r.reason.c_str());
        ++regressions;
      } else if (!expected.count(r.name) && r.status == "pass") {
        ++new_passes;
      }
    }
    for (const std::string& name : expected) {
      if (!seen.count(name) && opt.filter.empty()) {
        std::printf("REGRESSION %s: listed in the manifest but not found\n", name.c_str());
        ++regressions;
      }
    }
    std::printf("manifest: %zu expected passes, %d regressions, %d new passes (add them to %s)\n", expected.size(),
                regressions, new_passes, opt.manifest.c_str());
    exit_code = regressions == 0 ? 0 : 1;
  }
  if (!opt.write_manifest.empty()) {
    std::ofstream out(opt.write_manifest);
    out << "# Cases expected to pass (xonnx conformance --write-manifest). One per line.\n";
    for (const CaseResult& r : results) {
      if (r.status == "pass") out << r.name << "\n";
    }
  }
  if (!opt.json_path.empty()) {
    nlohmann::json j;
    j["cases"] = nlohmann::json::array();
    for (const CaseResult& r : results) {
      j["cases"].push_back({{"name", r.name}, {"status", r.status}, {"reason", r.reason}, {"ms", r.ms}});
    }
    std::ofstream(opt.json_path) << j.dump(1) << "\n";
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
  return exit_code;
}

}  // namespace

Runner add_conformance_command(CLI::App& app) {
  auto opt = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("conformance", "Run ONNX backend-test cases (DIR/<case>/model.onnx + test_data_set_*)");
  sub->add_option("dir", opt->dir, "Suite folder (or one case folder)")->required();
  sub->add_option("--filter", opt->filter, "Only cases whose name matches this regex");
  sub->add_option("--json", opt->json_path, "Write per-case results as JSON");
  sub->add_option("--manifest", opt->manifest, "Expected passes: exit 1 if any listed case does not pass");
  sub->add_option("--write-manifest", opt->write_manifest, "Write the passing cases to FILE");
  sub->add_option("--rtol", opt->rtol, "Relative tolerance for floats (default 1e-3)");
  sub->add_option("--atol", opt->atol, "Absolute tolerance for floats (default 1e-7)");
  sub->add_option("--timeout", opt->timeout_s, "Seconds per case before it fails (default 120)");
  sub->add_option("--jobs,-j", opt->jobs, "Cases run at once, each in its own process (default 1)")
      ->check(CLI::Range(1, 256));
  sub->add_flag("--verbose,-v", opt->verbose, "Also print passing cases");
  sub->add_option("--convert", opt->convert_level,
                  "Run each model through the converter at LEVEL (0, 1, 2) in memory first")
      ->check(CLI::Range(0, 2));
  return [opt] { return run_conformance(*opt); };
}

}  // namespace cli
}  // namespace xonnx
