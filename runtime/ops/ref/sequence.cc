// Sequence and Optional ops. Sequences are values: shared lists of tensors that an op which
// "modifies" one copies (the tensors themselves are shared, not copied), unless it holds the
// only reference (sequence_to_modify), as a Loop body that appends does.
#include "runtime/core/checked.h"
#include "runtime/core/limits.h"
#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/tensor_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

using SequencePtr = std::shared_ptr<Sequence>;

Result<const Sequence*> sequence_input(KernelContext& ctx, size_t i) {
  const Value& v = ctx.input_value(i);
  if (!v.is_sequence()) return invalid_argument("input ", i, " must be a sequence");
  return &v.sequence();
}

// A position input: scalar int, negative counts from the end; `allow_end` admits == size.
Result<int64_t> position(const Tensor& t, int64_t size, bool allow_end) {
  if (t.numel() != 1 || !dtype_is_integer(t.dtype())) {
    return invalid_argument("position must be an integer scalar");
  }
  int64_t p = t.get_as_int64(0);
  const int64_t hi = allow_end ? size : size - 1;
  if (p < -size || p > hi) {
    return invalid_argument("position ", p, " is out of range for a sequence of length ", size);
  }
  return p < 0 ? p + size : p;
}

int64_t entry_bytes(const Tensor& t) { return static_cast<int64_t>(t.nbytes() + sizeof(Tensor)); }

// What `s` holds (its items' bytes plus each entry's own size): kept in held_bytes by these
// ops, counted once for a sequence made elsewhere (a run input, SplitToSequence, the loader).
int64_t held_bytes(const Sequence& s) {
  if (s.held_bytes >= 0) return s.held_bytes;
  int64_t bytes = 0;
  for (const Tensor& t : s.items) bytes = checked_add(bytes, entry_bytes(t));
  return bytes;
}

// A sequence about to get `extra` more must stay under the memory cap, so a Loop that keeps
// inserting ends with an error. Returns what it will hold.
Result<int64_t> check_sequence_size(const KernelContext& ctx, const Sequence& s, const Tensor& extra) {
  const int64_t cap = ctx.limits().max_memory_bytes;
  const int64_t bytes = checked_add(held_bytes(s), entry_bytes(extra));
  if (bytes < 0 || bytes > cap) {
    return resource_exhausted("a sequence of ", s.items.size() + 1, " tensors would hold more than ",
                              describe_bytes(cap), " (max_memory_bytes)");
  }
  return bytes;
}

// The sequence input 0 to derive the output from: the input itself when this node is its last
// reader and nobody else holds it (a Loop body appending: O(1) instead of a copy of the whole
// list per iteration), else a copy. Either way the input as the graph saw it is unchanged.
Result<std::shared_ptr<Sequence>> sequence_to_modify(KernelContext& ctx) {
  Value v = ctx.take_input_value(0);
  if (!v.is_sequence()) return invalid_argument("input 0 must be a sequence");
  // unique_sequence(): v holds the only reference to a sequence created non-const.
  if (v.unique_sequence()) return std::const_pointer_cast<Sequence>(v.sequence_ptr());
  auto s = std::make_shared<Sequence>(v.sequence());
  s->held_bytes = held_bytes(*s);
  return s;
}

