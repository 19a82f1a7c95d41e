// The QDQ fusion pass's state (qdq_fusion.h), shared by its two source files: qdq_fusion.cc
// (the QDQ groups, constant DequantizeLinear, the clean-up) and qdq_fusion_dynamic.cc (int8
// dynamic's MatMulInteger / ConvInteger chains). Internal to the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/ir/graph.h"
#include "runtime/ir/graph_index.h"
#include "runtime/passes/qdq_fusion.h"

namespace xonnx {
namespace qdq_internal {

inline int32_t qmin_of(DataType t) { return t == DataType::kInt8 ? -128 : 0; }
inline int32_t qmax_of(DataType t) { return t == DataType::kInt8 ? 127 : 255; }

// (x - zero_point) * scale per tensor or per axis (n's "axis"), for integer x of up to 32 bits.
bool dequantize_constant(const Node& n, const Tensor& x, const Tensor& scale, const Tensor* zp, Tensor& out);

// The per-tensor parameters of a QuantizeLinear / DequantizeLinear node.
struct ScalarQ {
  float scale = 0;
  int32_t zero_point = 0;
  DataType type = DataType::kUndefined;  // the 8-bit side's type (from the zero point)
};

class QdqPass {
 public:
  QdqPass(Graph& g, int64_t opset) : g_(g), opset_(opset), index_(g) {}
  QdqFusionStats run();

 private:
  bool is_op(size_t i, const char* op) const {
    return !dead_[i] && g_.nodes[i].domain.empty() && g_.nodes[i].op_type == op;
  }
  const Tensor* constant(const std::string& name) const { return index_.constant(name); }
  bool scalar_params(const Node& n, ScalarQ& q) const;
  int dq_producer(const std::string& value, ScalarQ& q) const;
  int single_reader(const std::string& value) const;
  int quantize_after(size_t op, ScalarQ& q, int& act);
  void make_signed_activations();
  const Node* weight_dequantize(const std::string& value, int64_t rank, int64_t channel_axis) const;
  bool fuse_conv(size_t i);
  bool fuse_gemm(size_t i);
  bool fuse_matmul(size_t i);
  struct IntegerEpilogue {
    int cast = -1, mul = -1, scales = -1, add = -1;  // node indices (add: -1 without a bias)
    std::string a_scale, b_scale, bias;
  };
  bool integer_epilogue(size_t i, int64_t channels, int64_t trailing, IntegerEpilogue& e) const;
  void replace_epilogue(size_t i, const IntegerEpilogue& e, Node fused);
  bool fuse_matmul_integer(size_t i);
  bool fuse_conv_integer(size_t i);
  bool fuse_binary(size_t i);
  std::string int32_bias(const std::string& value, int64_t m, const std::string& base,
                         const std::function<double(int64_t)>& scale_of);
  bool fuse_on_integers(size_t i);
  std::string add_initializer(const std::string& base, Tensor t);
  void replace(size_t q, Node fused, size_t op, int act);
  void fold_constant_dequantize();
  void remove_dead();

  Graph& g_;
  int64_t opset_;
  ValueIndex index_;  // of the graph as loaded; fused nodes replace their Q in place
  std::vector<bool> dead_;
  std::unordered_set<std::string> names_;
  std::list<NamedTensor> new_initializers_;  // stable addresses: index_ points at them
  QdqFusionStats stats_;
};

}  // namespace qdq_internal
}  // namespace xonnx
