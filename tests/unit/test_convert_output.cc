// The converter's output paths and its graph validation: OUT and OUT.data are written to
// temporary files renamed into place (a planted symlink is replaced, never followed), any file
// the loader read (model, initializers' and Constant nodes' external data) is refused as OUT
// or OUT.data, and structurally invalid models are refused on the way in with a clear error.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "converter/convert.h"
#include "runtime/onnx/loader.h"
#include "runtime/passes/validate.h"
#include "tests/unit/untrusted_model_util.h"

namespace xonnx {
namespace {

using namespace testing_untrusted;

Result<convert::ConvertResult> convert(const std::string& in, const std::string& out, bool external_data = false) {
  convert::ConvertRequest request;
  request.input_path = in;
  request.output_path = out;
  request.options.external_data = external_data;
  request.write.external_min_bytes = 0;
  return convert::convert_file(request);
}

void expect_error(const Result<convert::ConvertResult>& r, const std::string& needle) {
  ASSERT_FALSE(r.is_ok()) << "converted; expected an error mentioning '" << needle << "'";
  EXPECT_NE(r.status().message().find(needle), std::string::npos) << r.status().to_string();
}

bool is_plain_file(const fs::path& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

TEST(ConvertOutput, PlantedSymlinkAtOutDataIsReplacedNotFollowed) {
  Sandbox box;
  write_all(box.dir() / "w.bin", canary_bytes());
  const std::string in = box.write_model(initializer_model("w.bin"));
  const fs::path out = box.dir() / "out.onnx";
  fs::create_symlink(box.canary(), box.dir() / "out.onnx.data");
  fs::create_symlink(box.canary(), out);
  auto r = convert(in, out.string(), true);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(box.canary_intact());
  EXPECT_TRUE(is_plain_file(out));
  EXPECT_TRUE(is_plain_file(box.dir() / "out.onnx.data"));
  auto back = load_model(out.string());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(box.dir())) files += e.path().filename().string()[0] == '.';
  EXPECT_EQ(files, 0);
}

TEST(ConvertOutput, AConstantNodesDataFileIsProtected) {
  Sandbox box;
  // The input's Constant node reads out.onnx.data: writing OUT = out.onnx would replace it.
  write_all(box.dir() / "out.onnx.data", canary_bytes());
  const std::string in = box.write_model(constant_model("out.onnx.data"));
  expect_error(convert(in, (box.dir() / "out.onnx").string(), true), "which the input model reads");
  EXPECT_EQ(read_all(box.dir() / "out.onnx.data"), canary_bytes());
  EXPECT_FALSE(fs::exists(box.dir() / "out.onnx"));
  // Also through a link: OUT.data elsewhere is a symlink to the Constant's file.
  fs::create_directory(box.root() / "o");
  fs::create_symlink(box.dir() / "out.onnx.data", box.root() / "o" / "x.onnx.data");
  expect_error(convert(in, (box.root() / "o" / "x.onnx").string(), true), "which the input model reads");
  EXPECT_EQ(read_all(box.dir() / "out.onnx.data"), canary_bytes());
}

TEST(ConvertOutput, InitializerDataAndModelFileAreProtected) {
  Sandbox box;
  write_all(box.dir() / "w.bin", canary_bytes());
  const std::string in = box.write_model(initializer_model("w.bin"));
  const std::string before = read_all(in);
  // OUT.data is a symbolic link to the initializer's file (a hard link would make the loader
  // refuse the input).
  fs::create_symlink(box.dir() / "w.bin", box.root() / "y.onnx.data");
  expect_error(convert(in, (box.root() / "y.onnx").string(), true), "refusing to overwrite");
  // OUT is the input under another name.
  ASSERT_EQ(::link(in.c_str(), (box.root() / "z.onnx").c_str()), 0);
  expect_error(convert(in, (box.root() / "z.onnx").string()), "refusing to overwrite");
  expect_error(convert(in, in), "refusing to overwrite");
  EXPECT_EQ(read_all(in), before);
  EXPECT_EQ(read_all(box.dir() / "w.bin"), canary_bytes());
}

// Structurally invalid models: convert refuses each before writing anything.
struct InvalidCase {
  const char* name;
  std::function<void(ModelProto&)> break_it;
  const char* needle;
};

ModelProto with_body(const std::string& op, int body_inputs, int body_outputs,
                     std::initializer_list<std::string> node_inputs, int node_outputs) {
  ModelProto m = base_model();
  auto* g = m.mutable_graph();
  auto* init = g->add_initializer();
  init->set_name("w");
  init->set_data_type(TensorProto::FLOAT);
  init->add_dims(2);
  init->add_float_data(1);
  init->add_float_data(2);
  NodeProto* n = add_node(g, op, node_inputs, {}, "cf");
  for (int i = 0; i < node_outputs; ++i) n->add_output("cf_out" + std::to_string(i));
  std::vector<std::string> attrs =
      op == "If" ? std::vector<std::string>{"then_branch", "else_branch"} : std::vector<std::string>{"body"};
  for (const std::string& attr : attrs) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnxpb::AttributeProto::GRAPH);
    auto* b = a->mutable_g();
    b->set_name(attr);
    for (int i = 0; i < body_inputs; ++i) add_float_io(b->add_input(), "bi" + std::to_string(i));
    for (int i = 0; i < body_outputs; ++i) {
      add_node(b, "Identity", {"w"}, {"bo" + std::to_string(i)});
      add_float_io(b->add_output(), "bo" + std::to_string(i));
    }
  }
  if (op == "Scan") {
    auto* a = n->add_attribute();
    a->set_name("num_scan_inputs");
    a->set_type(onnxpb::AttributeProto::INT);
    a->set_i(1);
  }
  return m;
}

