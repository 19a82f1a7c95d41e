// Hostile model files (issue 20): each test writes its malicious model and checks that the
// loader or the session ends it with a clear error (or the correct answer), never a crash,
// an overflowed size, a hang or an allocation the file does not pay for.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onnx.pb.h"
#include "runtime/core/checked.h"
#include "runtime/core/dtype.h"
#include "runtime/exec/session.h"
#include "runtime/onnx/loader.h"
#include "sdk/cli/npy.h"

namespace xonnx {
namespace {

using onnxpb::AttributeProto;
using onnxpb::GraphProto;
using onnxpb::ModelProto;
using onnxpb::NodeProto;
using onnxpb::TensorProto;

constexpr int64_t kBig = int64_t{1} << 62;

ModelProto empty_model(int64_t opset = 17) {
  ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

void add_input(GraphProto* g, const std::string& name, int elem_type = TensorProto::FLOAT) {
  auto* in = g->add_input();
  in->set_name(name);
  in->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

NodeProto* add_node(GraphProto* g, const std::string& op, std::vector<std::string> inputs,
                    std::vector<std::string> outputs, const std::string& name = "") {
  NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const std::string& i : inputs) n->add_input(i);
  for (const std::string& o : outputs) n->add_output(o);
  return n;
}

AttributeProto* add_graph_attr(NodeProto* n, const std::string& name, const GraphProto& g) {
  AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::GRAPH);
  *a->mutable_g() = g;
  return a;
}

Result<Model> load(const ModelProto& m, const LoadOptions& options = {}) {
  const std::string bytes = m.SerializeAsString();
  return load_model_from_memory(bytes.data(), bytes.size(), "", options);
}

Status create(const ModelProto& m, const SessionOptions& options = {}) {
  const std::string bytes = m.SerializeAsString();
  auto s = Session::create_from_memory(bytes.data(), bytes.size(), options);
  return s.is_ok() ? Status::ok() : s.status();
}

void expect_error(const Status& s, StatusCode code, const std::vector<std::string>& needles) {
  ASSERT_FALSE(s.is_ok()) << "expected an error mentioning '" << needles.front() << "'";
  EXPECT_EQ(s.code(), code) << s.to_string();
  for (const std::string& needle : needles) {
    EXPECT_NE(s.message().find(needle), std::string::npos) << "'" << needle << "' not in: " << s.to_string();
  }
  // No overflowed size may reach a message.
  EXPECT_EQ(s.message().find("-1 bytes"), std::string::npos) << s.to_string();
  EXPECT_EQ(s.message().find("9223372036854775807"), std::string::npos) << s.to_string();
}

// ---------------------------------------------------------------- size arithmetic
TEST(HardeningSizes, CheckedArithmeticRejectsOverflowAndNegatives) {
  EXPECT_EQ(checked_mul(3, 4), 12);
  EXPECT_EQ(checked_mul(kBig, 2), -1);
  EXPECT_EQ(checked_mul(kBig, 0), 0);
  EXPECT_EQ(checked_mul(-1, 5), -1);
  EXPECT_EQ(checked_mul(2, 3, 4, 5), 120);
  EXPECT_EQ(checked_mul(kBig, 1, 1, 4), -1);
  EXPECT_EQ(checked_add(INT64_MAX, 1), -1);
  EXPECT_EQ(checked_add(5, 6), 11);
}

TEST(HardeningSizes, SubByteStorageNearInt64MaxDoesNotOverflow) {
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt4, INT64_MAX), INT64_MAX / 2 + 1);
  EXPECT_EQ(dtype_storage_bytes(DataType::kInt2, INT64_MAX), INT64_MAX / 4 + 1);
  EXPECT_EQ(dtype_storage_bytes(DataType::kUint4, 3), 2);
  EXPECT_EQ(dtype_storage_bytes(DataType::kFloat, INT64_MAX), -1);
}

TEST(HardeningSizes, HugeInitializerMessageHasNoOverflowedNumbers) {
  ModelProto m = empty_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(kBig);
  t->add_dims(3);  // 2^62 * 3 elements overflow int64 ...
  expect_error(load(m).status(), StatusCode::kInvalidModel, {"initializer 'w'", "overflows"});
  t->set_dims(1, 1);  // ... 2^62 floats do not, but their bytes do
  expect_error(load(m).status(), StatusCode::kResourceExhausted, {"initializer 'w'", "memory cap"});
}

