// converter/writer: IR -> ONNX bytes -> loader gives the same IR back (every dtype, every
// attribute type, subgraphs, functions, metadata), external data is 4096-aligned and loads as
// views of the mapped file, and the writer refuses to overwrite its input.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "converter/writer.h"
#include "onnx.pb.h"
#include "runtime/onnx/loader.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using convert::serialize_model;
using convert::write_model;
using convert::WriteOptions;
using convert::WriteStats;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/xonnx_writer_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ValueInfo tensor_info(const std::string& name, DataType dt, std::vector<int64_t> dims) {
  ValueInfo v;
  v.name = name;
  v.type.kind = TypeInfo::Kind::kTensor;
  v.type.elem_type = dt;
  v.type.has_shape = true;
  for (int64_t d : dims) v.type.dims.push_back(Dim{d, ""});
  return v;
}

// x -> Identity -> y, opset 21 (every dtype is legal).
Model identity_model() {
  Model m;
  m.ir_version = 10;
  m.opset_imports[""] = 21;
  m.graph.name = "g";
  m.graph.inputs.push_back(tensor_info("x", DataType::kFloat, {2}));
  m.graph.outputs.push_back(tensor_info("y", DataType::kFloat, {2}));
  Node n;
  n.name = "id";
  n.op_type = "Identity";
  n.inputs = {"x"};
  n.outputs = {"y"};
  m.graph.nodes.push_back(n);
  return m;
}

