// `xonnx convert --genai`: TorchScript decoder exports (the trained tiny model and the variants of
// tools/llm/export_variants.py: MHA / GQA / MQA, opsets 14-16, rotate-half / interleaved rotary,
// tables / computed cos-sin, additive / boolean masks, folded or not) become GenAI folders whose
// fused graph (GroupQueryAttention with rotary inside, (Skip)SimplifiedLayerNormalization) gives
// the export's logits with past and present in one max-length buffer; int4 (MatMulNBits,
// accuracy_level 4) stays within the perplexity bound; a block that cannot be fused is an error
// naming the node, with nothing written.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "converter/genai_folder.h"
#include "runtime/ir/graph_edit.h"
#include "converter/report.h"
#include "converter/writer.h"
#include "runtime/exec/session.h"
#include "runtime/onnx/loader.h"

namespace xonnx {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kLlmDir = std::string(XONNX_TEST_MODELS_DIR) + "/../models_llm";

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/xonnx_genai_convert_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

Result<convert::GenaiFolderResult> convert_folder(const std::string& input, const std::string& out, bool int4,
                                                  const std::string& tokenizer_dir = "") {
  convert::GenaiFolderRequest req;
  req.input_path = input;
  req.out_dir = out;
  req.tokenizer_dir = tokenizer_dir;
  if (int4) {  // what the CLI's --genai defaults to
    req.quantize.mode = convert::QuantizeMode::kInt4;
    req.quantize.accuracy_level = 4;
  }
  return convert::convert_genai_folder(req);
}

// Runs a decoder step by step with GenAI's inputs (input_ids, attention_mask of ones over the
// whole context, past_key_values.N.key / .value). Shared: the past K/V are max-length buffers
// also bound as the presents (past_present_share_buffer); else present = past + new is passed
// back as the next past, as a TorchScript export runs.
class DecoderLoop {
 public:
  DecoderLoop(const std::string& model_path, bool shared, int64_t max_length)
      : shared_(shared), max_length_(max_length) {
    SessionOptions o;
    o.num_threads = 1;
    auto s = Session::create(model_path, o);
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    if (s.is_ok()) session_ = std::move(s).value();
  }

  bool ok() const { return session_ != nullptr; }

  Status reset() {
    length_ = 0;
    inputs_.assign(session_->inputs().size(), Value());
    for (size_t i = 0; i < session_->inputs().size(); ++i) {
      const ValueInfo& vi = session_->inputs()[i];
      if (vi.name.rfind("past_key_values.", 0) != 0) continue;
      if (vi.type.dims.size() != 4 || !vi.type.dims[1].known() || !vi.type.dims[3].known()) {
        return invalid_argument("past input '", vi.name, "' is not [B, heads, past, head size]");
      }
      const Shape shape{1, vi.type.dims[1].value, shared_ ? max_length_ : 0, vi.type.dims[3].value};
      XONNX_ASSIGN_OR_RETURN(Tensor buffer, Tensor::allocate(DataType::kFloat, shape));
      if (shared_) XONNX_RETURN_IF_ERROR(session_->bind_output("present." + vi.name.substr(16), buffer));
      inputs_[i] = Value(std::move(buffer));
    }
    return Status::ok();
  }

  // Appends `tokens` after the cached ones; returns the logits [1, S, V].
  Result<Tensor> step(const std::vector<int64_t>& tokens) {
    const int64_t S = static_cast<int64_t>(tokens.size());
    const int64_t total = length_ + S;
    if (total > max_length_) return invalid_argument("the context of ", max_length_, " tokens is full");
    for (size_t i = 0; i < session_->inputs().size(); ++i) {
      const std::string& name = session_->inputs()[i].name;
      if (name == "input_ids") inputs_[i] = Value(Tensor::from_vector<int64_t>(tokens, {1, S}));
      if (name == "attention_mask") {
        inputs_[i] =
            Value(Tensor::from_vector<int64_t>(std::vector<int64_t>(static_cast<size_t>(total), 1), {1, total}));
      }
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<Value> out, session_->run(inputs_));
    if (!shared_) {
      for (size_t i = 0; i < session_->inputs().size(); ++i) {
        const std::string& name = session_->inputs()[i].name;
        if (name.rfind("past_key_values.", 0) != 0) continue;
        const std::string present = "present." + name.substr(16);
        for (size_t k = 0; k < session_->outputs().size(); ++k) {
          if (session_->outputs()[k].name == present) inputs_[i] = out[k];
        }
      }
    }
    length_ = total;
    return out[0].tensor().clone();
  }