TEST(HardeningSizes, ExternalDataRangeMessageHasNoOverflowedNumbers) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "xonnx_hardening_ext";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "w.bin", std::ios::binary).write("12345678", 8);
  ModelProto m = empty_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(TensorProto::UINT8);
  t->add_dims(8);
  t->set_data_location(TensorProto::EXTERNAL);
  auto kv = [t](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", "w.bin");
  kv("offset", "9223372036854775000");
  kv("length", "8");
  std::ofstream(dir / "model.onnx", std::ios::binary) << m.SerializeAsString();
  auto loaded = load_model((dir / "model.onnx").string());
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(loaded.is_ok());
  EXPECT_NE(loaded.status().message().find("outside 'w.bin'"), std::string::npos) << loaded.status().to_string();
  EXPECT_EQ(loaded.status().message().find(", -"), std::string::npos) << loaded.status().to_string();
}

// ---------------------------------------------------------------- internal domains
ModelProto internal_op_model(int parts) {
  ModelProto m = empty_model();
  auto* op = m.add_opset_import();
  op->set_domain("com.xonnx.nhwc");
  op->set_version(1);
  GraphProto* g = m.mutable_graph();
  add_input(g, "x");
  std::vector<std::string> inputs = {"x", "w", ""};
  for (int p = 1; p < parts; ++p) inputs.push_back("x");
  add_node(g, "ConcatConv", inputs, {"y"}, "cc")->set_domain("com.xonnx.nhwc");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(TensorProto::FLOAT);
  for (int64_t d : {int64_t{1}, int64_t{parts}, int64_t{1}, int64_t{1}}) w->add_dims(d);
  for (int p = 0; p < parts; ++p) w->add_float_data(1.0f);
  g->add_output()->set_name("y");
  return m;
}

TEST(HardeningInternalOps, InternalDomainIsNotARegisteredOpInModelFiles) {
  const ModelProto m = internal_op_model(17);  // 17 parts: past the fast kernel's 16
  expect_error(load(m).status(), StatusCode::kInvalidModel,
               {"node 'cc' (com.xonnx.nhwc::ConcatConv)", "not a registered op", "'com.xonnx.nhwc'"});
  expect_error(create(m), StatusCode::kInvalidModel, {"not a registered op"});
  // Inside a subgraph too.
  ModelProto nested = empty_model();
  nested.add_opset_import()->set_domain("com.xonnx.nhwc");
  GraphProto then_branch;
  then_branch.set_name("then");
  add_node(&then_branch, "ToNHWC", {"x"}, {"t"}, "inner")->set_domain("com.xonnx.nhwc");
  then_branch.add_output()->set_name("t");
  add_input(nested.mutable_graph(), "c", TensorProto::BOOL);
  add_input(nested.mutable_graph(), "x");
  NodeProto* ifn = add_node(nested.mutable_graph(), "If", {"c"}, {"y"}, "if0");
  add_graph_attr(ifn, "then_branch", then_branch);
  add_graph_attr(ifn, "else_branch", then_branch);
  nested.mutable_graph()->add_output()->set_name("y");
  expect_error(load(nested).status(), StatusCode::kInvalidModel, {"'inner'", "not a registered op"});
  // Lookalike domains are not internal.
  EXPECT_FALSE(is_internal_domain("com.xonnxfoo"));
  EXPECT_TRUE(is_internal_domain("com.xonnx.nhwc"));
}

TEST(HardeningInternalOps, TestsMayFeedInternalOpsExplicitly) {
  LoadOptions options;
  options.allow_internal_ops = true;
  EXPECT_TRUE(load(internal_op_model(17), options).is_ok());
}

TEST(HardeningInternalOps, ConcatConvWithMorePartsThanTheFastKernelTakesDoesNotCrash) {
  // Through the internal path (a Model in memory), 17 parts reach session creation: the fast
  // kernel must decline (its fixed array holds 16) and whatever runs must be right.
  LoadOptions load_options;
  load_options.allow_internal_ops = true;
  ModelProto m = internal_op_model(17);
  // NHWC input [1, 1, 1, 1]: every part is x, W sums the 17 channels.
  auto model = load(m, load_options);
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  auto session = Session::create_from_model(std::move(*model));
  if (!session.is_ok()) {
    EXPECT_NE(session.status().code(), StatusCode::kInternal) << session.status().to_string();
    return;
  }
  auto out = (*session)->run({Value(Tensor::from_vector<float>({2.0f}, {1, 1, 1, 1}))});
  if (out.is_ok()) {
    ASSERT_TRUE((*out)[0].is_tensor());
    EXPECT_FLOAT_EQ((*out)[0].tensor().data<float>()[0], 34.0f);
  }
}

