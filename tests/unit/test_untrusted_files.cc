// Files a hostile model names: external data is opened beneath the model's folder without
// following links, refused when it is a hard link, FIFO, "..", absolute, NUL-bearing or on
// /proc, wherever the tensor sits (initializer, Constant node, If branch, function body,
// sparse initializer); the model file and input files never block on a FIFO. Each case keeps
// a canary outside the folder that must stay unread and unchanged.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platforms/posix/mapped_file.h"
#include "platforms/posix/safe_open.h"
#include "runtime/exec/session.h"
#include "runtime/onnx/external_data.h"
#include "runtime/onnx/loader.h"
#include "sdk/cli/npy.h"
#include "tests/unit/untrusted_model_util.h"

namespace xonnx {
namespace {

using namespace testing_untrusted;

// Loads `m` from the sandbox's folder and returns the error (the test fails if it loads).
Status load_error(const Sandbox& box, const ModelProto& m) {
  auto model = load_model(box.write_model(m));
  EXPECT_FALSE(model.is_ok()) << "the model loaded";
  return model.is_ok() ? Status::ok() : model.status();
}

void expect_refused(const Sandbox& box, const ModelProto& m, const std::string& needle) {
  Status s = load_error(box, m);
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.to_string();
  EXPECT_TRUE(box.canary_intact());
}

TEST(UntrustedFiles, ExternalDataInsideTheFolderLoadsAndIsListed) {
  Sandbox box;
  write_all(box.dir() / "w.bin", canary_bytes());
  fs::create_directory(box.dir() / "sub");
  write_all(box.dir() / "sub" / "c.bin", canary_bytes());
  std::vector<FileIdentity> files;
  auto model = load_model_listing_files(box.write_model(initializer_model("w.bin")), {}, &files);
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, box.model_path().string());
  struct stat st;
  ASSERT_EQ(::stat((box.dir() / "w.bin").c_str(), &st), 0);
  EXPECT_EQ(files[1].inode, static_cast<uint64_t>(st.st_ino));
  // A Constant node's file in a sub-folder is listed too.
  auto with_constant = load_model_listing_files(box.write_model(constant_model("./sub/c.bin")), {}, &files);
  ASSERT_TRUE(with_constant.is_ok()) << with_constant.status().to_string();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].path, (box.dir() / "./sub/c.bin").string());
}

TEST(UntrustedFiles, HardLinkToAFileOutsideIsRefused) {
  Sandbox box;
  ASSERT_EQ(::link(box.canary().c_str(), (box.dir() / "w.bin").c_str()), 0);
  expect_refused(box, initializer_model("w.bin"), "hard links");
  expect_refused(box, constant_model("w.bin"), "hard links");
}

TEST(UntrustedFiles, SymbolicLinksAreNotFollowed) {
  Sandbox box;
  write_all(box.dir() / "inside.bin", canary_bytes());
  fs::create_symlink(box.canary(), box.dir() / "out.bin");
  fs::create_symlink("inside.bin", box.dir() / "in.bin");  // even one that stays inside
  fs::create_directory_symlink(box.root(), box.dir() / "up");
  fs::create_symlink("/proc/self/environ", box.dir() / "env.bin");
  expect_refused(box, initializer_model("out.bin"), "symbolic link");
  expect_refused(box, initializer_model("in.bin"), "symbolic link");
  expect_refused(box, initializer_model("up/canary.bin"), "symbolic link");
  expect_refused(box, initializer_model("env.bin"), "symbolic link");
}

TEST(UntrustedFiles, TraversalAbsoluteNulAndProcAreRefused) {
  Sandbox box;
  write_all(box.dir() / "w.bin", canary_bytes());
  expect_refused(box, initializer_model("../canary.bin"), "'..'");
  expect_refused(box, initializer_model("sub/../../canary.bin"), "'..'");
  expect_refused(box, initializer_model(box.canary().string()), "absolute");
  expect_refused(box, initializer_model("/proc/self/environ"), "absolute");
  expect_refused(box, initializer_model(std::string("w.bin\0/../../canary.bin", 24)), "NUL");
  expect_refused(box, initializer_model(""), "empty");
}

TEST(UntrustedFiles, FifoNeverBlocks) {
  Sandbox box;
  ASSERT_EQ(::mkfifo((box.dir() / "w.bin").c_str(), 0600), 0);
  expect_refused(box, initializer_model("w.bin"), "not a regular file");
  // The model file itself, an input file (.npy) and a value file (.pb) as FIFOs.
  const fs::path fifo = box.dir() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto model = load_model(fifo.string());
  ASSERT_FALSE(model.is_ok());
  EXPECT_NE(model.status().message().find("not a regular file"), std::string::npos) << model.status().to_string();
  auto npy = cli::read_npy(fifo.string());
  ASSERT_FALSE(npy.is_ok());
  EXPECT_NE(npy.status().message().find("not a regular file"), std::string::npos);
  TypeInfo tensor_type;
  tensor_type.kind = TypeInfo::Kind::kTensor;
  auto pb = load_value_file(fifo.string(), tensor_type);
  ASSERT_FALSE(pb.is_ok());
  EXPECT_NE(pb.status().message().find("not a regular file"), std::string::npos);
}

