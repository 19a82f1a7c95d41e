// Builds hostile models in a fresh temporary folder next to a canary file outside it: the
// file tests of the loader (test_untrusted_files.cc) and the converter's output checks
// (test_convert_output.cc) assert the canary is never read or changed.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "onnx.pb.h"

namespace xonnx {
namespace testing_untrusted {

namespace fs = std::filesystem;
using onnxpb::ModelProto;
using onnxpb::NodeProto;
using onnxpb::TensorProto;

// The canary holds two floats, so a model that reads it would load (and the test would see).
inline const std::string& canary_bytes() {
  static const std::string bytes("\0\0\x80\x3f\0\0\0\x40", 8);
  return bytes;
}

inline std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_all(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// root/ (removed at the end) holds canary.bin and the model folder root/model/.
class Sandbox {
 public:
  Sandbox() {
    char tmpl[] = "/tmp/xonnx_untrusted_XXXXXX";
    root_ = mkdtemp(tmpl);
    fs::create_directory(dir());
    write_all(canary(), canary_bytes());
  }
  ~Sandbox() { fs::remove_all(root_); }
  fs::path root() const { return root_; }
  fs::path dir() const { return root_ / "model"; }
  fs::path canary() const { return root_ / "canary.bin"; }
  fs::path model_path() const { return dir() / "model.onnx"; }
  // The canary's bytes and mode are as they were (written by no one, swapped by no one).
  bool canary_intact() const {
    struct stat st;
    return ::lstat(canary().c_str(), &st) == 0 && S_ISREG(st.st_mode) && read_all(canary()) == canary_bytes();
  }
  std::string write_model(const ModelProto& m) const {
    write_all(model_path(), m.SerializeAsString());
    return model_path().string();
  }

 private:
  fs::path root_;
};

inline void set_external(TensorProto* t, const std::string& location) {
  t->set_data_location(TensorProto::EXTERNAL);
  auto* kv = t->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
}

// A float[2] tensor named `name` whose bytes are in `location`.
inline void external_float2(TensorProto* t, const std::string& name, const std::string& location) {
  t->set_name(name);
  t->set_data_type(TensorProto::FLOAT);
  t->add_dims(2);
  set_external(t, location);
}

inline NodeProto* add_node(onnxpb::GraphProto* g, const std::string& op, std::initializer_list<std::string> in,
                           std::initializer_list<std::string> out, const std::string& name = "") {
  NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_" + std::to_string(g->node_size()) : name);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return n;
}

inline void add_float_io(onnxpb::ValueInfoProto* v, const std::string& name, int64_t dim = 2) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(dim);
}

// y = Relu(x) + w, x float[2], opset 17; w supplied by the caller (an initializer or a node).
inline ModelProto base_model() {
  ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("main");
  add_float_io(g->add_input(), "x");
  add_float_io(g->add_output(), "y");
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "Add", {"r", "w"}, {"y"}, "add");
  return m;
}

// w is an initializer read from `location`.
inline ModelProto initializer_model(const std::string& location) {
  ModelProto m = base_model();
  external_float2(m.mutable_graph()->add_initializer(), "w", location);
  return m;
}

// w is the output of a Constant node whose `value` attribute is read from `location`.
inline ModelProto constant_model(const std::string& location) {
  ModelProto m = base_model();
  auto* g = m.mutable_graph();
  NodeProto* c = add_node(g, "Constant", {}, {"w"}, "const_w");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnxpb::AttributeProto::TENSOR);
  external_float2(a->mutable_t(), "w", location);
  // Constant first: keep file order topological.
  g->mutable_node()->SwapElements(0, g->node_size() - 1);
  g->mutable_node()->SwapElements(1, g->node_size() - 1);
  return m;
}

}  // namespace testing_untrusted
}  // namespace xonnx