Result<std::unique_ptr<Kernel>> create_sequence_empty(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t dtype, init.get_int("dtype", static_cast<int64_t>(DataType::kFloat)));
  if (!dtype_is_known(static_cast<int32_t>(dtype))) return invalid_model("unknown dtype ", dtype);
  return make_kernel([dtype](KernelContext& ctx) -> Status {
    auto s = std::make_shared<Sequence>();
    s->elem_type = static_cast<DataType>(dtype);
    ctx.set_output_value(0, Value::sequence(s));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_sequence_construct(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    auto s = std::make_shared<Sequence>();
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      if (!t.defined()) return invalid_argument("input ", i, " must be a tensor");
      if (i > 0 && t.dtype() != s->elem_type) {
        return invalid_argument("all inputs must have one element type; input ", i, " is ", dtype_name(t.dtype()),
                                ", input 0 is ", dtype_name(s->elem_type));
      }
      s->elem_type = t.dtype();
      s->items.push_back(t);
    }
    ctx.set_output_value(0, Value::sequence(s));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_sequence_insert(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0));
    const Tensor& t = ctx.input(1);
    if (!t.defined()) return invalid_argument("input 1 must be a tensor");
    if (!in->items.empty() && t.dtype() != in->elem_type) {
      return invalid_argument("cannot insert ", dtype_name(t.dtype()), " into a sequence of ",
                              dtype_name(in->elem_type));
    }
    XONNX_ASSIGN_OR_RETURN(const int64_t bytes, check_sequence_size(ctx, *in, t));
    int64_t pos = static_cast<int64_t>(in->items.size());
    if (ctx.has_input(2)) {
      XONNX_ASSIGN_OR_RETURN(pos, position(ctx.input(2), static_cast<int64_t>(in->items.size()), true));
    }
    // Every check is done: only now may the input leave its slot.
    Tensor item = t;
    XONNX_ASSIGN_OR_RETURN(std::shared_ptr<Sequence> s, sequence_to_modify(ctx));
    s->elem_type = item.dtype();
    s->items.insert(s->items.begin() + pos, std::move(item));
    s->held_bytes = bytes;
    ctx.set_output_value(0, Value::sequence(std::move(s)));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_sequence_at(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0));
    XONNX_ASSIGN_OR_RETURN(int64_t pos, position(ctx.input(1), static_cast<int64_t>(in->items.size()), false));
    ctx.set_output(0, in->items[pos]);
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_sequence_erase(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0));
    const int64_t size = static_cast<int64_t>(in->items.size());
    if (size == 0) return invalid_argument("cannot erase from an empty sequence");
    int64_t pos = size - 1;
    if (ctx.has_input(1)) {
      XONNX_ASSIGN_OR_RETURN(pos, position(ctx.input(1), size, false));
    }
    XONNX_ASSIGN_OR_RETURN(std::shared_ptr<Sequence> s, sequence_to_modify(ctx));
    const int64_t held = held_bytes(*s);
    const int64_t bytes = held < 0 ? -1 : held - entry_bytes(s->items[static_cast<size_t>(pos)]);
    s->items.erase(s->items.begin() + pos);
    s->held_bytes = bytes;
    ctx.set_output_value(0, Value::sequence(std::move(s)));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_sequence_length(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0));
    ctx.set_output(0, Tensor::scalar<int64_t>(static_cast<int64_t>(in->items.size())));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_split_to_sequence(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis_attr, init.get_int("axis", 0));
  XONNX_ASSIGN_OR_RETURN(int64_t keepdims, init.get_int("keepdims", 1));
  return make_kernel([axis_attr, keepdims](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, static_cast<int64_t>(x.rank())));
    const int64_t len = x.dim(axis);
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (ctx.has_input(1)) {
      const Tensor& split = ctx.input(1);
      if (split.rank() == 0) {
        const int64_t chunk = split.get_as_int64(0);
        if (chunk <= 0) return invalid_argument("split size must be positive, got ", chunk);
        for (int64_t left = len; left > 0; left -= chunk) sizes.push_back(std::min(chunk, left));
      } else {
        XONNX_ASSIGN_OR_RETURN(sizes, split.to_int64_vector());
        int64_t total = 0;
        for (int64_t s : sizes) {
          if (s < 0) return invalid_argument("negative split size ", s);
          if (s > len - total)
            return invalid_argument("split sizes ", shape_to_string(sizes), " exceed the dimension ", len);
          total += s;
        }
        if (total != len) return invalid_argument("split sizes sum to ", total, ", dimension is ", len);
      }
    } else {
      // One tensor per index: an axis of 2^40 over an empty tensor is 2^40 tensors.
      XONNX_RETURN_IF_ERROR(ref::check_scratch(ctx, "the sequence's tensors", sizeof(Tensor), {len}));
      sizes.assign(static_cast<size_t>(len), 1);
      squeeze = keepdims == 0;
    }
    auto s = std::make_shared<Sequence>();
    s->elem_type = x.dtype();
    int64_t start = 0;
    for (int64_t size : sizes) {
      std::vector<Tensor> parts;
      for (int64_t i = 0; i < size; ++i) {
        XONNX_ASSIGN_OR_RETURN(Tensor slice, ref::take_along_axis(x, axis, start + i));
        parts.push_back(std::move(slice));
      }
      start += size;
      Tensor piece;
      if (squeeze) {
        piece = parts[0];
      } else if (parts.empty()) {
        Shape shape = x.shape();
        shape[axis] = 0;
        XONNX_ASSIGN_OR_RETURN(piece, Tensor::allocate(x.dtype(), shape));
      } else {
        XONNX_ASSIGN_OR_RETURN(piece, ref::stack_along_axis(parts, axis));
      }
      s->items.push_back(std::move(piece));
    }
    ctx.set_output_value(0, Value::sequence(s));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_concat_from_sequence(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t axis_attr, init.require_int("axis"));
  XONNX_ASSIGN_OR_RETURN(int64_t new_axis, init.get_int("new_axis", 0));
  return make_kernel([axis_attr, new_axis](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(const Sequence* in, sequence_input(ctx, 0));
    if (in->items.empty()) return invalid_argument("cannot concatenate an empty sequence");
    const int64_t rank = static_cast<int64_t>(in->items[0].rank()) + (new_axis ? 1 : 0);
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(axis_attr, rank));
    Tensor out;
    if (new_axis) {
      XONNX_ASSIGN_OR_RETURN(out, ref::stack_along_axis(in->items, axis));
    } else {
      XONNX_ASSIGN_OR_RETURN(out, ref::concat_along_axis(in->items, axis));
    }
    ctx.set_output(0, std::move(out));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_sequence_map(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::shared_ptr<GraphBody> body, init.subgraph("body"));
  return make_kernel([body](KernelContext& ctx) -> Status {
    // Inputs that are sequences are iterated in lockstep; tensors are passed to every call.
    int64_t length = -1;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Value& v = ctx.input_value(i);
      if (!v.is_sequence()) continue;
      const int64_t n = static_cast<int64_t>(v.sequence().items.size());
      if (length >= 0 && n != length) return invalid_argument("sequence inputs have different lengths");
      length = n;
    }
    if (length < 0) return invalid_argument("SequenceMap needs at least one sequence input");
    std::vector<std::shared_ptr<Sequence>> outs(ctx.num_outputs());
    for (auto& s : outs) s = std::make_shared<Sequence>();
    for (int64_t k = 0; k < length; ++k) {
      std::vector<Value> in;
      for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        const Value& v = ctx.input_value(i);
        in.push_back(v.is_sequence() ? Value(v.sequence().items[k]) : v);
      }
      XONNX_ASSIGN_OR_RETURN(std::vector<Value> out, ctx.run_subgraph(*body, in));
      if (out.size() != outs.size()) return invalid_model("SequenceMap body output count mismatch");
      for (size_t o = 0; o < out.size(); ++o) {
        outs[o]->elem_type = out[o].tensor().dtype();
        outs[o]->items.push_back(out[o].tensor());
      }
    }
    for (size_t o = 0; o < outs.size(); ++o) {
      if (outs[o]->items.empty()) {
        const TypeInfo& t = body->graph().outputs[o].type;
        outs[o]->elem_type = t.elem_type;
      }
      ctx.set_output_value(o, Value::sequence(outs[o]));
    }
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_optional(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    ctx.set_output_value(0, ctx.has_input(0) ? ctx.input_value(0) : Value::none());
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_optional_has_element(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    const Value& v = ctx.input_value(0);
    ctx.set_output(0, Tensor::scalar<bool>(!v.empty() && !v.is_none()));
    return Status::ok();
  });
}

