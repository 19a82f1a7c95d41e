// Crafted bad models, one per validation class: each must fail at load or session creation
// with an error that names what is wrong and where, never crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "onnx.pb.h"
#include "runtime/exec/session.h"

namespace xonnx {
namespace {

namespace fs = std::filesystem;
using onnxpb::ModelProto;
using onnxpb::TensorProto;

// y = Relu(x) with x: float[2]; `opset` for the default domain.
ModelProto relu_model(int64_t opset = 17) {
  ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  g->add_output()->set_name("y");
  auto* n = g->add_node();
  n->set_name("relu0");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

// Adds an initializer "w" (float, dims) to the model and makes Relu read it instead of x.
TensorProto* add_weight(ModelProto& m, std::vector<int64_t> dims) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  m.mutable_graph()->mutable_node(0)->set_input(0, "w");
  return t;
}

Status create(const ModelProto& m, const SessionOptions& options = {}) {
  const std::string bytes = m.SerializeAsString();
  auto s = Session::create_from_memory(bytes.data(), bytes.size(), options);
  return s.is_ok() ? Status::ok() : s.status();
}

// Writes the model to a fresh folder and creates a session from the file.
Status create_from_dir(const ModelProto& m, const fs::path& dir) {
  const fs::path path = dir / "model.onnx";
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  auto s = Session::create(path.string());
  return s.is_ok() ? Status::ok() : s.status();
}

void expect_error(const Status& s, StatusCode code, const std::string& needle) {
  ASSERT_FALSE(s.is_ok()) << "expected an error mentioning '" << needle << "'";
  EXPECT_EQ(s.code(), code) << s.to_string();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.to_string();
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/xonnx_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(ModelValidation, ValidModelLoads) { EXPECT_TRUE(create(relu_model()).is_ok()); }

TEST(ModelValidation, TruncatedProtobuf) {
  ModelProto m = relu_model();
  add_weight(m, {2})->mutable_raw_data()->assign(8, '\0');
  const std::string bytes = m.SerializeAsString();
  for (size_t cut : {bytes.size() - 1, bytes.size() / 2, size_t{3}}) {
    auto s = Session::create_from_memory(bytes.data(), cut);
    ASSERT_FALSE(s.is_ok()) << "cut at " << cut;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
  }
  auto garbage = Session::create_from_memory("\xff\xff\xff\xff", 4);
  EXPECT_FALSE(garbage.is_ok());
}

TEST(ModelValidation, UnknownOp) {
  ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("Frobnicate");
  expect_error(create(m), StatusCode::kUnsupported, "Frobnicate");
  expect_error(create(m), StatusCode::kUnsupported, "relu0");
}

TEST(ModelValidation, UnsupportedOpsetVersion) {
  expect_error(create(relu_model(99)), StatusCode::kUnsupported, "opset 99");
  ModelProto m = relu_model(17);
  m.mutable_graph()->mutable_node(0)->set_op_type("Gelu");  // Gelu first appears in opset 20
  expect_error(create(m), StatusCode::kInvalidModel, "does not exist in opset 17");
}

TEST(ModelValidation, UnimportedDomain) {
  ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_domain("com.example");
  expect_error(create(m), StatusCode::kInvalidModel, "com.example");
}

TEST(ModelValidation, MissingGraphInput) {
  ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  expect_error(create(m), StatusCode::kInvalidModel, "'nowhere'");
}

TEST(ModelValidation, DuplicateProducer) {
  ModelProto m = relu_model();
  *m.mutable_graph()->add_node() = m.graph().node(0);
  m.mutable_graph()->mutable_node(1)->set_name("relu1");
  expect_error(create(m), StatusCode::kInvalidModel, "duplicate producer");
}

TEST(ModelValidation, Cycle) {
  ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_input(0, "b");
  g->mutable_node(0)->set_output(0, "a");
  auto* n = g->add_node();
  n->set_name("relu1");
  n->set_op_type("Relu");
  n->add_input("a");
  n->add_output("b");
  g->mutable_output(0)->set_name("a");
  expect_error(create(m), StatusCode::kInvalidModel, "cycle");
}

TEST(ModelValidation, WrongArity) {
  ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("Add");  // Add needs two inputs
  expect_error(create(m), StatusCode::kInvalidModel, "has 1 inputs");
}

TEST(ModelValidation, WrongAttributeType) {
  ModelProto m = relu_model();
  auto* n = m.mutable_graph()->mutable_node(0);
  n->set_op_type("Softmax");
  auto* a = n->add_attribute();
  a->set_name("axis");
  a->set_type(onnxpb::AttributeProto::FLOAT);
  a->set_f(1.0f);
  expect_error(create(m), StatusCode::kInvalidModel, "attribute 'axis' must be INT");
}

// Window sizes near 2^63 overflowed in shape inference, the passes and the pool kernels (a
// MaxPool with pads 2^63 - 1 ran): refused before any of them, naming the attribute.
TEST(ModelValidation, WindowAttributesOutOfRange) {
  for (const char* name : {"pads", "strides", "kernel_shape"}) {
    ModelProto m = relu_model();
    auto* n = m.mutable_graph()->mutable_node(0);
    n->set_op_type("MaxPool");
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnxpb::AttributeProto::INTS);
    a->add_ints(1);
    a->add_ints(int64_t{1} << 31);
    expect_error(create(m), StatusCode::kInvalidModel,
                 std::string("attribute ") + name + "[1] = 2147483648 is out of range");
  }
}

TEST(ModelValidation, RawDataSizeMismatch) {
  ModelProto m = relu_model();
  add_weight(m, {2})->mutable_raw_data()->assign(7, '\0');
  expect_error(create(m), StatusCode::kInvalidModel, "raw_data has 7 bytes");
}

TEST(ModelValidation, TypedDataCountMismatch) {
  ModelProto m = relu_model();
  add_weight(m, {3})->add_float_data(1.0f);
  expect_error(create(m), StatusCode::kInvalidModel, "float_data has 1 values");
}

TEST(ModelValidation, NegativeDim) {
  ModelProto m = relu_model();
  add_weight(m, {2, -3});
  expect_error(create(m), StatusCode::kInvalidModel, "negative dimension -3");
}

TEST(ModelValidation, ElementCountOverflow) {
  ModelProto m = relu_model();
  add_weight(m, {1LL << 40, 1LL << 40});
  expect_error(create(m), StatusCode::kInvalidModel, "overflows");
}

TEST(ModelValidation, UnknownElementType) {
  ModelProto m = relu_model();
  add_weight(m, {2})->set_data_type(99);
  expect_error(create(m), StatusCode::kInvalidModel, "unknown element type 99");
}

TEST(ModelValidation, TensorOverMemoryCap) {
  ModelProto m = relu_model();
  add_weight(m, {1024})->mutable_raw_data()->assign(4096, '\0');
  SessionOptions options;
  options.load.max_tensor_bytes = 1000;
  expect_error(create(m, options), StatusCode::kResourceExhausted, "memory cap");
}

TEST(ModelValidation, GraphOutputNeverProduced) {
  ModelProto m = relu_model();
  m.mutable_graph()->add_output()->set_name("ghost");
  expect_error(create(m), StatusCode::kInvalidModel, "'ghost' is never produced");
}

// External data: absolute paths, "..", symlinks, ranges past the file (test_untrusted_files.cc
// has the rest: hard links, FIFOs, NUL, /proc, tensors in every place).
ModelProto external_model(const std::string& location, const std::string& offset, const std::string& length) {
  ModelProto m = relu_model();
  TensorProto* t = add_weight(m, {2});
  t->set_data_location(TensorProto::EXTERNAL);
  auto add = [t](const char* k, const std::string& v) {
    if (v.empty()) return;
    auto* kv = t->add_external_data();
    kv->set_key(k);
    kv->set_value(v);
  };
  add("location", location);
  add("offset", offset);
  add("length", length);
  return m;
}

TEST(ModelValidation, ExternalDataLoadsInsideTheFolder) {
  TempDir dir;
  std::ofstream(dir.path() / "w.bin", std::ios::binary).write("\0\0\x80\x3f\0\0\0\x40", 8);
  EXPECT_TRUE(create_from_dir(external_model("w.bin", "0", "8"), dir.path()).is_ok());
}

TEST(ModelValidation, ExternalDataAbsolutePath) {
  TempDir dir;
  expect_error(create_from_dir(external_model("/etc/passwd", "", ""), dir.path()), StatusCode::kInvalidModel,
               "is absolute");
}

TEST(ModelValidation, ExternalDataDotDot) {
  TempDir dir;
  expect_error(create_from_dir(external_model("../secret.bin", "", ""), dir.path()), StatusCode::kInvalidModel,
               "contains '..'");
}

TEST(ModelValidation, ExternalDataSymlinkOutside) {
  TempDir dir, outside;
  std::ofstream(outside.path() / "w.bin", std::ios::binary).write("12345678", 8);
  fs::create_symlink(outside.path() / "w.bin", dir.path() / "link.bin");
  expect_error(create_from_dir(external_model("link.bin", "0", "8"), dir.path()), StatusCode::kInvalidModel,
               "symbolic link");
}

TEST(ModelValidation, ExternalDataRangeOutsideFile) {
  TempDir dir;
  std::ofstream(dir.path() / "w.bin", std::ios::binary).write("12345678", 8);
  expect_error(create_from_dir(external_model("w.bin", "4", "8"), dir.path()), StatusCode::kInvalidModel,
               "outside 'w.bin'");
  expect_error(create_from_dir(external_model("w.bin", "0", "4"), dir.path()), StatusCode::kInvalidModel, "needs 8");
  expect_error(create_from_dir(external_model("w.bin", "-1", ""), dir.path()), StatusCode::kInvalidModel,
               "not a non-negative integer");
}

TEST(ModelValidation, ExternalDataMissingFile) {
  TempDir dir;
  expect_error(create_from_dir(external_model("absent.bin", "", ""), dir.path()), StatusCode::kNotFound, "absent.bin");
}

TEST(ModelValidation, ExternalDataFromMemoryIsRejected) {
  expect_error(create(external_model("w.bin", "", "")), StatusCode::kInvalidModel, "not loaded from a file");
}

TEST(ModelValidation, RecursiveFunctionIsRejected) {
  ModelProto m = relu_model();
  auto* op = m.add_opset_import();
  op->set_domain("local");
  op->set_version(1);
  auto* f = m.add_functions();
  f->set_name("Loop1");
  f->set_domain("local");
  f->add_input("a");
  f->add_output("b");
  auto* body = f->add_node();
  body->set_op_type("Loop1");
  body->set_domain("local");
  body->add_input("a");
  body->add_output("b");
  m.mutable_graph()->mutable_node(0)->set_op_type("Loop1");
  m.mutable_graph()->mutable_node(0)->set_domain("local");
  expect_error(create(m), StatusCode::kInvalidModel, "recursive");
}

TEST(ModelValidation, RuntimeInputChecks) {
  const std::string bytes = relu_model().SerializeAsString();
  auto s = Session::create_from_memory(bytes.data(), bytes.size());
  ASSERT_TRUE(s.is_ok());
  auto wrong_type = (*s)->run({Value(Tensor::from_vector<int64_t>({1, 2}, {2}))});
  expect_error(wrong_type.status(), StatusCode::kInvalidArgument, "must be float32");
  auto wrong_dim = (*s)->run({Value(Tensor::from_vector<float>({1, 2, 3}, {3}))});
  expect_error(wrong_dim.status(), StatusCode::kInvalidArgument, "dimension 0 must be 2");
  auto missing = (*s)->run({});
  expect_error(missing.status(), StatusCode::kInvalidArgument, "takes 1 inputs");
}

}  // namespace
}  // namespace xonnx

namespace xonnx {
namespace {

// Constant nodes are evaluated at session creation: the value is right, and a malformed
// Constant fails there, not at run time.
TEST(ConstantFolding, ConstantNodesRunAtCreation) {
  ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  auto* c = g->add_node();
  c->set_op_type("Constant");
  c->add_output("c");
  auto* a = c->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnxpb::AttributeProto::FLOATS);
  a->add_floats(-3.0f);
  a->add_floats(4.0f);
  g->mutable_node(0)->set_input(0, "c");  // y = Relu(c), x unused
  const std::string bytes = m.SerializeAsString();
  auto s = Session::create_from_memory(bytes.data(), bytes.size());
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  auto out = (*s)->run({Value(Tensor::from_vector<float>({0, 0}, {2}))});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].tensor().data<float>()[0], 0.0f);
  EXPECT_EQ((*out)[0].tensor().data<float>()[1], 4.0f);

  a->set_type(onnxpb::AttributeProto::INT);  // wrong type: caught at creation
  expect_error(create(m), StatusCode::kInvalidModel, "value_floats");
}

}  // namespace
}  // namespace xonnx