// ---------------------------------------------------------------- MatMulNBits sizes
ModelProto matmul_nbits_model(int64_t n) {
  ModelProto m = empty_model();
  auto* op = m.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  GraphProto* g = m.mutable_graph();
  add_input(g, "a");
  for (const char* name : {"b", "s"}) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(name[0] == 'b' ? TensorProto::UINT8 : TensorProto::FLOAT);
    t->add_dims(0);
  }
  NodeProto* node = add_node(g, "MatMulNBits", {"a", "b", "s"}, {"y"}, "mm");
  node->set_domain("com.microsoft");
  auto attr = [node](const char* name, int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(AttributeProto::INT);
    a->set_i(v);
  };
  attr("K", 16);
  attr("N", n);
  attr("block_size", 16);
  attr("bits", 4);
  g->add_output()->set_name("y");
  return m;
}

TEST(HardeningMatMulNBits, WeightSizeOverflowIsRejectedByEveryBackend) {
  // N = 2^62: N * k_blocks * blob_size wraps to 0, which an empty B and empty scales would match.
  for (const bool fast : {true, false}) {
    SessionOptions options;
    options.disable_optimized = !fast;
    options.disable_xnnpack = !fast;
    auto bytes = matmul_nbits_model(kBig).SerializeAsString();
    auto session = Session::create_from_memory(bytes.data(), bytes.size(), options);
    if (session.is_ok()) {  // only a run could find out: it must fail cleanly
      auto out = (*session)->run({Value(Tensor::from_vector<float>(std::vector<float>(16, 1.0f), {1, 16}))});
      ASSERT_FALSE(out.is_ok());
      EXPECT_NE(out.status().message().find("'mm'"), std::string::npos) << out.status().to_string();
      continue;
    }
    expect_error(session.status(), StatusCode::kInvalidModel, {"'mm'", "beyond int64"});
  }
}

// ---------------------------------------------------------------- functions
// F(c, x) = If(c, Relu(x), Neg(x)), as torch's dynamo exporter writes them.
void add_if_function(ModelProto& m, bool recursive) {
  auto* op = m.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  auto* f = m.add_functions();
  f->set_name("F");
  f->set_domain("local");
  f->add_input("c");
  f->add_input("x");
  f->add_output("y");
  f->add_opset_import()->set_version(17);
  auto* fop = f->add_opset_import();
  fop->set_domain("local");
  fop->set_version(1);
  GraphProto then_branch, else_branch;
  then_branch.set_name("then");
  else_branch.set_name("else");
  if (recursive) {
    add_node(&then_branch, "F", {"c", "x"}, {"t"})->set_domain("local");
  } else {
    add_node(&then_branch, "Relu", {"x"}, {"t"});
  }
  then_branch.add_output()->set_name("t");
  add_node(&else_branch, "Neg", {"x"}, {"e"});
  else_branch.add_output()->set_name("e");
  NodeProto* ifn = f->add_node();
  ifn->set_op_type("If");
  ifn->set_name("branch");
  ifn->add_input("c");
  ifn->add_output("y");
  add_graph_attr(ifn, "then_branch", then_branch);
  add_graph_attr(ifn, "else_branch", else_branch);
}

ModelProto two_calls_model(bool recursive) {
  ModelProto m = empty_model();
  add_if_function(m, recursive);
  GraphProto* g = m.mutable_graph();
  add_input(g, "c", TensorProto::BOOL);
  add_input(g, "a");
  add_input(g, "b");
  add_node(g, "F", {"c", "a"}, {"fa"}, "call_a")->set_domain("local");
  add_node(g, "F", {"c", "b"}, {"fb"}, "call_b")->set_domain("local");
  g->add_output()->set_name("fa");
  g->add_output()->set_name("fb");
  return m;
}

