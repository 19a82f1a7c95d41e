#!/usr/bin/env python3
"""Cuts an ONNX model into prefixes, to find which part of it one engine loses time in.

    bench/prefix_models.py MODEL OUT_DIR [--at TENSOR]... [--count N]
    bench/compare_ort.sh --threads 1 --rounds 3 OUT_DIR/prefix_*.onnx

Per-node profiles of two engines do not compare (each adds its own time per node, and fuses
different nodes), but whole runs do: prefix k runs the model from its inputs to one tensor, so
the difference between consecutive prefixes is what that stretch costs in each engine.

A prefix keeps the nodes its cut tensor needs and ends in a small reduction (GlobalAveragePool
for a 4-D tensor, else ReduceMean over the last axis), so that neither engine pays for writing
out a large output in its own layout. Cut points: the tensors named with --at, or else --count
(default 8) of the chain points of the top-level graph, evenly spaced: positions in node order
where one float tensor alone is live (not counting ones under 1/8 of its size, such as an
attention mask), residual joins first: the block boundaries of a CNN, the layer boundaries of a
transformer. The last prefix is the whole model, copied. Uses Debian's python3-onnx.
"""
import argparse
import copy
import os
import sys

import onnx
from onnx import TensorProto, helper


def opset_of(model):
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def value_types(model):
    """Tensor type of every value the graph (or shape inference) declares, by name."""
    graph = model.graph
    return {v.name: v.type.tensor_type for v in list(graph.value_info) + list(graph.input) + list(graph.output)}


def relative_size(t):
    """Element count of a tensor of known rank, a symbolic dimension (batch, sequence) counted
    as 1: enough to tell a mask [batch, 1, 1, seq] from hidden states [batch, seq, 768]."""
    if not t.HasField("shape") or not all(d.HasField("dim_value") or d.HasField("dim_param") for d in t.shape.dim):
        return None
    n = 1
    for d in t.shape.dim:
        n *= d.dim_value if d.HasField("dim_value") else 1
    return n


def chain_points(model):
    """Tensors that are alone live after their producer, in node order: block boundaries.

    Live tensors under 1/8 of the candidate's size (an attention mask, a shape) do not count.
    Where residual joins exist (a tensor read twice or made by an Add), only those are kept."""
    graph = model.graph
    constants = {t.name for t in graph.initializer}
    constants.update(o for n in graph.node if n.op_type == "Constant" for o in n.output)
    last_use, readers = {}, {}
    for i, node in enumerate(graph.node):
        for name in node.input:
            last_use[name] = i
            readers[name] = readers.get(name, 0) + 1
    outputs = {o.name for o in graph.output}
    types = value_types(model)
    sizes = {name: relative_size(t) for name, t in types.items()}
    float_like = {name for name, t in types.items() if t.elem_type in (TensorProto.FLOAT, TensorProto.FLOAT16)}
    live = {i.name for i in graph.input if i.name not in constants}
    points, joins = [], []
    for i, node in enumerate(graph.node):
        live.update(o for o in node.output if o and o not in constants)
        live = {n for n in live if last_use.get(n, -1) > i or n in outputs}
        if not node.output or node.output[0] not in live or node.output[0] in outputs:
            continue
        cut = node.output[0]
        if float_like and cut not in float_like:
            continue
        size = sizes.get(cut)
        others = [n for n in live if n != cut and not (size and sizes.get(n) and sizes[n] * 8 < size)]
        if others:
            continue
        points.append(cut)
        if node.op_type == "Add" or readers.get(cut, 0) > 1:
            joins.append(cut)
    return joins or points


def rank_of(model, name):
    t = value_types(model).get(name)
    return len(t.shape.dim) if t is not None and t.HasField("shape") else None


def prefix(model, cut, index):
    m = copy.deepcopy(model)
    g = m.graph
    needed, keep = {cut}, []
    for node in reversed(g.node):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(node.input)
    if not keep:
        sys.exit("prefix_models.py: no node produces %s" % cut)
    keep.reverse()
    del g.node[:]
    g.node.extend(keep)
    out = "prefix_%02d_output" % index
    if rank_of(model, cut) == 4:
        g.node.append(helper.make_node("GlobalAveragePool", [cut], [out]))
    elif opset_of(model) >= 18:
        axes = "prefix_%02d_axes" % index
        g.initializer.append(helper.make_tensor(axes, TensorProto.INT64, [1], [-1]))
        g.node.append(helper.make_node("ReduceMean", [cut, axes], [out]))
    else:
        g.node.append(helper.make_node("ReduceMean", [cut], [out], axes=[-1]))
    del g.output[:]
    g.output.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, None))
    used = {n for node in g.node for n in node.input}
    kept = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    inputs = [i for i in g.input if i.name in used]
    del g.input[:]
    g.input.extend(inputs)
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out_dir")
    ap.add_argument("--at", action="append", default=[], help="a tensor to cut at (repeatable)")
    ap.add_argument("--count", type=int, default=8, help="chain points to cut at without --at")
    args = ap.parse_args()
    original = onnx.load(args.model)
    try:
        model = onnx.shape_inference.infer_shapes(original)
    except Exception:  # ranks then stay unknown: ReduceMean over the last axis everywhere
        model = original
    cuts = args.at
    if not cuts:
        points = chain_points(model)
        if not points:
            sys.exit("prefix_models.py: %s has no point where one float tensor alone is live "
                     "(a mask or a shape kept across layers); name the cut tensors with --at" % args.model)
        n = min(max(args.count, 1), len(points))
        cuts = [points[(k + 1) * len(points) // (n + 1)] for k in range(n)]
    os.makedirs(args.out_dir, exist_ok=True)
    for k, cut in enumerate(cuts):
        path = os.path.join(args.out_dir, "prefix_%02d.onnx" % k)
        onnx.save(prefix(model, cut, k), path)
        print("%s\t%s" % (path, cut))
    whole = os.path.join(args.out_dir, "prefix_%02d.onnx" % len(cuts))
    onnx.save(original, whole)
    print("%s\t(the whole model)" % whole)


if __name__ == "__main__":
    main()