 private:
  std::unique_ptr<Session> session_;
  bool shared_;
  int64_t max_length_;
  int64_t length_ = 0;
  std::vector<Value> inputs_;
};

int64_t argmax_last(const Tensor& logits) {
  const int64_t v = logits.dim(2);
  const float* row = logits.data<float>() + (logits.dim(1) - 1) * v;
  return std::max_element(row, row + v) - row;
}

// Sum of -log softmax(logits[i])[ids[i + 1]] over the window.
double window_nll(const Tensor& logits, const std::vector<int64_t>& ids) {
  const int64_t v = logits.dim(2);
  double nll = 0;
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    const float* row = logits.data<float>() + static_cast<int64_t>(i) * v;
    const float mx = *std::max_element(row, row + v);
    double sum = 0;
    for (int64_t j = 0; j < v; ++j) sum += std::exp(static_cast<double>(row[j] - mx));
    nll += std::log(sum) + mx - row[ids[i + 1]];
  }
  return nll;
}

void expect_logits_near(const Tensor& got, const Tensor& want, double atol, double rtol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const float w = want.data<float>()[i];
    ASSERT_NEAR(got.data<float>()[i], w, atol + rtol * std::fabs(w)) << what << " element " << i;
  }
}

// Op counts; a Transpose of a constant (a tied embedding read as the lm_head) counts apart.
std::map<std::string, int> op_counts(const std::string& model_path) {
  std::map<std::string, int> counts;
  auto m = load_model(model_path);
  EXPECT_TRUE(m.is_ok()) << m.status().to_string();
  if (!m.is_ok()) return counts;
  for (const Node& n : m->graph.nodes) {
    const bool of_constant = n.op_type == "Transpose" && m->graph.find_initializer(n.inputs[0]);
    ++counts[of_constant ? "Transpose of a constant" : n.op_type];
  }
  return counts;
}

// The fused form: GroupQueryAttention (rotary inside) in every layer, RMS norms fused, nothing
// of the decomposed attention left.
void expect_fused(const std::string& model_path, int layers) {
  std::map<std::string, int> ops = op_counts(model_path);
  EXPECT_EQ(ops["GroupQueryAttention"], layers);
  EXPECT_EQ(ops["SimplifiedLayerNormalization"], 1);
  EXPECT_EQ(ops["SkipSimplifiedLayerNormalization"], 2 * layers);
  for (const char* gone : {"Softmax", "Concat", "Transpose", "Where", "Pow", "ReduceMean", "Sqrt", "Neg", "Range"}) {
    EXPECT_EQ(ops[gone], 0) << gone << " left in " << model_path;
  }
}