TEST(HardeningFunctions, EachCallSiteGetsItsOwnSubgraphs) {
  const std::string bytes = two_calls_model(false).SerializeAsString();
  for (const bool fast : {true, false}) {
    SessionOptions options;
    options.disable_xnnpack = !fast;
    options.disable_optimized = !fast;
    auto session = Session::create_from_memory(bytes.data(), bytes.size(), options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    for (const bool c : {true, false}) {
      auto out = (*session)->run({Value(Tensor::scalar<bool>(c)), Value(Tensor::from_vector<float>({1, -2}, {2})),
                                  Value(Tensor::from_vector<float>({3, -4}, {2}))});
      ASSERT_TRUE(out.is_ok()) << out.status().to_string();
      const float* fa = (*out)[0].tensor().data<float>();
      const float* fb = (*out)[1].tensor().data<float>();
      if (c) {
        EXPECT_EQ(std::vector<float>(fa, fa + 2), (std::vector<float>{1, 0}));
        EXPECT_EQ(std::vector<float>(fb, fb + 2), (std::vector<float>{3, 0}));  // F(B), not F(A)
      } else {
        EXPECT_EQ(std::vector<float>(fa, fa + 2), (std::vector<float>{-1, 2}));
        EXPECT_EQ(std::vector<float>(fb, fb + 2), (std::vector<float>{-3, 4}));
      }
    }
  }
}

TEST(HardeningFunctions, RecursionThroughASubgraphIsRejectedAtLoad) {
  expect_error(load(two_calls_model(true)).status(), StatusCode::kInvalidModel,
               {"'local::F' is recursive", "'local::F' -> 'local::F'"});
  LoadOptions keep;  // the converter loads without inlining: the check must run anyway
  keep.inline_functions = false;
  expect_error(load(two_calls_model(true), keep).status(), StatusCode::kInvalidModel, {"recursive"});
}

// A function importing a default-domain opset the runtime does not implement is rejected at
// load, inlined or not: inlining moves its imports into the model (fuzz_convert found a model
// that loaded without inlining and converted into a file declaring ai.onnx 49).
TEST(HardeningFunctions, UnsupportedOpsetInAFunctionIsRejectedAtLoad) {
  ModelProto m = two_calls_model(false);
  m.mutable_functions(0)->mutable_opset_import(0)->set_version(49);
  for (const bool inline_functions : {true, false}) {
    LoadOptions options;
    options.inline_functions = inline_functions;
    expect_error(load(m, options).status(), StatusCode::kUnsupported,
                 {"function 'local::F'", "default-domain opset 49 is not supported"});
  }
}

// G0 = Relu; G(k) calls G(k-1) twice: G(depth) inlines to 2^depth nodes from a tiny file.
ModelProto function_bomb(int depth) {
  ModelProto m = empty_model();
  auto* op = m.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  for (int k = 0; k <= depth; ++k) {
    auto* f = m.add_functions();
    f->set_name("G" + std::to_string(k));
    f->set_domain("local");
    f->add_input("x");
    f->add_output("y");
    f->add_opset_import()->set_version(17);
    if (k == 0) {
      auto* n = f->add_node();
      n->set_op_type("Relu");
      n->add_input("x");
      n->add_output("y");
      continue;
    }
    for (int half = 0; half < 2; ++half) {
      auto* n = f->add_node();
      n->set_op_type("G" + std::to_string(k - 1));
      n->set_domain("local");
      n->add_input(half ? "t" : "x");
      n->add_output(half ? "y" : "t");
    }
  }
  GraphProto* g = m.mutable_graph();
  add_input(g, "x");
  add_node(g, "G" + std::to_string(depth), {"x"}, {"y"}, "bomb")->set_domain("local");
  g->add_output()->set_name("y");
  return m;
}

TEST(HardeningFunctions, InliningBombHitsTheInlinedNodeCap) {
  LoadOptions options;
  options.max_inlined_nodes = 10'000;
  expect_error(load(function_bomb(30), options).status(), StatusCode::kResourceExhausted,
               {"max_inlined_nodes", "10000"});
  EXPECT_TRUE(load(function_bomb(8), options).is_ok());  // 256 nodes
}

TEST(HardeningFunctions, CallChainsDeeperThanTheNestingLimitAreRejected) {
  LoadOptions options;
  options.max_nesting_depth = 5;
  expect_error(load(function_bomb(6), options).status(), StatusCode::kInvalidModel, {"max_nesting_depth"});
  EXPECT_TRUE(load(function_bomb(3), options).is_ok());
}

// ---------------------------------------------------------------- counts, attributes, nesting
TEST(HardeningLimits, NodeCountCap) {
  ModelProto m = empty_model();
  add_input(m.mutable_graph(), "x0");
  for (int i = 0; i < 20; ++i) {
    add_node(m.mutable_graph(), "Relu", {"x" + std::to_string(i)}, {"x" + std::to_string(i + 1)});
  }
  m.mutable_graph()->add_output()->set_name("x20");
  LoadOptions options;
  options.max_nodes = 10;
  expect_error(load(m, options).status(), StatusCode::kResourceExhausted, {"max_nodes", "node #10"});
  options.max_nodes = 20;
  EXPECT_TRUE(load(m, options).is_ok());
}

TEST(HardeningLimits, AttributeBytesCap) {
  ModelProto m = empty_model();
  add_input(m.mutable_graph(), "x");
  NodeProto* n = add_node(m.mutable_graph(), "Identity", {"x"}, {"y"}, "big");
  auto* a = n->add_attribute();
  a->set_name("note");
  a->set_type(AttributeProto::STRING);
  a->set_s(std::string(5000, 'z'));
  LoadOptions options;
  options.max_attribute_bytes = 4096;
  expect_error(load(m, options).status(), StatusCode::kResourceExhausted,
               {"attribute 'note'", "'big'", "max_attribute_bytes"});
  a->clear_s();
  a->set_type(AttributeProto::INTS);
  for (int i = 0; i < 1000; ++i) a->add_ints(i);  // 8000 bytes
  expect_error(load(m, options).status(), StatusCode::kResourceExhausted, {"max_attribute_bytes"});
}

// Protobuf wire format by hand: a 10,000-deep If chain is too deep for protobuf's own parser
// (and for building it as nested messages).
std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
std::string field(int number, const std::string& payload) {
  return varint(static_cast<uint64_t>(number) << 3 | 2) + varint(payload.size()) + payload;
}

TEST(HardeningLimits, DeepIfNestingGivesTheNestingLimitNotMalformedProtobuf) {
  std::string graph;  // innermost: an empty graph
  for (int level = 0; level < 10'000; ++level) {
    const std::string attr = field(1, "then_branch") + std::string("\x20\x05", 2) + field(6, graph);
    const std::string node = field(1, "c") + field(4, "If") + field(5, attr);
    graph = field(1, node);
  }
  ModelProto head = empty_model();
  head.clear_graph();
  const std::string bytes = head.SerializeAsString() + field(7, graph);
  auto loaded = load_model_from_memory(bytes.data(), bytes.size(), "");
  expect_error(loaded.status(), StatusCode::kInvalidModel, {"nested more than 32", "max_nesting_depth"});
  EXPECT_EQ(loaded.status().message().find("malformed"), std::string::npos);
}

TEST(HardeningLimits, NestingWithinTheLimitLoads) {
  std::string graph = field(2, "inner");
  for (int level = 0; level < 20; ++level) {
    const std::string attr = field(1, "then_branch") + std::string("\x20\x05", 2) + field(6, graph);
    graph = field(1, field(4, "If") + field(5, attr));
  }
  ModelProto head = empty_model();
  head.clear_graph();
  const std::string bytes = head.SerializeAsString() + field(7, graph);
  auto loaded = load_model_from_memory(bytes.data(), bytes.size(), "");
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  int depth = 0;
  for (const Graph* g = &loaded->graph; !g->nodes.empty(); g = g->nodes[0].attributes[0].g.get()) ++depth;
  EXPECT_EQ(depth, 20);
}

// ---------------------------------------------------------------- memory cap at load
TEST(HardeningMemory, SparseInitializerDensificationIsCapped) {
  ModelProto m = empty_model();
  auto* sp = m.mutable_graph()->add_sparse_initializer();
  sp->add_dims(1 << 15);
  sp->add_dims(1 << 15);  // 4 GiB of float from a hundred bytes
  auto* values = sp->mutable_values();
  values->set_name("w");
  values->set_data_type(TensorProto::FLOAT);
  values->add_dims(1);
  values->add_float_data(1.0f);
  auto* indices = sp->mutable_indices();
  indices->set_data_type(TensorProto::INT64);
  indices->add_dims(1);
  indices->add_int64_data(5);
  LoadOptions options;
  options.max_memory_bytes = 64 << 20;
  expect_error(load(m, options).status(), StatusCode::kResourceExhausted,
               {"sparse initializer 'w'", "densified [32768, 32768] float32", "max_memory_bytes"});
  sp->set_dims(0, 4);
  sp->set_dims(1, 4);
  auto ok = load(m, options);
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(ok->graph.initializers[0].tensor.data<float>()[5], 1.0f);
}

TEST(HardeningMemory, TensorsTheLoaderAllocatesAddUpAgainstTheCap) {
  ModelProto m = empty_model();
  for (const char* name : {"a", "b", "c"}) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    t->add_dims(100);
    for (int i = 0; i < 100; ++i) t->add_float_data(1.0f);  // typed data: copied into the IR
  }
  LoadOptions options;
  options.max_memory_bytes = 1000;  // each tensor (400 bytes) fits, all three do not
  expect_error(load(m, options).status(), StatusCode::kResourceExhausted, {"initializer 'c'", "loaded so far"});
  options.max_memory_bytes = 1200;
  EXPECT_TRUE(load(m, options).is_ok());
}