TEST(ConvertOutput, InvalidModelsAreRefused) {
  const std::vector<InvalidCase> cases = {
      {"cycle", [](ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_input(0, "y"); }, "cycle"},
      {"self loop", [](ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_input(0, "r"); }, "(cycle)"},
      {"two writers", [](ModelProto& m) { m.mutable_graph()->mutable_node(1)->set_output(0, "r"); },
       "duplicate producer"},
      {"writes an input", [](ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_output(0, "x"); },
       "duplicate producer"},
      {"dangling input", [](ModelProto& m) { m.mutable_graph()->mutable_node(1)->set_input(1, "ghost"); }, "'ghost'"},
      {"output never produced", [](ModelProto& m) { m.mutable_graph()->mutable_output(0)->set_name("ghost"); },
       "never produced"},
      {"input declared twice", [](ModelProto& m) { add_float_io(m.mutable_graph()->add_input(), "x"); },
       "declared twice"},
      {"unknown op", [](ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_op_type("Frobnicate"); },
       "Frobnicate"},
      {"unknown domain", [](ModelProto& m) { m.mutable_graph()->mutable_node(0)->set_domain("com.evil"); }, "com.evil"},
      {"too many inputs", [](ModelProto& m) { m.mutable_graph()->mutable_node(0)->add_input("x"); }, "inputs"},
      {"If branch outputs", [](ModelProto& m) { m = with_body("If", 0, 2, {"c"}, 1); }, "then_branch gives 2 outputs"},
      {"If branch missing",
       [](ModelProto& m) {
         m = with_body("If", 0, 1, {"c"}, 1);
         m.mutable_graph()->mutable_node(2)->mutable_attribute()->RemoveLast();
       },
       "else_branch"},
      {"Loop body inputs",
       [](ModelProto& m) {
         m = with_body("Loop", 1, 2, {"", "", "w"}, 1);
       },
       "body takes 1 inputs"},
      {"Loop body outputs",
       [](ModelProto& m) {
         m = with_body("Loop", 3, 1, {"", "", "w"}, 1);
       },
       "body gives 1 outputs"},
      {"Scan body", [](ModelProto& m) { m = with_body("Scan", 3, 1, {"w"}, 1); }, "body takes 3 inputs"},
      {"dangling read in a body",
       [](ModelProto& m) {
         m = with_body("If", 0, 1, {"c"}, 1);
         m.mutable_graph()->mutable_node(2)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(0,
                                                                                                           "nowhere");
       },
       "'nowhere'"},
  };
  Sandbox box;
  for (const InvalidCase& c : cases) {
    SCOPED_TRACE(c.name);
    ModelProto m = base_model();
    auto* w = m.mutable_graph()->add_initializer();
    w->set_name("w");
    w->set_data_type(TensorProto::FLOAT);
    w->add_dims(2);
    w->add_float_data(1);
    w->add_float_data(2);
    c.break_it(m);
    if (std::string(c.name).rfind("If", 0) == 0 || std::string(c.name).find("body") != std::string::npos) {
      auto* cond = m.mutable_graph()->add_initializer();
      cond->set_name("c");
      cond->set_data_type(TensorProto::BOOL);
      cond->add_int32_data(1);
    }
    const std::string in = box.write_model(m);
    const fs::path out = box.dir() / "out.onnx";
    auto r = convert(in, out.string());
    expect_error(r, c.needle);
    if (!r.is_ok()) {
      EXPECT_NE(r.status().message().find("invalid input model"), std::string::npos) << r.status().to_string();
    }
    EXPECT_FALSE(fs::exists(out));
  }
  EXPECT_TRUE(box.canary_intact());
}

TEST(ConvertOutput, ValidModelsPassTheValidator) {
  Sandbox box;
  ModelProto m = with_body("If", 0, 1, {"c"}, 1);
  auto* cond = m.mutable_graph()->add_initializer();
  cond->set_name("c");
  cond->set_data_type(TensorProto::BOOL);
  cond->add_int32_data(1);
  auto model = load_model(box.write_model(m));
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  EXPECT_TRUE(validate_model(*model).is_ok()) << validate_model(*model).to_string();
  auto r = convert(box.model_path().string(), (box.dir() / "ok.onnx").string());
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
}

}  // namespace
}  // namespace xonnx
