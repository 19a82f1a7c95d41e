// Control flow: If, Loop, Scan. Bodies are compiled once at session creation
// (KernelInit::subgraph) and see every value of their enclosing scopes.
#include "runtime/core/limits.h"
#include "runtime/ops/ref/tensor_util.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

Result<bool> read_condition(const Tensor& t, const char* what) {
  if (!t.defined() || t.numel() != 1) {
    return invalid_argument(what, " must be a tensor with one element, got ",
                            t.defined() ? shape_to_string(t.shape()) : std::string("nothing"));
  }
  if (t.dtype() != DataType::kBool && !dtype_is_integer(t.dtype()) && !dtype_is_float(t.dtype())) {
    return invalid_argument(what, " must be bool, got ", dtype_name(t.dtype()));
  }
  return t.get_as_double(0) != 0.0;
}

// An empty [0, dims...] tensor for a scan output that no iteration produced.
Result<Tensor> empty_scan_output(const ValueInfo& info) {
  DataType dtype = info.type.elem_type == DataType::kUndefined ? DataType::kFloat : info.type.elem_type;
  Shape shape{0};
  for (const Dim& d : info.type.dims) shape.push_back(d.known() ? d.value : 0);
  return Tensor::allocate(dtype, shape);
}

// ---------------------------------------------------------------- If
Result<std::unique_ptr<Kernel>> create_if(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::shared_ptr<GraphBody> then_branch, init.subgraph("then_branch"));
  XONNX_ASSIGN_OR_RETURN(std::shared_ptr<GraphBody> else_branch, init.subgraph("else_branch"));
  return make_kernel([then_branch, else_branch](KernelContext& ctx) -> Status {
    XONNX_ASSIGN_OR_RETURN(bool cond, read_condition(ctx.input(0), "If condition"));
    const GraphBody& branch = cond ? *then_branch : *else_branch;
    XONNX_ASSIGN_OR_RETURN(std::vector<Value> outs, ctx.run_subgraph(branch, {}));
    if (outs.size() != ctx.num_outputs()) {
      return invalid_model("the ", cond ? "then" : "else", " branch gives ", outs.size(), " outputs; the If node has ",
                           ctx.num_outputs());
    }
    for (size_t i = 0; i < outs.size(); ++i) ctx.set_output_value(i, std::move(outs[i]));
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Loop
Result<std::unique_ptr<Kernel>> create_loop(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::shared_ptr<GraphBody> body, init.subgraph("body"));
  const Graph& g = body->graph();
  const size_t carried = init.num_inputs() - 2;
  if (g.inputs.size() != carried + 2) {
    return invalid_model("Loop body takes ", g.inputs.size(), " inputs; expected ", carried + 2,
                         " (iteration, condition, ", carried, " loop-carried)");
  }
  if (g.outputs.size() < carried + 1) {
    return invalid_model("Loop body gives ", g.outputs.size(), " outputs; expected at least ", carried + 1);
  }
  const size_t scans = g.outputs.size() - 1 - carried;
  if (init.num_outputs() > carried + scans) {
    return invalid_model("Loop has ", init.num_outputs(), " outputs; the body gives ", carried, " loop-carried and ",
                         scans, " scan outputs");
  }
  return make_kernel([body, carried, scans](KernelContext& ctx) -> Status {
    int64_t max_trip = INT64_MAX;
    if (ctx.has_input(0)) {
      const Tensor& m = ctx.input(0);
      if (m.numel() != 1) return invalid_argument("Loop trip count M must have one element");
      max_trip = m.get_as_int64(0);
    }
    bool cond = true;
    if (ctx.has_input(1)) {
      XONNX_ASSIGN_OR_RETURN(cond, read_condition(ctx.input(1), "Loop condition"));
    } else if (!ctx.has_input(0)) {
      return invalid_model("Loop has neither a trip count M nor a condition: it would never end");
    }
    const RunLimits& limits = ctx.limits();
    std::vector<Value> state;
    // Taken, not copied, when the Loop is their last reader, and moved through every
    // iteration: a body that appends to a sequence may then do so in place.
    for (size_t i = 0; i < carried; ++i) state.push_back(ctx.take_input_value(2 + i));
    std::vector<std::vector<Tensor>> scan_items(scans);
    int64_t scan_bytes = 0;  // what the scan outputs have collected: bounded by the memory cap
    for (int64_t iter = 0; iter < max_trip && cond; ++iter) {
      if (iter >= limits.max_loop_iterations) {
        return resource_exhausted("Loop runs more than ", limits.max_loop_iterations,
                                  " iterations (max_loop_iterations)");
      }
      std::vector<Value> in;
      in.reserve(carried + 2);
      in.push_back(Value(Tensor::scalar<int64_t>(iter)));
      in.push_back(Value(Tensor::scalar<bool>(cond)));
      for (Value& v : state) in.push_back(std::move(v));
      XONNX_ASSIGN_OR_RETURN(std::vector<Value> out, ctx.run_subgraph_consuming(*body, std::move(in)));
      XONNX_ASSIGN_OR_RETURN(cond, read_condition(out[0].tensor(), "Loop body condition output"));
      for (size_t i = 0; i < carried; ++i) state[i] = std::move(out[1 + i]);
      for (size_t k = 0; k < scans; ++k) {
        const Value& v = out[1 + carried + k];
        if (!v.is_tensor()) return invalid_model("Loop scan output ", k, " must be a tensor");
        scan_bytes += static_cast<int64_t>(v.tensor().nbytes());
        if (scan_bytes > limits.max_memory_bytes) {
          return resource_exhausted("Loop scan outputs hold more than ", describe_bytes(limits.max_memory_bytes),
                                    " after ", iter + 1, " iterations (max_memory_bytes)");
        }
        scan_items[k].push_back(v.tensor());
      }
    }
    for (size_t i = 0; i < carried && i < ctx.num_outputs(); ++i) ctx.set_output_value(i, std::move(state[i]));
    for (size_t k = 0; k < scans && carried + k < ctx.num_outputs(); ++k) {
      if (!ctx.output_wanted(carried + k)) continue;
      Tensor stacked;
      if (scan_items[k].empty()) {
        XONNX_ASSIGN_OR_RETURN(stacked, empty_scan_output(body->graph().outputs[1 + carried + k]));
      } else {
        XONNX_ASSIGN_OR_RETURN(stacked, ref::stack_along_axis(scan_items[k], 0));
      }
      ctx.set_output(carried + k, std::move(stacked));
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------- Scan
struct ScanConfig {
  size_t num_state = 0;
  size_t num_scan_in = 0;
  size_t num_scan_out = 0;
  std::vector<int64_t> in_dirs, out_dirs, in_axes, out_axes;
};

// One scan over `scan_inputs` (already without batch dimension). Returns states + scan outputs.
Result<std::vector<Value>> scan_once(KernelContext& ctx, const GraphBody& body, const ScanConfig& cfg,
                                     std::vector<Value> state, const std::vector<Tensor>& scan_inputs) {
  int64_t length = -1;
  std::vector<int64_t> axes(cfg.num_scan_in);
  for (size_t j = 0; j < cfg.num_scan_in; ++j) {
    const Tensor& x = scan_inputs[j];
    XONNX_ASSIGN_OR_RETURN(axes[j], normalize_axis(cfg.in_axes[j], static_cast<int64_t>(x.rank()), "scan_input_axes"));
    const int64_t len = x.dim(axes[j]);
    if (length >= 0 && len != length) {
      return invalid_argument("scan inputs have different sequence lengths (", length, " and ", len, ")");
    }
    length = len;
  }
  if (length < 0) length = 0;
  std::vector<std::vector<Tensor>> items(cfg.num_scan_out);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Value> in = state;
    for (size_t j = 0; j < cfg.num_scan_in; ++j) {
      const int64_t idx = cfg.in_dirs[j] == 1 ? length - 1 - t : t;
      XONNX_ASSIGN_OR_RETURN(Tensor slice, ref::take_along_axis(scan_inputs[j], axes[j], idx));
      in.push_back(Value(std::move(slice)));
    }
    XONNX_ASSIGN_OR_RETURN(std::vector<Value> out, ctx.run_subgraph(body, in));
    if (out.size() != cfg.num_state + cfg.num_scan_out) {
      return invalid_model("Scan body gives ", out.size(), " outputs; expected ", cfg.num_state + cfg.num_scan_out);
    }
    for (size_t i = 0; i < cfg.num_state; ++i) state[i] = out[i];
    for (size_t k = 0; k < cfg.num_scan_out; ++k) items[k].push_back(out[cfg.num_state + k].tensor());
  }
  std::vector<Value> result = state;
  for (size_t k = 0; k < cfg.num_scan_out; ++k) {
    if (items[k].empty()) {
      XONNX_ASSIGN_OR_RETURN(Tensor e, empty_scan_output(body.graph().outputs[cfg.num_state + k]));
      result.push_back(Value(std::move(e)));
      continue;
    }
    if (cfg.out_dirs[k] == 1) std::reverse(items[k].begin(), items[k].end());
    const int64_t rank = static_cast<int64_t>(items[k][0].rank()) + 1;
    XONNX_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(cfg.out_axes[k], rank, "scan_output_axes"));
    XONNX_ASSIGN_OR_RETURN(Tensor stacked, ref::stack_along_axis(items[k], axis));
    result.push_back(Value(std::move(stacked)));
  }
  return result;
}

Result<std::unique_ptr<Kernel>> create_scan(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::shared_ptr<GraphBody> body, init.subgraph("body"));
  XONNX_ASSIGN_OR_RETURN(int64_t m, init.require_int("num_scan_inputs"));
  const bool batched = init.since_version() == 8;  // opset 8: [batch, seq, ...] + sequence_lens
  const size_t first = batched ? 1 : 0;
  if (m < 1 || static_cast<size_t>(m) > init.num_inputs() - first) {
    return invalid_model("num_scan_inputs ", m, " does not fit ", init.num_inputs(), " inputs");
  }
  ScanConfig cfg;
  cfg.num_scan_in = static_cast<size_t>(m);
  cfg.num_state = init.num_inputs() - first - cfg.num_scan_in;
  const Graph& g = body->graph();
  if (g.inputs.size() != cfg.num_state + cfg.num_scan_in) {
    return invalid_model("Scan body takes ", g.inputs.size(), " inputs; expected ", cfg.num_state + cfg.num_scan_in);
  }
  if (g.outputs.size() < cfg.num_state) return invalid_model("Scan body gives too few outputs");
  cfg.num_scan_out = g.outputs.size() - cfg.num_state;
  const std::string dir_attr = batched ? "directions" : "scan_input_directions";
  XONNX_ASSIGN_OR_RETURN(cfg.in_dirs, init.get_ints(dir_attr, std::vector<int64_t>(cfg.num_scan_in, 0)));
  XONNX_ASSIGN_OR_RETURN(cfg.out_dirs,
                         init.get_ints("scan_output_directions", std::vector<int64_t>(cfg.num_scan_out, 0)));
  XONNX_ASSIGN_OR_RETURN(cfg.in_axes, init.get_ints("scan_input_axes", std::vector<int64_t>(cfg.num_scan_in, 0)));
  XONNX_ASSIGN_OR_RETURN(cfg.out_axes, init.get_ints("scan_output_axes", std::vector<int64_t>(cfg.num_scan_out, 0)));
  if (cfg.in_dirs.size() != cfg.num_scan_in || cfg.in_axes.size() != cfg.num_scan_in ||
      cfg.out_dirs.size() != cfg.num_scan_out || cfg.out_axes.size() != cfg.num_scan_out) {
    return invalid_model("Scan direction/axis attributes must have one entry per scan input/output");
  }
  return make_kernel([body, cfg, batched, first](KernelContext& ctx) -> Status {
    std::vector<Value> state;
    for (size_t i = 0; i < cfg.num_state; ++i) state.push_back(ctx.input_value(first + i));
    std::vector<Tensor> scan_in;
    for (size_t j = 0; j < cfg.num_scan_in; ++j) scan_in.push_back(ctx.input(first + cfg.num_state + j));
    for (const Tensor& t : scan_in) {
      if (!t.defined()) return invalid_argument("Scan inputs must be tensors");
    }
    if (!batched) {
      XONNX_ASSIGN_OR_RETURN(std::vector<Value> out, scan_once(ctx, *body, cfg, state, scan_in));
      for (size_t i = 0; i < out.size() && i < ctx.num_outputs(); ++i) ctx.set_output_value(i, std::move(out[i]));
      return Status::ok();
    }
    // Opset 8: dimension 0 is the batch; run each batch entry and stack the results.
    if (ctx.has_input(0)) {
      const Tensor& lens = ctx.input(0);
      for (int64_t b = 0; b < lens.numel(); ++b) {
        if (scan_in.empty() || lens.get_as_int64(b) != scan_in[0].dim(1)) {
          return unsupported("Scan-8 with sequence_lens shorter than the sequence");
        }
      }
    }
    const int64_t batch = scan_in[0].rank() > 0 ? scan_in[0].dim(0) : 0;
    std::vector<std::vector<Tensor>> per_output(cfg.num_state + cfg.num_scan_out);
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Value> st;
      for (const Value& v : state) {
        XONNX_ASSIGN_OR_RETURN(Tensor s, ref::take_along_axis(v.tensor(), 0, b));
        st.push_back(Value(std::move(s)));
      }
      std::vector<Tensor> in;
      for (const Tensor& t : scan_in) {
        XONNX_ASSIGN_OR_RETURN(Tensor s, ref::take_along_axis(t, 0, b));
        in.push_back(std::move(s));
      }
      XONNX_ASSIGN_OR_RETURN(std::vector<Value> out, scan_once(ctx, *body, cfg, st, in));
      for (size_t i = 0; i < out.size(); ++i) per_output[i].push_back(out[i].tensor());
    }
    for (size_t i = 0; i < per_output.size() && i < ctx.num_outputs(); ++i) {
      if (per_output[i].empty()) return unsupported("Scan-8 with an empty batch");
      XONNX_ASSIGN_OR_RETURN(Tensor stacked, ref::stack_along_axis(per_output[i], 0));
      ctx.set_output(i, std::move(stacked));
    }
    return Status::ok();
  });
}

}  // namespace

void register_control_flow_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "If", 1, kLatestVersion, create_if);
  XONNX_REGISTER(registry, "", "Loop", 1, kLatestVersion, create_loop);
  XONNX_REGISTER(registry, "", "Scan", 8, kLatestVersion, create_scan);
}

}  // namespace xonnx
