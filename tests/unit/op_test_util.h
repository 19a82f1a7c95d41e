// Builds a one-node model in memory and runs it through the real Session, so op tests
// exercise the same registry, validation and executor as models do.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "runtime/exec/session.h"

namespace xonnx {
namespace testing {

// n values drawn from N(0, 1), the same for the same seed.
inline std::vector<float> normal_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline Attribute attr_int(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInt;
  a.i = v;
  return a;
}
inline Attribute attr_float(const std::string& name, float v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kFloat;
  a.f = v;
  return a;
}
inline Attribute attr_string(const std::string& name, const std::string& v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kString;
  a.s = v;
  return a;
}
inline Attribute attr_ints(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = std::move(v);
  return a;
}
inline Attribute attr_floats(const std::string& name, std::vector<float> v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kFloats;
  a.floats = std::move(v);
  return a;
}
inline Attribute attr_strings(const std::string& name, std::vector<std::string> v) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kStrings;
  a.strings = std::move(v);
  return a;
}
inline Attribute attr_tensor(const std::string& name, Tensor t) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kTensor;
  a.t = std::move(t);
  return a;
}

// A tensor from elements and a shape, and the same as a Value.
template <typename T>
Tensor tensor_of(std::vector<T> v, Shape s) {
  return Tensor::from_vector<T>(v, std::move(s));
}
template <typename T>
Value tv(std::vector<T> v, Shape s) {
  return Value(tensor_of<T>(std::move(v), std::move(s)));
}

// 0, 1, ..., n-1 as floats.
inline std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// The elements of a tensor Value whose storage type is T.
template <typename T>
std::vector<T> values(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

// The elements of a numeric tensor Value of any type, as doubles.
inline std::vector<double> doubles(const Value& v) {
  const Tensor& t = v.tensor();
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.get_as_double(static_cast<int64_t>(i));
  return out;
}

// Runs `op` on `inputs` (an undefined Tensor / empty Value means "omitted optional input").
// Returns `num_outputs` values.
inline Result<std::vector<Value>> run_op(const std::string& op, const std::vector<Value>& inputs,
                                         const std::vector<Attribute>& attrs = {}, int64_t opset = 17,
                                         size_t num_outputs = 1, const std::string& domain = "", int num_threads = 1) {
  Model model;
  model.ir_version = 8;
  model.opset_imports[""] = opset;
  if (!domain.empty()) model.opset_imports[domain] = 1;
  Node node;
  node.op_type = op;
  node.domain = domain;
  node.name = "n0";
  node.attributes = attrs;
  std::vector<Value> given;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].empty()) {
      node.inputs.push_back("");
      continue;
    }
    ValueInfo vi;
    vi.name = "in" + std::to_string(i);
    node.inputs.push_back(vi.name);
    model.graph.inputs.push_back(vi);
    given.push_back(inputs[i]);
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    ValueInfo vi;
    vi.name = "out" + std::to_string(i);
    node.outputs.push_back(vi.name);
    model.graph.outputs.push_back(vi);
  }
  model.graph.nodes.push_back(std::move(node));
  SessionOptions options;
  options.num_threads = num_threads;
  XONNX_ASSIGN_OR_RETURN(auto session, Session::create_from_model(std::move(model), options));
  return session->run(given);
}

}  // namespace testing
}  // namespace xonnx
