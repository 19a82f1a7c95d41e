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
  // What the sequence ops keep of the items' footprint (sum of nbytes + sizeof(Tensor)) so a
  // Loop that inserts checks the memory cap in O(1); -1 when not known (then recomputed).
  int64_t held_bytes = -1;
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
  // The same for a sequence made modifiable (not const): unique_sequence() may hand it out.
  static Value sequence(std::shared_ptr<Sequence> s) {
    Value v = sequence(std::shared_ptr<const Sequence>(std::move(s)));
    v.modifiable_ = true;
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
  // The sequence for modifying in place when this Value holds the only reference to it (and
  // it was made modifiable), else nullptr. Sequences are values: a kernel that got its input
  // with KernelContext::take_input_value and finds it unique may append to it instead of
  // copying the list (SequenceInsert in a Loop body: linear instead of quadratic).
  Sequence* unique_sequence() {
    if (kind_ != Kind::kSequence || !modifiable_ || sequence_.use_count() != 1) return nullptr;
    return const_cast<Sequence*>(sequence_.get());
  }

 private:
  Kind kind_ = Kind::kEmpty;
  Tensor tensor_;
  std::shared_ptr<const Sequence> sequence_;
  bool modifiable_ = false;  // sequence_ was created non-const (Value::sequence(shared_ptr<Sequence>))
};

}  // namespace xonnx