Result<std::unique_ptr<Kernel>> create_optional_get_element(const KernelInit&) {
  return make_kernel([](KernelContext& ctx) -> Status {
    const Value& v = ctx.input_value(0);
    if (v.empty() || v.is_none()) return invalid_argument("the optional input holds no element");
    ctx.set_output_value(0, v);
    return Status::ok();
  });
}

}  // namespace

void register_sequence_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "SequenceEmpty", 11, kLatestVersion, create_sequence_empty);
  XONNX_REGISTER(registry, "", "SequenceConstruct", 11, kLatestVersion, create_sequence_construct);
  XONNX_REGISTER(registry, "", "SequenceInsert", 11, kLatestVersion, create_sequence_insert);
  XONNX_REGISTER(registry, "", "SequenceAt", 11, kLatestVersion, create_sequence_at);
  XONNX_REGISTER(registry, "", "SequenceErase", 11, kLatestVersion, create_sequence_erase);
  XONNX_REGISTER(registry, "", "SequenceLength", 11, kLatestVersion, create_sequence_length);
  XONNX_REGISTER(registry, "", "SplitToSequence", 11, kLatestVersion, create_split_to_sequence);
  XONNX_REGISTER(registry, "", "ConcatFromSequence", 11, kLatestVersion, create_concat_from_sequence);
  XONNX_REGISTER(registry, "", "SequenceMap", 17, kLatestVersion, create_sequence_map);
  XONNX_REGISTER(registry, "", "Optional", 15, kLatestVersion, create_optional);
  XONNX_REGISTER(registry, "", "OptionalHasElement", 15, kLatestVersion, create_optional_has_element);
  XONNX_REGISTER(registry, "", "OptionalGetElement", 15, kLatestVersion, create_optional_get_element);
}

}  // namespace xonnx
