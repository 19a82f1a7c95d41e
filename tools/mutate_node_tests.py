"""Semantic fuzzing: mutates the ONNX backend node tests where byte-level fuzzing rarely reaches
(values a valid file may hold but no test uses) and replays each mutant through the fuzz
targets of a sanitizer build.

    /usr/bin/python3 tools/mutate_node_tests.py NODE_DIR OUT_DIR [--seed N] [--every K]
                                                [--replay BIN] [--target T] [--jobs J]

Per node test (NODE_DIR/<case>/model.onnx and its test_data_set_0 inputs), every top-level
node's attributes get extreme values (0, -1, 2^31 - 1, 2^32, 2^62, 2^63 - 1, -2^63, NaN, Inf,
empty, one entry more or fewer, absent); each input becomes a constant holding its test data,
and integer ones the same with one element replaced by an extreme value or one entry more or
fewer (a size, an index, a split); each declared input shape gets another rank, zeros, its dims
reversed or dims of 2^31 - 1 and 2^40, and other element types; each input of rank 2 or more
becomes a constant with no elements whose last dim is 2^40; each node input is left out, one
is added, and the model imports another opset version. `--every K` keeps every K-th mutant (a
sample; the seed picks the extreme values), written to OUT_DIR as <case>.<mutation>.onnx.
NODE_DIR may be any folder of <name>/model.onnx (+ test_data_set_0): tests/models with
--max-model-bytes 1000000 mutates the multi-node models, whose passes node tests do not reach.

With --replay (scripts/fuzz-mutations.sh passes build/sanitize/bin/xonnx_fuzz_replay), the
mutants then run through TARGET (default session_run: session creation and a run on
zero-filled inputs) in batches, J at a time; a crash, sanitizer report or hang (over 60 s plus
2 s a file) is charged to the file the replay tool named last, which is copied with its log to
OUT_DIR/failures/. Exit status 1 when any failed: fix the bug, then copy the file to
tests/bad_models/ (tests/bad_models/README.md).
"""
import argparse
import copy
import glob
import os
import random
import sys

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

from replay_mutants import fresh_out_dir, replay_all

INT_EXTREMES = [0, -1, 1, 2, 3, -2, 7, 65536, 2**31 - 1, -2**31, 2**31, 2**32, 2**62, 2**63 - 1, -2**63]
OPSET_VERSIONS = [1, 6, 7, 9, 10, 11, 13, 16, 18, 21, 24, 30]
FLOAT_EXTREMES = [0.0, -1.0, float("nan"), float("inf"), -float("inf"), 1e30, 1e-30]
ELEM_TYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.INT64,
              TensorProto.INT32, TensorProto.INT8, TensorProto.UINT8, TensorProto.BOOL, TensorProto.STRING]


def empty_list_attribute(name, kind):
    a = AttributeProto()
    a.name = name
    a.type = kind
    return a


def attribute_variants(a, rng):
    """(tag, attribute) pairs: `a` with another value."""
    if a.type == AttributeProto.INT:
        for v in rng.sample(INT_EXTREMES, 5):
            yield "i%d" % v, helper.make_attribute(a.name, v)
    elif a.type == AttributeProto.INTS:
        vals = list(a.ints)
        yield "empty", empty_list_attribute(a.name, AttributeProto.INTS)
        yield "longer", helper.make_attribute(a.name, vals + [1])
        if vals:
            yield "shorter", helper.make_attribute(a.name, vals[:-1])
            for v in rng.sample(INT_EXTREMES, 4):
                j = rng.randrange(len(vals))
                yield "e%d_%d" % (j, v), helper.make_attribute(a.name, vals[:j] + [v] + vals[j + 1:])
    elif a.type == AttributeProto.FLOAT:
        for v in rng.sample(FLOAT_EXTREMES, 3):
            yield "f%s" % v, helper.make_attribute(a.name, v)
    elif a.type == AttributeProto.FLOATS:
        vals = list(a.floats)
        yield "empty", empty_list_attribute(a.name, AttributeProto.FLOATS)
        if vals:
            yield "nan", helper.make_attribute(a.name, [float("nan")] + vals[1:])
    elif a.type == AttributeProto.STRING:
        yield "bogus", helper.make_attribute(a.name, b"bogus")
        yield "empty", helper.make_attribute(a.name, b"")
    elif a.type == AttributeProto.TENSOR:
        try:
            arr = numpy_helper.to_array(a.t)
        except (KeyError, ValueError, TypeError):  # an element type newer than onnx 1.12
            arr = np.zeros(0)
        if arr.dtype.kind in "iu" and arr.size:
            for v in rng.sample(INT_EXTREMES, 3):
                b = arr.astype(np.int64)
                b.flat[rng.randrange(b.size)] = v
                yield "t%d" % v, helper.make_attribute(a.name, numpy_helper.from_array(b.astype(arr.dtype)))
        no_data = copy.deepcopy(a)
        no_data.t.ClearField("raw_data")
        yield "nodata", no_data


def constant_variants(arr, rng):
    """(tag, array) pairs for an input made constant: its test data, then mutated."""
    yield "const", arr
    if arr.dtype.kind in "iu" and arr.size:
        for v in rng.sample(INT_EXTREMES, 6):
            b = arr.astype(np.int64)
            b.flat[rng.randrange(b.size)] = v
            yield "v%d" % v, b.astype(arr.dtype)
        if arr.ndim == 1:
            yield "short", arr[:-1]
            yield "long", np.concatenate([arr, arr[:1]])
    elif arr.dtype.kind == "f" and arr.size:
        b = arr.copy()
        b.flat[0] = np.nan
        yield "nan", b