TEST(GenaiConvert, TinyTorchExportFp32MatchesTheExportWithOneSharedBuffer) {
  TempDir tmp;
  const std::string torch_model = kLlmDir + "/tiny/torch/model.onnx";
  auto r = convert_folder(torch_model, tmp / "fp32", false);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_fused(tmp / "fp32/model.onnx", 4);
  const Json config = read_json(tmp / "fp32/genai_config.json");
  EXPECT_EQ(config["model"]["decoder"]["num_key_value_heads"], 2);
  EXPECT_EQ(config["model"]["decoder"]["head_size"], 32);
  EXPECT_EQ(config["model"]["context_length"], 512);
  EXPECT_EQ(config["search"]["past_present_share_buffer"], true);
  EXPECT_TRUE(fs::exists(tmp / "fp32/tokenizer.json"));
  // The report lists every fusion.
  const std::string report = convert::make_report(r->convert) + convert::genai_markdown(r->genai);
  for (const char* fused : {"RotaryEmbedding", "SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization",
                            "GroupQueryAttention", "inside, rotate-half"}) {
    EXPECT_NE(report.find(fused), std::string::npos) << fused << "\n" << report;
  }

  // Logits of a 17-token prefill and 8 greedy decode steps: the export with present = past + new
  // against the fused folder with its max-length buffers.
  const Json truth = read_json(kLlmDir + "/tiny/ground_truth.json");
  const std::vector<int64_t> stream = truth["heldout"]["token_ids"].get<std::vector<int64_t>>();
  DecoderLoop exported(torch_model, false, 512), fused(tmp / "fp32/model.onnx", true, 512);
  ASSERT_TRUE(exported.ok() && fused.ok());
  ASSERT_TRUE(exported.reset().is_ok() && fused.reset().is_ok());
  std::vector<int64_t> tokens(stream.begin(), stream.begin() + 17);
  for (int step = 0; step < 9; ++step) {
    auto want = exported.step(tokens);
    auto got = fused.step(tokens);
    ASSERT_TRUE(want.is_ok() && got.is_ok()) << want.status().to_string() << got.status().to_string();
    expect_logits_near(*got, *want, 1e-4, 1e-4, "step " + std::to_string(step));
    tokens = {argmax_last(*want)};
  }
  // PyTorch's greedy continuation of a ground-truth prompt, 64 tokens.
  const Json& g = truth["greedy"][1];
  ASSERT_TRUE(fused.reset().is_ok());
  std::vector<int64_t> ids;
  tokens = g["prompt_ids"].get<std::vector<int64_t>>();
  for (size_t i = 0; i < g["ids"].size(); ++i) {
    auto logits = fused.step(tokens);
    ASSERT_TRUE(logits.is_ok()) << logits.status().to_string();
    ids.push_back(argmax_last(*logits));
    tokens = {ids.back()};
  }
  EXPECT_EQ(ids, g["ids"].get<std::vector<int64_t>>());
}

TEST(GenaiConvert, TinyTorchExportInt4StaysWithinThePerplexityBound) {
  TempDir tmp;
  const std::string torch_model = kLlmDir + "/tiny/torch/model.onnx";
  auto r = convert_folder(torch_model, tmp / "int4", true);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto m = load_model(tmp / "int4/model.onnx");
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  int nbits = 0;
  for (const Node& n : m->graph.nodes) {
    if (n.op_type != "MatMulNBits") continue;
    ++nbits;
    EXPECT_EQ(attr_int_or(n, "accuracy_level", 0), 4) << n.name;
    EXPECT_EQ(attr_int_or(n, "bits", 0), 4) << n.name;
  }
  EXPECT_EQ(nbits, 4 * 7 + 1);  // q, k, v, o, gate, up, down per layer; lm_head
  // Held-out windows of 128 tokens, each from an empty cache (ground_truth.json's method), on a
  // prefix of the stream: int4 within 5 % of fp32's perplexity (the export on xonnx).
  const Json truth = read_json(kLlmDir + "/tiny/ground_truth.json");
  const std::vector<int64_t> stream = truth["heldout"]["token_ids"].get<std::vector<int64_t>>();
  DecoderLoop exported(torch_model, false, 128), quantized(tmp / "int4/model.onnx", true, 128);
  ASSERT_TRUE(exported.ok() && quantized.ok());
  double nll_fp32 = 0, nll_int4 = 0;
  int64_t predicted = 0;
  for (size_t w = 0; w < 16; ++w) {
    const std::vector<int64_t> window(stream.begin() + w * 128, stream.begin() + (w + 1) * 128);
    ASSERT_TRUE(exported.reset().is_ok() && quantized.reset().is_ok());
    auto a = exported.step(window);
    auto b = quantized.step(window);
    ASSERT_TRUE(a.is_ok() && b.is_ok()) << a.status().to_string() << b.status().to_string();
    nll_fp32 += window_nll(*a, window);
    nll_int4 += window_nll(*b, window);
    predicted += 127;
  }
  const double ppl_fp32 = std::exp(nll_fp32 / predicted), ppl_int4 = std::exp(nll_int4 / predicted);
  EXPECT_LT(ppl_int4, ppl_fp32 * 1.05) << "fp32 " << ppl_fp32 << " int4 " << ppl_int4;
  EXPECT_GT(ppl_int4, ppl_fp32 * 0.95) << "fp32 " << ppl_fp32 << " int4 " << ppl_int4;
}