// A tensor of `dt` with `count` elements whose bytes are a recognizable pattern.
Tensor patterned(DataType dt, int64_t count) {
  Tensor t = Tensor::allocate(dt, {count}).value();
  if (dt == DataType::kString) {
    for (int64_t i = 0; i < count; ++i) t.string_data()[i] = "s" + std::to_string(i) + std::string(i % 3, '\0');
    return t;
  }
  auto* p = static_cast<uint8_t*>(t.raw_data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(i * 37 + 11);
  if (dt == DataType::kBool) {
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
  }
  if (dtype_is_subbyte(dt) && count % (8 / dtype_bits(dt)) != 0) {
    // Unused high bits of the last byte are not part of the value.
    const int used = static_cast<int>(count % (8 / dtype_bits(dt))) * dtype_bits(dt);
    p[t.nbytes() - 1] &= static_cast<uint8_t>((1u << used) - 1);
  }
  return t;
}

void expect_same_tensor(const Tensor& a, const Tensor& b, const std::string& what) {
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  ASSERT_EQ(a.shape(), b.shape()) << what;
  if (a.dtype() == DataType::kString) {
    for (int64_t i = 0; i < a.numel(); ++i) EXPECT_EQ(a.string_data()[i], b.string_data()[i]) << what;
    return;
  }
  ASSERT_EQ(a.nbytes(), b.nbytes()) << what;
  EXPECT_EQ(0, std::memcmp(a.raw_data(), b.raw_data(), a.nbytes())) << what;
}

Model round_trip(const Model& m) {
  auto bytes = serialize_model(m);
  EXPECT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  auto keep = std::make_shared<std::string>(std::move(bytes).value());
  LoadOptions lo;
  lo.inline_functions = false;
  auto loaded = load_model_from_memory(keep->data(), keep->size(), "", lo, keep);
  EXPECT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  return std::move(loaded).value();
}

const std::vector<DataType>& all_dtypes() {
  static const std::vector<DataType> types = {
      DataType::kFloat,      DataType::kUint8,          DataType::kInt8,         DataType::kUint16,
      DataType::kInt16,      DataType::kInt32,          DataType::kInt64,        DataType::kString,
      DataType::kBool,       DataType::kFloat16,        DataType::kDouble,       DataType::kUint32,
      DataType::kUint64,     DataType::kBFloat16,       DataType::kFloat8E4M3FN, DataType::kFloat8E4M3FNUZ,
      DataType::kFloat8E5M2, DataType::kFloat8E5M2FNUZ, DataType::kUint4,        DataType::kInt4,
      DataType::kFloat4E2M1, DataType::kFloat8E8M0,     DataType::kUint2,        DataType::kInt2};
  return types;
}

TEST(ConvertWriter, EveryDtypeRoundTrips) {
  Model m = identity_model();
  for (DataType dt : all_dtypes()) {
    for (int64_t count : {0, 1, 7}) {
      m.graph.initializers.push_back({std::string(dtype_name(dt)) + "_" + std::to_string(count), patterned(dt, count)});
    }
  }
  m.graph.initializers.push_back({"scalar", Tensor::scalar<float>(2.5f)});
  Model back = round_trip(m);
  ASSERT_EQ(back.graph.initializers.size(), m.graph.initializers.size());
  for (size_t i = 0; i < m.graph.initializers.size(); ++i) {
    EXPECT_EQ(back.graph.initializers[i].name, m.graph.initializers[i].name);
    expect_same_tensor(m.graph.initializers[i].tensor, back.graph.initializers[i].tensor, m.graph.initializers[i].name);
  }
}

TEST(ConvertWriter, ModelFieldsRoundTrip) {
  Model m = identity_model();
  m.producer_name = "prod";
  m.producer_version = "1.2";
  m.domain = "ai.test";
  m.model_version = 7;
  m.doc_string = "doc";
  m.metadata_props = {{"k1", "v1"}, {"k2", "v2"}};
  m.opset_imports["com.microsoft"] = 1;
  ValueInfo sym = tensor_info("x", DataType::kFloat, {2});
  sym.type.dims = {Dim{-1, "batch"}, Dim{-1, ""}, Dim{3, ""}};
  m.graph.inputs[0] = sym;
  ValueInfo seq;
  seq.name = "vi_seq";
  seq.type.kind = TypeInfo::Kind::kSequence;
  seq.type.elem = std::make_shared<TypeInfo>(tensor_info("", DataType::kInt64, {}).type);
  m.graph.value_info.push_back(seq);
  ValueInfo opt;
  opt.name = "vi_opt";
  opt.type.kind = TypeInfo::Kind::kOptional;
  opt.type.elem = std::make_shared<TypeInfo>(tensor_info("", DataType::kFloat16, {4}).type);
  m.graph.value_info.push_back(opt);
  FunctionDef f;
  f.name = "Fn";
  f.domain = "local";
  f.inputs = {"a"};
  f.outputs = {"b"};
  f.attribute_names = {"alpha"};
  f.attribute_defaults.push_back(testing::attr_float("beta", 0.5f));
  f.opset_imports[""] = 21;
  Node fn_node;
  fn_node.op_type = "LeakyRelu";
  fn_node.inputs = {"a"};
  fn_node.outputs = {"b"};
  Attribute ref;
  ref.name = "alpha";
  ref.type = AttrType::kFloat;
  ref.ref_attr_name = "alpha";
  fn_node.attributes.push_back(ref);
  f.nodes.push_back(fn_node);
  m.functions.push_back(f);
  m.opset_imports["local"] = 1;

  Model back = round_trip(m);
  EXPECT_EQ(back.ir_version, 10);
  EXPECT_EQ(back.opset_imports, m.opset_imports);
  EXPECT_EQ(back.producer_name, "prod");
  EXPECT_EQ(back.producer_version, "1.2");
  EXPECT_EQ(back.domain, "ai.test");
  EXPECT_EQ(back.model_version, 7);
  EXPECT_EQ(back.doc_string, "doc");
  EXPECT_EQ(back.metadata_props, m.metadata_props);
  ASSERT_EQ(back.graph.inputs.size(), 1u);
  const auto& dims = back.graph.inputs[0].type.dims;
  ASSERT_EQ(dims.size(), 3u);
  EXPECT_EQ(dims[0].param, "batch");
  EXPECT_FALSE(dims[1].known());
  EXPECT_TRUE(dims[1].param.empty());
  EXPECT_EQ(dims[2].value, 3);
  ASSERT_EQ(back.graph.value_info.size(), 2u);
  EXPECT_EQ(back.graph.value_info[0].type.kind, TypeInfo::Kind::kSequence);
  EXPECT_EQ(back.graph.value_info[0].type.elem->elem_type, DataType::kInt64);
  EXPECT_EQ(back.graph.value_info[1].type.kind, TypeInfo::Kind::kOptional);
  EXPECT_EQ(back.graph.value_info[1].type.elem->dims[0].value, 4);
  ASSERT_EQ(back.functions.size(), 1u);
  const FunctionDef& g = back.functions[0];
  EXPECT_EQ(g.name, "Fn");
  EXPECT_EQ(g.domain, "local");
  EXPECT_EQ(g.attribute_names, std::vector<std::string>{"alpha"});
  ASSERT_EQ(g.attribute_defaults.size(), 1u);
  EXPECT_EQ(g.attribute_defaults[0].f, 0.5f);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].attributes[0].ref_attr_name, "alpha");
  EXPECT_EQ(g.opset_imports.at(""), 21);
}