// The same checks hold wherever the tensor sits.
TEST(UntrustedFiles, EveryTensorPlaceIsChecked) {
  Sandbox box;
  ASSERT_EQ(::link(box.canary().c_str(), (box.dir() / "w.bin").c_str()), 0);

  // An initializer of an If branch.
  ModelProto with_if = base_model();
  {
    auto* g = with_if.mutable_graph();
    auto* cond = g->add_initializer();
    cond->set_name("c");
    cond->set_data_type(TensorProto::BOOL);
    cond->add_int32_data(1);
    NodeProto* n = add_node(g, "If", {"c"}, {"w"}, "if_w");
    for (const char* name : {"then_branch", "else_branch"}) {
      auto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnxpb::AttributeProto::GRAPH);
      auto* body = a->mutable_g();
      body->set_name(name);
      external_float2(body->add_initializer(), "v", "w.bin");
      add_float_io(body->add_output(), "v");
    }
    g->mutable_node()->SwapElements(0, 2);
    g->mutable_node()->SwapElements(1, 2);
  }
  expect_refused(box, with_if, "hard links");

  // A sparse initializer's values.
  ModelProto sparse = base_model();
  {
    auto* sp = sparse.mutable_graph()->add_sparse_initializer();
    sp->add_dims(2);
    external_float2(sp->mutable_values(), "w", "w.bin");
    sp->mutable_values()->set_dims(0, 2);
    auto* idx = sp->mutable_indices();
    idx->set_data_type(TensorProto::INT64);
    idx->add_dims(2);
    idx->add_int64_data(0);
    idx->add_int64_data(1);
  }
  expect_refused(box, sparse, "hard links");

  // A Constant node in a model-local function's body.
  ModelProto function = base_model();
  {
    auto* op = function.add_opset_import();
    op->set_domain("local");
    op->set_version(1);
    auto* f = function.add_functions();
    f->set_name("MakeW");
    f->set_domain("local");
    f->add_output("out");
    f->add_opset_import()->set_version(17);
    NodeProto* c = f->add_node();
    c->set_op_type("Constant");
    c->add_output("out");
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnxpb::AttributeProto::TENSOR);
    external_float2(a->mutable_t(), "out", "w.bin");
    auto* g = function.mutable_graph();
    NodeProto* call = add_node(g, "MakeW", {}, {"w"}, "call");
    call->set_domain("local");
    g->mutable_node()->SwapElements(0, 2);
    g->mutable_node()->SwapElements(1, 2);
  }
  expect_refused(box, function, "hard links");
  // Session creation (the run path) refuses the same.
  auto session = Session::create(box.write_model(constant_model("w.bin")));
  ASSERT_FALSE(session.is_ok());
  EXPECT_NE(session.status().message().find("hard links"), std::string::npos);
  EXPECT_TRUE(box.canary_intact());
}

// The descriptor checked is the one mapped: swapping the name for a link to the canary after
// the open changes nothing that is read.
TEST(UntrustedFiles, TheCheckedDescriptorIsTheMappedOne) {
  Sandbox box;
  const std::string inside("\0\0\0\0\0\0\0\0", 8);
  write_all(box.dir() / "w.bin", inside);
  std::string error;
  UniqueFd dir = open_directory(box.dir().string(), &error);
  ASSERT_TRUE(dir.valid()) << error;
  UniqueFd fd = open_beneath(dir.get(), "w.bin", &error);
  ASSERT_TRUE(fd.valid()) << error;
  fs::remove(box.dir() / "w.bin");
  fs::create_symlink(box.canary(), box.dir() / "w.bin");
  auto mapped = MappedFile::map(fd.get(), "w.bin", &error);
  ASSERT_TRUE(mapped) << error;
  EXPECT_EQ(std::string(static_cast<const char*>(mapped->data()), mapped->size()), inside);
  // And the swapped name is refused from now on.
  EXPECT_FALSE(open_beneath(dir.get(), "w.bin", &error).valid());
  EXPECT_TRUE(box.canary_intact());
}

TEST(UntrustedFiles, NpyDataLengthIsCheckedBeforeAllocating) {
  // A header claiming 2^40 floats with no data: refused without allocating 4 TB.
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  auto t = cli::parse_npy(bytes.data(), bytes.size(), "big.npy");
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("needs 4398046511104"), std::string::npos) << t.status().to_string();
}

}  // namespace
}  // namespace xonnx
