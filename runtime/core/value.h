// A runtime value: a tensor, a sequence of tensors, or an optional that holds nothing.
// (An optional that holds something is represented by the thing itself.)
#pragma once

#include <memory>
#include <vector>

#include "runtime/core/tensor.h"

namespace xonnx {

struct Sequence {
  DataType elem_type = DataType::kUndefined;
  std::vector<Tensor> items;
};

class Value {
 public:
  enum class Kind { kEmpty, kTensor, kSequence, kNone };

  Value() = default;
  Value(Tensor t) : kind_(t.defined() ? Kind::kTensor : Kind::kEmpty), tensor_(std::move(t)) {}  // NOLINT
  static Value sequence(std::shared_ptr<const Sequence> s) {
    Value v;
    v.kind_ = Kind::kSequence;
    v.sequence_ = std::move(s);
    return v;
  }
  static Value none() {
    Value v;
    v.kind_ = Kind::kNone;
    return v;
  }

  Kind kind() const { return kind_; }
  bool empty() const { return kind_ == Kind::kEmpty; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_sequence() const { return kind_ == Kind::kSequence; }
  bool is_none() const { return kind_ == Kind::kNone; }
  const Tensor& tensor() const { return tensor_; }
  Tensor* mutable_tensor() { return &tensor_; }
  const Sequence& sequence() const { return *sequence_; }
  const std::shared_ptr<const Sequence>& sequence_ptr() const { return sequence_; }

 private:
  Kind kind_ = Kind::kEmpty;
  Tensor tensor_;
  std::shared_ptr<const Sequence> sequence_;
};

}  // namespace xonnx