TEST(ConvertWriter, EveryAttributeTypeRoundTrips) {
  Model m = identity_model();
  Node& n = m.graph.nodes[0];
  n.domain = "test.domain";
  n.op_type = "AllAttrs";
  n.overload = "ov";
  m.opset_imports["test.domain"] = 1;
  n.attributes.push_back(testing::attr_float("f", 1.5f));
  n.attributes.push_back(testing::attr_int("i", -3));
  n.attributes.push_back(testing::attr_string("s", std::string("a\0b", 3)));
  n.attributes.push_back(testing::attr_tensor("t", testing::tensor_of<int32_t>({1, 2, 3}, {3})));
  n.attributes.push_back(testing::attr_floats("fs", {1, 2}));
  n.attributes.push_back(testing::attr_ints("is", {4, 5, 6}));
  n.attributes.push_back(testing::attr_strings("ss", {"x", "yz"}));
  Attribute ts;
  ts.name = "ts";
  ts.type = AttrType::kTensors;
  ts.tensors = {testing::tensor_of<float>({1}, {1}), Tensor::from_vector<std::string>({"q"}, {1})};
  n.attributes.push_back(ts);
  Attribute sp;
  sp.name = "sp";
  sp.type = AttrType::kSparseTensor;
  sp.t = testing::tensor_of<float>({0, 2, 0, 4}, {2, 2});
  n.attributes.push_back(sp);
  Attribute tp;
  tp.name = "tp";
  tp.type = AttrType::kTypeProto;
  tp.tp = tensor_info("", DataType::kInt8, {5}).type;
  n.attributes.push_back(tp);
  Attribute tps;
  tps.name = "tps";
  tps.type = AttrType::kTypeProtos;
  tps.type_protos = {tp.tp, tensor_info("", DataType::kBool, {}).type};
  n.attributes.push_back(tps);
  auto sub = std::make_shared<Graph>();
  sub->name = "body";
  sub->outputs.push_back(tensor_info("c", DataType::kFloat, {1}));
  sub->initializers.push_back({"c", testing::tensor_of<float>({9}, {1})});
  Attribute g;
  g.name = "g";
  g.type = AttrType::kGraph;
  g.g = sub;
  n.attributes.push_back(g);
  Attribute gs;
  gs.name = "gs";
  gs.type = AttrType::kGraphs;
  gs.graphs = {sub, sub};
  n.attributes.push_back(gs);

  Model back = round_trip(m);
  const Node& b = back.graph.nodes[0];
  EXPECT_EQ(b.domain, "test.domain");
  EXPECT_EQ(b.overload, "ov");
  ASSERT_EQ(b.attributes.size(), n.attributes.size());
  for (size_t i = 0; i < n.attributes.size(); ++i) {
    EXPECT_EQ(b.attributes[i].name, n.attributes[i].name);
    EXPECT_EQ(b.attributes[i].type, n.attributes[i].type) << n.attributes[i].name;
  }
  EXPECT_EQ(b.find_attr("f")->f, 1.5f);
  EXPECT_EQ(b.find_attr("i")->i, -3);
  EXPECT_EQ(b.find_attr("s")->s, std::string("a\0b", 3));
  expect_same_tensor(b.find_attr("t")->t, n.find_attr("t")->t, "t");
  EXPECT_EQ(b.find_attr("fs")->floats, (std::vector<float>{1, 2}));
  EXPECT_EQ(b.find_attr("is")->ints, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(b.find_attr("ss")->strings, (std::vector<std::string>{"x", "yz"}));
  ASSERT_EQ(b.find_attr("ts")->tensors.size(), 2u);
  expect_same_tensor(b.find_attr("ts")->tensors[1], ts.tensors[1], "ts[1]");
  expect_same_tensor(b.find_attr("sp")->t, sp.t, "sparse");
  EXPECT_EQ(b.find_attr("tp")->tp.elem_type, DataType::kInt8);
  EXPECT_EQ(b.find_attr("tps")->type_protos.size(), 2u);
  ASSERT_TRUE(b.find_attr("g")->g);
  EXPECT_EQ(b.find_attr("g")->g->name, "body");
  ASSERT_EQ(b.find_attr("g")->g->initializers.size(), 1u);
  expect_same_tensor(b.find_attr("g")->g->initializers[0].tensor, sub->initializers[0].tensor, "sub init");
  EXPECT_EQ(b.find_attr("gs")->graphs.size(), 2u);
}

TEST(ConvertWriter, StreamedBytesAreOneValidModelProto) {
  Model m = identity_model();
  m.graph.initializers.push_back({"w", patterned(DataType::kFloat, 1000)});
  m.graph.initializers.push_back({"names", patterned(DataType::kString, 3)});
  WriteStats stats;
  auto bytes = serialize_model(m, &stats);
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ(stats.model_bytes, static_cast<int64_t>(bytes->size()));
  onnxpb::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  ASSERT_EQ(proto.graph().initializer_size(), 2);
  EXPECT_EQ(proto.graph().initializer(0).raw_data().size(), 4000u);
  EXPECT_EQ(proto.graph().initializer(1).string_data_size(), 3);
  EXPECT_EQ(proto.graph().node(0).op_type(), "Identity");
}

// Names in the order of a graph's nodes.
std::vector<std::string> node_names(const google::protobuf::RepeatedPtrField<onnxpb::NodeProto>& nodes) {
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.name());
  return names;
}