TEST(GenaiConvert, EveryVariantMatchesPyTorch) {
  int variants = 0;
  for (const auto& entry : fs::directory_iterator(kLlmDir + "/variants")) {
    if (!fs::exists(entry.path() / "expected.json")) continue;
    ++variants;
    const std::string name = entry.path().filename();
    SCOPED_TRACE(name);
    TempDir tmp;
    auto r = convert_folder(entry.path() / "model.onnx", tmp / "out", false);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    const Json expected = read_json(entry.path() / "expected.json");
    const Json& cfg = expected["config"];
    ASSERT_EQ(r->genai.layers.size(), cfg["num_layers"].get<size_t>());
    for (const convert::GenaiLayer& l : r->genai.layers) {
      EXPECT_EQ(l.heads, cfg["num_heads"]);
      EXPECT_EQ(l.kv_heads, cfg["num_kv_heads"]);
      EXPECT_EQ(l.interleaved, cfg["rope_interleaved"]);
      EXPECT_TRUE(l.rotary);
    }
    expect_fused(tmp / "out/model.onnx", cfg["num_layers"]);
    DecoderLoop fused(tmp / "out/model.onnx", true, cfg["context_length"]);
    ASSERT_TRUE(fused.ok() && fused.reset().is_ok());
    std::vector<int64_t> tokens = expected["prompt_ids"].get<std::vector<int64_t>>();
    const std::vector<int64_t> greedy = expected["greedy_ids"].get<std::vector<int64_t>>();
    const Json& steps = expected["step_logits"];
    for (size_t s = 0; s < steps.size(); ++s) {
      auto logits = fused.step(tokens);
      ASSERT_TRUE(logits.is_ok()) << logits.status().to_string();
      const int64_t rows = static_cast<int64_t>(steps[s].size()), vocab = static_cast<int64_t>(steps[s][0].size());
      std::vector<float> want;
      for (const Json& row : steps[s]) {
        for (const Json& v : row) want.push_back(v.get<float>());
      }
      expect_logits_near(*logits, Tensor::from_vector<float>(want, {1, rows, vocab}), 2e-4, 2e-4,
                         "step " + std::to_string(s));
      EXPECT_EQ(argmax_last(*logits), greedy[s]) << "step " << s;
      tokens = {greedy[s]};
    }
  }
  EXPECT_GE(variants, 3);
}

TEST(GenaiConvert, AttentionThatCannotBeFusedNamesTheNodeAndWritesNothing) {
  // Layer 1's Softmax over the query axis instead of the keys: not attention GQA can compute.
  TempDir tmp;
  auto m = load_model(kLlmDir + "/variants/gqa_opset16_interleaved/model.onnx");
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  bool changed = false;
  for (Node& n : m->graph.nodes) {
    if (n.name != "/layers.1/self_attn/Softmax") continue;
    n.attributes.clear();
    Attribute axis;
    axis.name = "axis";
    axis.type = AttrType::kInt;
    axis.i = 2;
    n.attributes.push_back(axis);
    changed = true;
  }
  ASSERT_TRUE(changed);
  fs::create_directory(tmp / "in");
  ASSERT_TRUE(convert::write_model(*m, tmp / "in/model.onnx", convert::WriteOptions()).is_ok());
  auto r = convert_folder(tmp / "in/model.onnx", tmp / "out", false);
  ASSERT_FALSE(r.is_ok());
  const std::string msg = r.status().to_string();
  EXPECT_NE(msg.find("'/layers.1/self_attn/Softmax'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not fused"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(tmp / "out/model.onnx"));
  EXPECT_FALSE(fs::exists(tmp / "out/genai_config.json"));
}

TEST(GenaiConvert, RefusesTheInputFolderAsOutput) {
  TempDir tmp;
  fs::copy(kLlmDir + "/variants/mha_opset14_nofold", tmp / "in");
  auto r = convert_folder(tmp / "in/model.onnx", tmp / "in", false);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().to_string().find("is the input's folder"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace xonnx