def mutants(m, case, inputs, rng):
    """(name, edit) pairs of one node test: edit(copy) turns a copy of m into the mutant (copies
    are made only for the mutants kept)."""
    for ni, node in enumerate(m.graph.node):
        for ai, a in enumerate(node.attribute):
            if a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
                continue
            for tag, new in attribute_variants(a, rng):
                yield "%s.a%d.%s.%s" % (case, ni, a.name, tag), \
                    lambda c, ni=ni, ai=ai, new=new: c.graph.node[ni].attribute[ai].CopyFrom(new)
            yield "%s.a%d.%s.missing" % (case, ni, a.name), \
                lambda c, ni=ni, ai=ai: c.graph.node[ni].attribute.__delitem__(ai)
        for ii in range(len(node.input)):  # an input left out (optional or not)
            yield "%s.n%d.in%d" % (case, ni, ii), lambda c, ni=ni, ii=ii: c.graph.node[ni].input.__setitem__(ii, "")
        if node.input:  # one input more than the node has
            yield "%s.n%d.extra" % (case, ni), lambda c, ni=ni: c.graph.node[ni].input.append(c.graph.node[ni].input[0])
    for oi, imp in enumerate(m.opset_import):  # another version of the domain's schemas
        for v in rng.sample(OPSET_VERSIONS, 2):
            if v != imp.version:
                yield "%s.o%d.%d" % (case, oi, v), lambda c, oi=oi, v=v: setattr(c.opset_import[oi], "version", v)

    def make_constant(c, gi, tensor):
        c.graph.initializer.append(tensor)
        del c.graph.input[gi]

    for gi, inp in enumerate(m.graph.input):
        arr = inputs.get(inp.name)
        if arr is None or arr.size > 4096:
            continue
        for tag, value in constant_variants(arr, rng):
            yield "%s.c%d.%s" % (case, gi, tag), \
                lambda c, gi=gi, t=numpy_helper.from_array(value, inp.name): make_constant(c, gi, t)

    def set_dims(c, gi, shape):
        t = c.graph.input[gi].type.tensor_type
        t.shape.ClearField("dim")
        for v in shape:
            t.shape.dim.add().dim_value = v

    for gi, inp in enumerate(m.graph.input):
        tt = inp.type.tensor_type
        if not tt.HasField("shape"):
            continue
        dims = [d.dim_value for d in tt.shape.dim]
        huge = [[2**40] + dims[1:], [2**31 - 1] * len(dims)] if dims else []
        for si, shape in enumerate([dims[:-1], dims + [2], [0] * len(dims), [1] * len(dims), dims[::-1]] + huge):
            yield "%s.s%d.%d" % (case, gi, si), lambda c, gi=gi, shape=shape: set_dims(c, gi, shape)
        if len(dims) >= 2:  # a constant with no elements whose last dim is huge: [0, ..., 2^40]
            empty = TensorProto(name=inp.name, data_type=tt.elem_type, dims=[0] + dims[1:-1] + [2**40])
            yield "%s.e%d" % (case, gi), lambda c, gi=gi, t=empty: make_constant(c, gi, t)
        for et in rng.sample(ELEM_TYPES, 3):
            if et != tt.elem_type:
                yield "%s.t%d.%d" % (case, gi, et), \
                    lambda c, gi=gi, et=et: setattr(c.graph.input[gi].type.tensor_type, "elem_type", et)


def test_inputs(case_dir, m):
    """The first test data set's inputs by graph input name (as numpy arrays); inputs numpy or
    this onnx cannot read (sequences, element types newer than onnx 1.12) are left out."""
    out = {}
    paths = sorted(glob.glob(os.path.join(case_dir, "test_data_set_0", "input_*.pb")))
    for inp, path in zip(m.graph.input, paths):
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        try:
            out[inp.name] = numpy_helper.to_array(t)
        except (KeyError, ValueError, TypeError):
            pass
    return out


def generate(node_dir, out_dir, seed, every, max_model_bytes):
    rng = random.Random(seed)
    os.makedirs(out_dir, exist_ok=True)
    count = kept = 0
    skipped = []
    for case_dir in sorted(glob.glob(os.path.join(node_dir, "*"))):
        path = os.path.join(case_dir, "model.onnx")
        if not os.path.exists(path) or os.path.getsize(path) > max_model_bytes:
            continue
        case = os.path.basename(case_dir)
        try:
            m = onnx.load(path)
            inputs = test_inputs(case_dir, m)
            for name, edit in mutants(m, case, inputs, rng):
                count += 1
                if count % every:
                    continue
                m2 = copy.deepcopy(m)
                edit(m2)
                with open(os.path.join(out_dir, name + ".onnx"), "wb") as f:
                    f.write(m2.SerializeToString())
                kept += 1
        except Exception:  # a case numpy or this onnx cannot read (sequence inputs, float8)
            skipped.append(case)
    print("[mutations] %d of %d mutants written to %s%s" %
          (kept, count, out_dir, "; %d cases the onnx module cannot read skipped" % len(skipped) if skipped else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("node_dir")
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--replay")
    ap.add_argument("--target", default="session_run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--max-model-bytes", type=int, default=sys.maxsize, help="skip larger models (each mutant copies one)")
    args = ap.parse_args()
    fresh_out_dir(args.out_dir, ".onnx")
    generate(args.node_dir, args.out_dir, args.seed, args.every, args.max_model_bytes)
    if args.replay and replay_all(args.replay, args.target, args.out_dir, args.jobs, ".onnx"):
        sys.exit(1)


if __name__ == "__main__":
    main()
