"""Writes the hostile models of tests/bad_models/ that are made with the onnx Python module
(Debian's python3-onnx; no onnx.checker: the files are invalid on purpose).

    /usr/bin/python3 tools/bad_models.py [OUT_DIR]      (default: tests/bad_models)

Each must end in a clean error (or the correct result) through every fuzz target
(`xonnx_fuzz_replay all FILE`, the bad-models ctest) and when loaded from its file
(`xonnx bench FILE --iters 1`); tests/bad_models/README.md lists what each exercises and the
error a release build gives.
"""
import os
import sys

from onnx import TensorProto, helper, numpy_helper  # noqa: F401  (numpy_helper: numpy present)

OPSET = [helper.make_opsetid("", 17)]


def model(nodes, inputs, outputs, initializers=(), sparse=(), functions=(), opsets=OPSET):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers),
                          sparse_initializer=list(sparse))
    m = helper.make_model(g, opset_imports=list(opsets), functions=list(functions))
    m.ir_version = 8
    return m


def f32(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def external(name, dims, location):
    """A float tensor whose bytes are said to be in `location`."""
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    kv = t.external_data.add()
    kv.key = "location"
    kv.value = location
    return t


def sparse(name, dense_dims, values, indices, index_dims, index_type=TensorProto.INT64):
    v = helper.make_tensor(name, TensorProto.FLOAT, [len(values)], values)
    i = helper.make_tensor(name + "_indices", index_type, index_dims, indices)
    return helper.make_sparse_tensor(v, i, dense_dims)


def relu_of(w, dims=(2,)):
    """y = Relu(w): w comes from an initializer or node the caller adds."""
    return [helper.make_node("Relu", [w], ["y"], name="relu")], [], [f32("y", list(dims))]


def build():
    out = {}

    # ---- external-data traversal in the places other than a top-level initializer
    nodes, ins, outs = relu_of("w")
    out["external_dotdot_in_sparse.onnx"] = model(
        nodes, ins, outs,
        sparse=[helper.make_sparse_tensor(external("w", [2], "../../canary.bin"),
                                          helper.make_tensor("w_i", TensorProto.INT64, [2], [0, 1]), [2])])
    branch = helper.make_graph([], "then", [], [f32("v", [2])], initializer=[external("v", [2], "../../canary.bin")])
    cond = helper.make_tensor("c", TensorProto.BOOL, [], [True])
    out["external_dotdot_in_if_branch.onnx"] = model(
        [helper.make_node("If", ["c"], ["w"], name="if_w", then_branch=branch, else_branch=branch)] + nodes,
        ins, outs, initializers=[cond])
    const = helper.make_node("Constant", [], ["w"], name="const_w", value=external("w", [2], "/proc/self/environ"))
    out["external_proc_in_constant.onnx"] = model([const] + nodes, ins, outs)
    fconst = helper.make_node("Constant", [], ["out"], value=external("out", [2], "w.bin\0/../../canary.bin"))
    func = helper.make_function("local", "MakeW", [], ["out"], [fconst], OPSET)
    out["external_nul_in_function.onnx"] = model(
        [helper.make_node("MakeW", [], ["w"], name="call", domain="local")] + nodes, ins, outs,
        functions=[func], opsets=OPSET + [helper.make_opsetid("local", 1)])

    # ---- sparse tensors (initializers and a Constant's sparse_value)
    out["sparse_index_out_of_range.onnx"] = model(nodes, ins, outs, sparse=[sparse("w", [2], [1.0], [7], [1])])
    out["sparse_coordinate_out_of_range.onnx"] = model(
        *relu_of("w", (2, 3)), sparse=[sparse("w", [2, 3], [1.0], [0, 9], [1, 2])])
    out["sparse_indices_count_mismatch.onnx"] = model(
        *relu_of("w", (4,)), sparse=[sparse("w", [4], [1.0, 2.0], [1], [1])])
    out["sparse_indices_int32.onnx"] = model(nodes, ins, outs, sparse=[sparse("w", [2], [1.0], [1], [1],
                                                                              TensorProto.INT32)])
    out["sparse_dense_shape_overflows.onnx"] = model(
        *relu_of("w", (2,)), sparse=[sparse("w", [1 << 62, 4], [1.0], [5], [1])])
    sconst = helper.make_node("Constant", [], ["w"], name="const_w",
                              sparse_value=sparse("w", [2], [1.0], [-1], [1]))
    out["sparse_constant_negative_index.onnx"] = model([sconst] + nodes, ins, outs)

    # ---- data-dependent indices: a run-time Gather index past the end
    idx = helper.make_tensor("i", TensorProto.INT64, [1], [3])
    out["gather_index_out_of_range.onnx"] = model(
        [helper.make_node("Gather", ["x", "i"], ["y"], name="gather")], [f32("x", [3, 2])], [f32("y", [1, 2])],
        initializers=[idx])

    # ---- division by zero and INT_MIN / -1: both operands are initializers, so the kernel sees
    # these values whatever inputs a harness feeds (the session_run target feeds zeros)
    def int_binary(op, divisor):
        x = helper.make_tensor("x", TensorProto.INT32, [2], [7, -2**31])
        d = helper.make_tensor("d", TensorProto.INT32, [2], divisor)
        return model([helper.make_node(op, ["x", "d"], ["y"], name=op.lower())], [],
                     [helper.make_tensor_value_info("y", TensorProto.INT32, [2])], initializers=[x, d])
    out["div_int_by_zero.onnx"] = int_binary("Div", [0, -1])
    out["mod_int_by_zero.onnx"] = int_binary("Mod", [0, -1])

    # ---- attribute ranges
    out["softmax_axis_out_of_range.onnx"] = model(
        [helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=5)], [f32("x", [2, 3])], [f32("y", [2, 3])])
    out["concat_axis_out_of_range.onnx"] = model(
        [helper.make_node("Concat", ["x", "x"], ["y"], name="concat", axis=-3)], [f32("x", [2, 3])], [f32("y", [4, 3])])

    # ---- quantization parameters: a zero scale and a zero point of the wrong type
    def quantize(scale, zp):
        return model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], name="q")], [f32("x", [4])],
                     [helper.make_tensor_value_info("y", zp.data_type, [4])], initializers=[scale, zp])
    out["quantize_zero_scale.onnx"] = quantize(helper.make_tensor("s", TensorProto.FLOAT, [], [0.0]),
                                               helper.make_tensor("z", TensorProto.UINT8, [], [128]))
    out["quantize_nan_scale.onnx"] = quantize(helper.make_tensor("s", TensorProto.FLOAT, [], [float("nan")]),
                                              helper.make_tensor("z", TensorProto.UINT8, [], [128]))
    out["quantize_zero_point_float.onnx"] = quantize(helper.make_tensor("s", TensorProto.FLOAT, [], [0.5]),
                                                     helper.make_tensor("z", TensorProto.FLOAT, [], [1.0]))

    # ---- dtypes: an unknown element type in a Cast attribute and in an initializer
    out["cast_to_unknown_type.onnx"] = model(
        [helper.make_node("Cast", ["x"], ["y"], name="cast", to=99)], [f32("x", [2])], [f32("y", [2])])
    w = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    w.data_type = 99
    out["initializer_unknown_type.onnx"] = model(nodes, ins, outs, initializers=[w])

    # ---- sizes in shape inference that overflow int64 (signed overflow is undefined behaviour)
    big = 2**63 - 1
    def ints(name, values):
        return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)
    out["shape_inference_pad_overflow.onnx"] = model(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")], [f32("x", [4])], [f32("y", None)],
        initializers=[ints("pads", [big, big])])
    out["shape_inference_tile_overflow.onnx"] = model(
        [helper.make_node("Tile", ["x", "reps"], ["y"], name="tile")], [f32("x", [4])], [f32("y", None)],
        initializers=[ints("reps", [2**62])])
    out["shape_inference_conv_dilation_overflow.onnx"] = model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv", dilations=[2**62])], [f32("x", [1, 1, 8])],
        [f32("y", None)], initializers=[helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 3], [1.0] * 3)])
    out["shape_inference_pool_pads_overflow.onnx"] = model(
        [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2], pads=[big, big])],
        [f32("x", [1, 1, 8])], [f32("y", None)])
    out["shape_inference_slice_dim_int64_max.onnx"] = model(
        [helper.make_node("Slice", ["x", "starts", "ends"], ["y"], name="slice")], [f32("x", [big])],
        [f32("y", None)], initializers=[ints("starts", [0]), ints("ends", [-1])])
    out["shape_inference_split_dim_int64_max.onnx"] = model(
        [helper.make_node("Split", ["x"], ["a", "b"], name="split", num_outputs=2)], [f32("x", [big])],
        [f32("a", None), f32("b", None)], opsets=[helper.make_opsetid("", 18)])
    # ---- windows at the attribute limit (2^31 - 1): an output over the memory cap (its NHWC twin's
    # NCHW result too), and a kernel of 2^31 taps, nearly all of them padding (was a 7 s loop)
    lim = 2**31 - 1
    out["pool_pads_at_limit.onnx"] = model(
        [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2], pads=[lim, lim])],
        [f32("x", [1, 1, 8])], [f32("y", None)])
    out["avgpool_kernel_at_limit.onnx"] = model(
        [helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[lim], strides=[lim], pads=[lim, lim],
                          ceil_mode=1)], [f32("x", [1, 1, 8])], [f32("y", None)])
    # a 65536 x 65536 window (2^32 taps per output, nearly all padding): the own NHWC pool held a
    # row's window pointers, 550 GB; it now leaves such windows to XNNPACK or the reference
    out["maxpool_window_of_2e32_taps.onnx"] = model(
        [helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[65536, 65536], pads=[32768] * 4)],
        [f32("x", [1, 8, 16, 16])], [f32("y", None)])
    out["shape_inference_flatten_overflow.onnx"] = model(
        [helper.make_node("Flatten", ["x"], ["y"], name="flatten", axis=0)], [f32("x", [2**32, 2**32])],
        [f32("y", None)])
    # ---- scratch the size of an empty tensor's dims (2026-12-06 evening): no elements in, none
    # out, but a reference kernel's work array sized by the dims' product
    out["det_of_empty_65536_square.onnx"] = model(
        [helper.make_node("Det", ["x"], ["y"], name="det")], [],
        [f32("y", None)], initializers=[helper.make_tensor("x", TensorProto.FLOAT, [0, 65536, 65536], [])])
    empty_qkv = [helper.make_tensor(n, TensorProto.FLOAT, [1, 1, 2**20, 0], []) for n in ("q", "k", "v")]
    out["flex_attention_scores_of_2e40.onnx"] = model(
        [helper.make_node("FlexAttention", ["q", "k", "v"], ["y"], name="flex", domain="ai.onnx.preview")], [],
        [f32("y", None)], initializers=empty_qkv,
        opsets=OPSET + [helper.make_opsetid("ai.onnx.preview", 1)])
    # a MatMul's output split in sizes that sum past 2^63: the sliced-projection pass summed them
    # unchecked (found mutating tests/models/gpt_decoder)
    out["split_projection_sizes_past_int64.onnx"] = model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="proj"),
         helper.make_node("Split", ["y", "sizes"], ["a", "b"], name="split", axis=1)],
        [f32("x", [1, 4])], [f32("a", None), f32("b", None)],
        initializers=[helper.make_tensor("w", TensorProto.FLOAT, [4, 6], [0.5] * 24),
                      helper.make_tensor("sizes", TensorProto.INT64, [2], [2**63 - 1, 7])])
    # 3x3 convolutions over a declared [2^31 - 1, 1, 2^31 - 1, 2^31 - 1] input: the Winograd
    # choice made at session creation from the declared shape multiplied its tiles past int64
    # (found mutating tests/models/digits_cnn)
    big = 2**31 - 1
    out["winograd_choice_declared_2e31_map.onnx"] = model(
        [helper.make_node("Conv", ["x", "w1"], ["h"], name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["h"], ["r"], name="relu"),
         helper.make_node("Conv", ["r", "w2"], ["y"], name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        [f32("x", [big, 1, big, big])], [f32("y", None)],
        initializers=[helper.make_tensor("w1", TensorProto.FLOAT, [16, 1, 3, 3], [0.1] * 144),
                      helper.make_tensor("w2", TensorProto.FLOAT, [16, 16, 3, 3], [0.01] * 2304)])
    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "tests", "bad_models")
    for name, m in sorted(build().items()):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(m.SerializeToString())
        print(name)


if __name__ == "__main__":
    main()
