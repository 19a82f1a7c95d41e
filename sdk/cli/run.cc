// `xonnx run MODEL`: runs a model once on .npy/.pb inputs (random where not given) and
// writes one .npy per output.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "runtime/exec/session.h"
#include "sdk/cli/commands.h"
#include "sdk/cli/npy.h"

namespace xonnx {
namespace cli {

std::string describe_type(const TypeInfo& t);  // info.cc

namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  std::string output_dir;
  int threads = 1;
  uint32_t seed = 0;
};

std::string safe_file_name(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return s.empty() ? "_" : s;
}

Result<Tensor> read_input_file(const std::string& path) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".pb") == 0) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return not_found("cannot open '", path, "'");
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    return parse_tensor_proto(bytes.data(), bytes.size(), path);
  }
  return read_npy(path);
}

Result<Tensor> random_input(const ValueInfo& info, std::mt19937& rng) {
  const TypeInfo& t = info.type;
  if (t.kind != TypeInfo::Kind::kTensor || !t.has_shape) {
    return invalid_argument("input '", info.name, "' has no fixed shape: give it with --input ", info.name, "=FILE");
  }
  Shape shape;
  for (const Dim& d : t.dims) {
    if (!d.known()) {
      return invalid_argument("input '", info.name, "' has symbolic dimension '", d.param,
                              "': give it with --input ", info.name, "=FILE");
    }
    shape.push_back(d.value);
  }
  XONNX_ASSIGN_OR_RETURN(Tensor x, Tensor::allocate(t.elem_type, shape));
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const int64_t n = x.numel();
  switch (t.elem_type) {
    case DataType::kFloat:
      for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = uni(rng);
      break;
    case DataType::kDouble:
      for (int64_t i = 0; i < n; ++i) x.data<double>()[i] = uni(rng);
      break;
    case DataType::kFloat16:
      for (int64_t i = 0; i < n; ++i) x.data<uint16_t>()[i] = float_to_half(uni(rng));
      break;
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt32:
    case DataType::kInt64:
      break;  // zeros: valid indices / ids for any vocabulary
    default:
      return unsupported("cannot make random data for input '", info.name, "' of type ",
                         dtype_name(t.elem_type));
  }
  return x;
}

int run_model(const RunOptions& opt) {
  SessionOptions so;
  so.num_threads = opt.threads;
  const auto t0 = std::chrono::steady_clock::now();
  auto session = Session::create(opt.model, so);
  const auto t1 = std::chrono::steady_clock::now();
  if (!session.is_ok()) {
    std::fprintf(stderr, "error: %s\n", session.status().to_string().c_str());
    return 1;
  }
  std::map<std::string, std::string> given;
  for (const std::string& spec : opt.inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "error: --input '%s' must be NAME=FILE\n", spec.c_str());
      return 2;
    }
    given[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  for (const auto& entry : given) {
    bool known = false;
    for (const ValueInfo& info : (*session)->inputs()) known = known || info.name == entry.first;
    if (!known) {
      std::fprintf(stderr, "error: the model has no input named '%s'\n", entry.first.c_str());
      return 2;
    }
  }
  std::mt19937 rng(opt.seed);
  std::vector<Value> inputs;
  for (const ValueInfo& info : (*session)->inputs()) {
    auto it = given.find(info.name);
    Result<Tensor> t = it != given.end() ? read_input_file(it->second) : random_input(info, rng);
    if (!t.is_ok()) {
      std::fprintf(stderr, "error: %s\n", t.status().to_string().c_str());
      return 1;
    }
    std::printf("input  %-20s %s %s%s\n", info.name.c_str(), dtype_name(t->dtype()),
                shape_to_string(t->shape()).c_str(), it != given.end() ? "" : " (random)");
    inputs.push_back(Value(std::move(t).value()));
  }
  const auto t2 = std::chrono::steady_clock::now();
  auto outputs = (*session)->run(inputs);
  const auto t3 = std::chrono::steady_clock::now();
  if (!outputs.is_ok()) {
    std::fprintf(stderr, "error: %s\n", outputs.status().to_string().c_str());
    return 1;
  }
  if (!opt.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opt.output_dir, ec);
    if (ec) {
      std::fprintf(stderr, "error: cannot create '%s': %s\n", opt.output_dir.c_str(), ec.message().c_str());
      return 1;
    }
  }
  const auto& infos = (*session)->outputs();
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Value& v = (*outputs)[i];
    if (!v.is_tensor()) {
      std::printf("output %-20s (not a tensor)\n", infos[i].name.c_str());
      continue;
    }
    const Tensor& t = v.tensor();
    std::printf("output %-20s %s %s", infos[i].name.c_str(), dtype_name(t.dtype()),
                shape_to_string(t.shape()).c_str());
    if (t.dtype() != DataType::kString) {
      const int64_t shown = std::min<int64_t>(t.numel(), 6);
      std::printf("  [");
      for (int64_t k = 0; k < shown; ++k) std::printf("%s%.6g", k ? ", " : "", t.get_as_double(k));
      std::printf("%s]", t.numel() > shown ? ", ..." : "");
    }
    std::printf("\n");
    if (!opt.output_dir.empty()) {
      const std::string path = opt.output_dir + "/" + safe_file_name(infos[i].name) + ".npy";
      Status s = write_npy(path, t);
      if (!s.is_ok()) {
        std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
        return 1;
      }
    }
  }
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  std::printf("session %.2f ms, run %.2f ms\n", ms(t0, t1), ms(t2, t3));
  return 0;
}

}  // namespace

Runner add_run_command(CLI::App& app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand("run", "Run a model once and write its outputs as .npy");
  sub->add_option("model", opt->model, "Model file (.onnx)")->required();
  sub->add_option("--input,-i", opt->inputs, "NAME=FILE (.npy or TensorProto .pb); repeatable");
  sub->add_option("--output-dir,-o", opt->output_dir, "Write one .npy per output here");
  sub->add_option("--threads", opt->threads, "Threads (default 1)")->check(CLI::PositiveNumber);
  sub->add_option("--seed", opt->seed, "Seed for random inputs (default 0)");
  return [opt] { return run_model(*opt); };
}

}  // namespace cli
}  // namespace xonnx