// Passes name new nodes after values ("w_DequantizeLinear"), and two of them can collide; ONNX
// Runtime refuses such a file. The writer renames every repeat in each graph and function body,
// keeping the first node's name and avoiding the names other nodes already have.
TEST(ConvertWriter, NodeNamesAreUniqueInEveryGraphWritten) {
  Model m = identity_model();
  auto node = [](const std::string& name, const std::string& in, const std::string& out) {
    Node n;
    n.name = name;
    n.op_type = "Identity";
    n.inputs = {in};
    n.outputs = {out};
    return n;
  };
  auto sub = std::make_shared<Graph>();
  sub->name = "branch";
  sub->nodes = {node("b", "x", "t0"), node("b", "t0", "t1"), node("", "t1", "t2"), node("", "t2", "z")};
  sub->outputs.push_back(tensor_info("z", DataType::kFloat, {2}));
  m.graph.nodes = {node("q", "x", "v0"),  node("q", "v0", "v1"), node("q_1", "v1", "v2"),
                   node("q", "v2", "v3"), node("", "v3", "v4"),  node("", "v4", "v5")};
  Node branch;
  branch.name = "q";
  branch.op_type = "If";
  branch.inputs = {"cond"};
  branch.outputs = {"y"};
  for (const char* name : {"then_branch", "else_branch"}) {
    Attribute a;
    a.name = name;
    a.type = AttrType::kGraph;
    a.g = sub;
    branch.attributes.push_back(a);
  }
  m.graph.nodes.push_back(branch);
  FunctionDef f;
  f.name = "Fn";
  f.domain = "local";
  f.inputs = {"a"};
  f.outputs = {"c"};
  f.opset_imports[""] = 21;
  f.nodes = {node("n", "a", "b"), node("n", "b", "c")};
  m.functions.push_back(f);

  auto bytes = serialize_model(m);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  onnxpb::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(*bytes));
  using Names = std::vector<std::string>;
  EXPECT_EQ(node_names(proto.graph().node()), (Names{"q", "q_2", "q_1", "q_3", "", "", "q_4"}));
  const auto& then_branch = proto.graph().node(6).attribute(0).g();
  EXPECT_EQ(node_names(then_branch.node()), (Names{"b", "b_1", "", ""}));
  EXPECT_EQ(node_names(proto.functions(0).node()), (Names{"n", "n_1"}));
  EXPECT_EQ(m.graph.nodes[1].name, "q");  // the IR itself is left as it is
}

TEST(ConvertWriter, Ir3ListsInitializersAsInputs) {
  Model m = identity_model();
  m.ir_version = 3;
  m.opset_imports[""] = 8;
  m.graph.initializers.push_back({"w", testing::tensor_of<float>({1, 2}, {2})});
  Model back = round_trip(m);
  ASSERT_EQ(back.graph.inputs.size(), 2u);
  EXPECT_EQ(back.graph.inputs[1].name, "w");
}