TEST(HardeningMemory, StringTensorsAreChargedBeforeTheirElementsExist) {
  ModelProto m = empty_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("s");
  t->set_data_type(TensorProto::STRING);
  t->add_dims(int64_t{1} << 40);  // a trillion std::strings, one given
  t->add_string_data("x");
  expect_error(load(m).status(), StatusCode::kResourceExhausted, {"initializer 's'", "memory cap"});
}

TEST(HardeningMemory, ManyInitializersLoad) {
  ModelProto m = empty_model();
  for (int i = 0; i < 20'000; ++i) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name("w" + std::to_string(i));
    t->set_data_type(TensorProto::FLOAT);
    t->add_dims(0);
  }
  auto loaded = load(m);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->graph.initializers.size(), 20'000u);
  m.mutable_graph()->mutable_initializer(19'999)->set_name("w7");
  expect_error(load(m).status(), StatusCode::kInvalidModel, {"duplicate initializer 'w7'"});
}

// ---------------------------------------------------------------- BOOL bytes
TEST(HardeningBool, RawBoolBytesAreNormalized) {
  ModelProto m = empty_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("b");
  t->set_data_type(TensorProto::BOOL);
  t->add_dims(4);
  t->set_raw_data(std::string("\x00\x02\xff\x01", 4));
  add_node(m.mutable_graph(), "Not", {"b"}, {"y"});
  add_node(m.mutable_graph(), "And", {"b", "b"}, {"z"});
  m.mutable_graph()->add_output()->set_name("y");
  m.mutable_graph()->add_output()->set_name("z");
  const std::string bytes = m.SerializeAsString();
  auto session = Session::create_from_memory(bytes.data(), bytes.size());
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  auto out = (*session)->run({});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const uint8_t* y = (*out)[0].tensor().data<uint8_t>();
  const uint8_t* z = (*out)[1].tensor().data<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(y, y + 4), (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(std::vector<uint8_t>(z, z + 4), (std::vector<uint8_t>{0, 1, 1, 1}));
}

// ---------------------------------------------------------------- .npy inputs
std::string npy_bytes(const std::string& descr, const std::string& shape, const std::string& data) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  return out + header + data;
}

TEST(HardeningNpy, HeaderClaimsAreCheckedBeforeAllocating) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "xonnx_hardening.npy";
  auto read = [&](const std::string& bytes, int64_t cap = INT64_MAX) {
    std::ofstream(path, std::ios::binary) << bytes;
    return cli::read_npy(path.string(), cap);
  };
  // 3.5 GB claimed by an 80-byte file: refused from the file size, nothing allocated.
  auto big = read(npy_bytes("<f4", "(30000, 30000)", ""));
  expect_error(big.status(), StatusCode::kInvalidArgument, {"data has 0 bytes", "needs 3600000000"});
  auto overflow = read(npy_bytes("<f4", "(4611686018427387904, 4)", ""));
  expect_error(overflow.status(), StatusCode::kInvalidArgument, {"more than 2^63"});
  auto capped = read(npy_bytes("<f4", "(4,)", std::string(16, '\0')), 8);
  expect_error(capped.status(), StatusCode::kResourceExhausted, {"memory cap"});
  auto bools = read(npy_bytes("|b1", "(3,)", std::string("\x02\x00\xff", 3)));
  ASSERT_TRUE(bools.is_ok()) << bools.status().to_string();
  const uint8_t* b = bools->data<uint8_t>();
  EXPECT_EQ(std::vector<uint8_t>(b, b + 3), (std::vector<uint8_t>{1, 0, 1}));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace xonnx