TEST(ConvertWriter, ExternalDataIsAlignedAndLoadsAsViews) {
  TempDir dir;
  Model m = identity_model();
  m.graph.initializers.push_back({"a", patterned(DataType::kFloat, 1001)});
  m.graph.initializers.push_back({"b", patterned(DataType::kInt8, 5000)});
  m.graph.initializers.push_back({"small", testing::tensor_of<int64_t>({1, 2}, {2})});
  m.graph.initializers.push_back({"s", patterned(DataType::kString, 2)});
  m.graph.initializers.push_back({"c", patterned(DataType::kInt4, 4097)});
  WriteOptions wo;
  wo.external_data = true;
  WriteStats stats;
  const std::string out = dir.file("m.onnx");
  ASSERT_TRUE(write_model(m, out, wo, &stats).is_ok());
  EXPECT_EQ(stats.external_tensors, 3);
  EXPECT_EQ(stats.external_path, out + ".data");
  onnxpb::ModelProto proto;
  ASSERT_TRUE(proto.ParseFromString(read_file(out)));
  int external = 0;
  for (const auto& t : proto.graph().initializer()) {
    if (t.data_location() != onnxpb::TensorProto::EXTERNAL) continue;
    ++external;
    std::map<std::string, std::string> kv;
    for (const auto& e : t.external_data()) kv[e.key()] = e.value();
    EXPECT_EQ(kv["location"], "m.onnx.data");
    EXPECT_EQ(std::stoll(kv["offset"]) % 4096, 0) << t.name();
    EXPECT_GT(std::stoll(kv["length"]), 0);
  }
  EXPECT_EQ(external, 3);
  auto loaded = load_model(out);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  for (size_t i = 0; i < m.graph.initializers.size(); ++i) {
    const NamedTensor& want = m.graph.initializers[i];
    const NamedTensor* got = loaded->graph.find_initializer(want.name);
    ASSERT_TRUE(got) << want.name;
    expect_same_tensor(want.tensor, got->tensor, want.name);
  }
  EXPECT_TRUE(loaded->graph.find_initializer("a")->tensor.is_view_of_external_memory());
  EXPECT_TRUE(loaded->graph.find_initializer("b")->tensor.is_view_of_external_memory());
}

TEST(ConvertWriter, RefusesToOverwriteProtectedFiles) {
  TempDir dir;
  const std::string in = dir.file("in.onnx");
  { std::ofstream(in) << "original"; }
  Model m = identity_model();
  WriteOptions wo;
  wo.protected_paths = {in};
  Status s = write_model(m, in, wo);
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("refusing to overwrite"), std::string::npos) << s.message();
  EXPECT_EQ(read_file(in), "original");
  // A hard link is the same file under another name.
  const std::string link = dir.file("link.onnx");
  ASSERT_EQ(::link(in.c_str(), link.c_str()), 0);
  EXPECT_FALSE(write_model(m, link, wo).is_ok());
  // OUT's data file must not be the input either.
  const std::string out = dir.file("x.onnx");
  ASSERT_EQ(::link(in.c_str(), (out + ".data").c_str()), 0);
  wo.external_data = true;
  EXPECT_FALSE(write_model(m, out, wo).is_ok());
  EXPECT_EQ(read_file(in), "original");
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(ConvertWriter, UnwritableOutputWritesNothing) {
  TempDir dir;
  Model m = identity_model();
  Status s = write_model(m, dir.file("missing/out.onnx"), {});
  EXPECT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("does not exist"), std::string::npos) << s.message();
  s = write_model(m, dir.file(""), {});
  EXPECT_FALSE(s.is_ok());
  EXPECT_FALSE(write_model(m, "", {}).is_ok());
}

TEST(ConvertWriter, BrokenIrIsAnErrorNotACrash) {
  Model m = identity_model();
  m.graph.initializers.push_back({"undefined", Tensor()});
  auto bytes = serialize_model(m);
  ASSERT_FALSE(bytes.is_ok());
  EXPECT_NE(bytes.status().message().find("undefined"), std::string::npos);
  Model g = identity_model();
  Attribute a;
  a.name = "body";
  a.type = AttrType::kGraph;
  g.graph.nodes[0].attributes.push_back(a);
  auto bytes2 = serialize_model(g);
  ASSERT_FALSE(bytes2.is_ok());
  EXPECT_NE(bytes2.status().message().find("body"), std::string::npos);
}

}  // namespace
}  // namespace xonnx
