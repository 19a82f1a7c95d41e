#!/usr/bin/python3
"""Generate the PyTorch-exported ONNX test fixtures in tests/models/.

Layout (ONNX backend-test layout):
  <out>/<name>/model.onnx
  <out>/<name>/test_data_set_K/input_I.pb   (onnx TensorProto, graph-input order)
  <out>/<name>/test_data_set_K/output_I.pb  (torch's outputs, graph-output order)

Usage (needs Debian's python: torch 1.13, torchvision 0.14, onnx 1.12):
  /usr/bin/python3 tools/export_fixtures.py                 # regenerate tests/models exactly
  /usr/bin/python3 tools/export_fixtures.py --only mlp,gpt_decoder
  /usr/bin/python3 tools/export_fixtures.py --slow OUTDIR   # full-size benchmark variants
  /usr/bin/python3 tools/export_fixtures.py --list

Weights are random (torch.manual_seed(0) before each fixture); nothing is
downloaded.  Expected outputs are computed by the torch module in eval mode
under torch.no_grad() on the same inputs.
"""
import argparse
import collections
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
import torch
import torch.nn as nn
import torchvision
from torchvision.models import mobilenet_v2, mobilenet_v3_small, squeezenet1_1
from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_models as fm  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "tests", "models")

FIXTURES = collections.OrderedDict()


def fixture(name, slow=False):
    def deco(fn):
        FIXTURES[(name, slow)] = fn
        return fn
    return deco


# ------------------------------------------------------------------ helpers
def flatten(out):
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for o in out:
        res += flatten(o)
    return res


def op_histogram(model):
    """Count ops in the main graph, all nested subgraphs and local functions."""
    hist = collections.Counter()

    def walk(nodes):
        for n in nodes:
            hist[n.op_type if n.domain in ("", "ai.onnx") else n.domain + "::" + n.op_type] += 1
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g.node)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        walk(g.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
    return hist


def export_fixture(outdir, name, model, datasets, input_names, output_names,
                   opset=17, dynamic_axes=None, do_constant_folding=True,
                   training=torch.onnx.TrainingMode.EVAL, export_model=None,
                   check_functions=False, noise=0.0, **export_kwargs):
    """Export `model` (or `export_model`, e.g. a scripted version) and write
    one test_data_set per entry of `datasets` (each a tuple of tensors)."""
    d = os.path.join(outdir, name)
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)
    path = os.path.join(d, "model.onnx")
    model.eval()
    sg = torch.Generator()
    sg.manual_seed(4321)
    fm.break_symmetry(model, sg, noise)  # shared with export_model (same parameters)
    em = export_model if export_model is not None else model
    em.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(em, tuple(datasets[0]), path, opset_version=opset,
                          input_names=input_names, output_names=output_names,
                          dynamic_axes=dynamic_axes,
                          do_constant_folding=do_constant_folding,
                          training=training, **export_kwargs)
    m = onnx.load(path)
    if len(m.functions):
        canonicalize_functions(m)
        onnx.save(m, path)
    status = "ok"
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001
        status = "checker FAILED: %s" % str(e).splitlines()[0]
    g_in = [i.name for i in m.graph.input]
    g_out = [o.name for o in m.graph.output]
    assert g_in == list(input_names), (name, g_in, input_names)
    assert g_out == list(output_names), (name, g_out, output_names)
    if check_functions:
        assert len(m.functions) > 0, "%s: expected model-local functions" % name

    ostats = []
    for k, ds in enumerate(datasets):
        dd = os.path.join(d, "test_data_set_%d" % k)
        os.makedirs(dd)
        with torch.no_grad():
            outs = flatten(model(*ds))
        ostats.append("%.3g/%.3g" % (outs[0].abs().mean().item(), outs[0].std().item()))
        assert all(torch.isfinite(o).all() for o in outs), name
        assert len(outs) == len(g_out), (name, len(outs), len(g_out))
        for i, (n, t) in enumerate(zip(g_in, ds)):
            write_pb(os.path.join(dd, "input_%d.pb" % i), t, n)
        for i, (n, t) in enumerate(zip(g_out, outs)):
            write_pb(os.path.join(dd, "output_%d.pb" % i), t, n)

    hist = op_histogram(m)
    size = dir_size(d)
    info = dict(name=name, opset=opset, size=size, model_size=os.path.getsize(path),
                nodes=sum(hist.values()), top_nodes=len(m.graph.node), hist=hist,
                functions=len(m.functions), datasets=len(datasets), status=status,
                shapes=[[tuple(t.shape) for t in ds] for ds in datasets], ostats=ostats)
    print_info(info)
    return info


def canonicalize_functions(m):
    """torch picks which module instance becomes a local function's body in a
    run-dependent order, so the value names inside FunctionProtos (e.g.
    'blocks.0.fc1.bias' vs 'blocks.1.fc1.bias') vary between runs.  Rename
    them to in_K / out_K / t_K (order of appearance) and sort the functions,
    which makes the file byte-for-byte reproducible without changing meaning."""
    for f in m.functions:
        ren = {}
        for k, n in enumerate(f.input):
            ren[n] = "in_%d" % k
        for k, n in enumerate(f.output):
            ren[n] = "out_%d" % k
        cnt = 0
        for node in f.node:
            for n in node.output:
                if n and n not in ren:
                    ren[n] = "t_%d" % cnt
                    cnt += 1
        f.input[:] = [ren[n] for n in f.input]
        f.output[:] = [ren[n] for n in f.output]
        for node in f.node:
            node.input[:] = [ren.get(n, n) for n in node.input]
            node.output[:] = [ren.get(n, n) for n in node.output]
    funcs = sorted(m.functions, key=lambda f: (f.domain, f.name))
    copies = [onnx.FunctionProto() for _ in funcs]
    for c, f in zip(copies, funcs):
        c.CopyFrom(f)
    del m.functions[:]
    m.functions.extend(copies)


def write_pb(path, t, name):
    arr = t.detach().cpu().numpy()
    tp = numpy_helper.from_array(np.ascontiguousarray(arr), name)
    with open(path, "wb") as f:
        f.write(tp.SerializeToString())


def dir_size(d):
    tot = 0
    for root, _, files in os.walk(d):
        for f in files:
            tot += os.path.getsize(os.path.join(root, f))
    return tot


def print_info(info):
    top = ", ".join("%s:%d" % kv for kv in info["hist"].most_common(8))
    print("%-22s opset %2d  %8.1f KB  nodes %4d (top-level %4d, functions %d)  sets %d  %s"
          % (info["name"], info["opset"], info["size"] / 1024.0, info["nodes"],
             info["top_nodes"], info["functions"], info["datasets"], info["status"]))
    print("    inputs %s  output0 mean|x|/std %s" % (info["shapes"], info["ostats"]))
    print("    ops: %s" % top)
    sys.stdout.flush()


def seed():
    torch.manual_seed(0)
    g = torch.Generator()
    g.manual_seed(1234)
    return g


def img(g, n=1, hw=96):
    return torch.randn(n, 3, hw, hw, generator=g)


# ------------------------------------------------------------ fixtures
@fixture("mlp")
def mlp(out):
    g = seed()
    m = fm.MLP()
    ds = [(torch.randn(2, 16, generator=g),), (torch.randn(5, 16, generator=g),)]
    return export_fixture(out, "mlp", m, ds, ["x"], ["y"],
                          dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})


def _cnn(out, name, m, x, g):
    fm.randomize_batchnorm(m, g)
    return export_fixture(out, name, m, [(x,)], ["input"], ["logits"])


@fixture("mobilenet_v2")
def mobilenet_v2_small(out):
    g = seed()
    m = mobilenet_v2(weights=None, width_mult=0.35, num_classes=100)
    return _cnn(out, "mobilenet_v2", m, img(g, 1, 96), g)


@fixture("mobilenet_v2", slow=True)
def mobilenet_v2_full(out):
    g = seed()
    return _cnn(out, "mobilenet_v2", mobilenet_v2(weights=None), img(g, 1, 224), g)


@fixture("resnet18")
def resnet18_small(out):
    g = seed()
    m = fm.NarrowResNet((2, 2, 2, 2), widths=(16, 32, 64, 128), num_classes=100)
    return _cnn(out, "resnet18", m, img(g, 1, 64), g)


@fixture("resnet18", slow=True)
def resnet18_full(out):
    g = seed()
    return _cnn(out, "resnet18", torchvision.models.resnet18(weights=None), img(g, 1, 224), g)


@fixture("resnet18_train_bn")
def resnet18_train_bn(out):
    g = seed()
    m = fm.NarrowResNet((2, 2, 2, 2), widths=(16, 32, 64, 128), num_classes=100)
    fm.randomize_batchnorm(m, g)
    ds = [(img(g, 1, 64),), (img(g, 3, 64),)]
    return export_fixture(out, "resnet18_train_bn", m, ds, ["input"], ["logits"],
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False)


@fixture("resnet18_train_bn", slow=True)
def resnet18_train_bn_full(out):
    # torchvision resnet18 exported with its BatchNorms kept (TrainingMode.PRESERVE, no folding):
    # session creation must fold them as `xonnx convert` does (raw vs converted, issue 18).
    g = seed()
    m = torchvision.models.resnet18(weights=None)
    fm.randomize_batchnorm(m, g)
    return export_fixture(out, "resnet18_train_bn", m, [(img(g, 1, 224),)], ["input"], ["logits"],
                          training=torch.onnx.TrainingMode.PRESERVE,
                          do_constant_folding=False)


@fixture("squeezenet1_1")
def squeezenet_small(out):
    g = seed()
    m = squeezenet1_1(weights=None, num_classes=100)
    return _cnn(out, "squeezenet1_1", m, img(g, 1, 96), g)


@fixture("squeezenet1_1", slow=True)
def squeezenet_full(out):
    g = seed()
    return _cnn(out, "squeezenet1_1", squeezenet1_1(weights=None), img(g, 1, 224), g)


@fixture("mobilenet_v3_small")
def mobilenet_v3_small_small(out):
    g = seed()
    m = mobilenet_v3_small(weights=None, width_mult=0.5, num_classes=100)
    return _cnn(out, "mobilenet_v3_small", m, img(g, 1, 96), g)


@fixture("mobilenet_v3_small", slow=True)
def mobilenet_v3_small_full(out):
    g = seed()
    return _cnn(out, "mobilenet_v3_small", mobilenet_v3_small(weights=None), img(g, 1, 224), g)


@fixture("efficientnet_b0")
def efficientnet_small(out):
    g = seed()
    setting, last = _efficientnet_conf("efficientnet_b0", width_mult=0.5, depth_mult=0.5)
    m = EfficientNet(setting, 0.2, last_channel=last, num_classes=100)
    return _cnn(out, "efficientnet_b0", m, img(g, 1, 96), g)


@fixture("efficientnet_b0", slow=True)
def efficientnet_full(out):
    g = seed()
    return _cnn(out, "efficientnet_b0", torchvision.models.efficientnet_b0(weights=None),
                img(g, 1, 224), g)


def _encoder(out, name, opset, d=64, layers=2, nhead=4, sets=((2, 10), (3, 5))):
    g = seed()
    m = fm.EncoderClassifier(d_model=d, nhead=nhead, num_layers=layers, dim_ff=2 * d,
                             activation="gelu")
    ds = [(torch.randn(b, s, d, generator=g),) for b, s in sets]
    return export_fixture(out, name, m, ds, ["x"], ["logits"], opset=opset, noise=0.05,
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "logits": {0: "batch"}})


@fixture("transformer_encoder")
def transformer_encoder(out):
    return _encoder(out, "transformer_encoder", 17)


@fixture("transformer_encoder_opset14")
def transformer_encoder_14(out):
    return _encoder(out, "transformer_encoder_opset14", 14)


@fixture("transformer_encoder", slow=True)
def transformer_encoder_full(out):
    return _encoder(out, "transformer_encoder", 17, d=256, layers=4, nhead=4,
                    sets=((1, 128), (2, 64)))


def _gpt(out, name, layers, d, nhead, vocab, sets, max_pos):
    g = seed()
    m = fm.GPTDecoder(vocab=vocab, d=d, nhead=nhead, num_layers=layers, max_pos=max_pos)
    hd = d // nhead
    ds = []
    for b, s, p in sets:
        ids = torch.randint(0, vocab, (b, s), generator=g)
        past = []
        for _ in range(layers):
            past += [torch.randn(b, nhead, p, hd, generator=g),
                     torch.randn(b, nhead, p, hd, generator=g)]
        ds.append((ids, *past))
    in_names, out_names = ["input_ids"], ["logits"]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    for i in range(layers):
        for kv in ("key", "value"):
            pn, qn = "past_%s_%d" % (kv, i), "present_%s_%d" % (kv, i)
            in_names.append(pn)
            out_names.append(qn)
            dyn[pn] = {0: "batch", 2: "past_seq"}
            dyn[qn] = {0: "batch", 2: "total_seq"}
    return export_fixture(out, name, m, ds, in_names, out_names, dynamic_axes=dyn)


@fixture("gpt_decoder")
def gpt_decoder(out):
    # set 0: batch 2, 1 new token, 7 cached; set 1: batch 3, 5 new, 3 cached;
    # set 2: prefill (batch 1, 6 tokens, empty cache: past_seq = 0)
    return _gpt(out, "gpt_decoder", layers=2, d=64, nhead=4, vocab=256,
                sets=((2, 1, 7), (3, 5, 3), (1, 6, 0)), max_pos=128)


@fixture("gpt_decoder", slow=True)
def gpt_decoder_full(out):
    return _gpt(out, "gpt_decoder", layers=6, d=384, nhead=6, vocab=4096,
                sets=((1, 1, 127), (2, 16, 64)), max_pos=1024)


@fixture("if_model")
def if_model(out):
    g = seed()
    m = fm.IfModel()
    sm = torch.jit.script(m)
    pos = torch.rand(2, 3, generator=g) + 0.1      # sum > 0: then-branch (x*2)
    neg = -torch.rand(2, 3, generator=g) - 0.1     # sum <= 0: else-branch (x-1)
    info = export_fixture(out, "if_model", m, [(pos,), (neg,)], ["x"], ["y"],
                          export_model=sm)
    assert info["hist"]["If"] >= 1, "if_model: no If node in export"
    return info


@fixture("loop_model")
def loop_model(out):
    g = seed()
    m = fm.LoopModel(d_in=8, d_h=16)
    sm = torch.jit.script(m)
    ds = [(torch.randn(5, 2, 8, generator=g),), (torch.randn(3, 4, 8, generator=g),)]
    info = export_fixture(out, "loop_model", m, ds, ["x"], ["h", "acc"], export_model=sm,
                          dynamic_axes={"x": {0: "seq", 1: "batch"},
                                        "h": {0: "batch"}, "acc": {0: "batch"}})
    assert info["hist"]["Loop"] >= 1, "loop_model: no Loop node in export"
    return info


@fixture("local_functions")
def local_functions(out):
    g = seed()
    m = fm.FunctionsModel(d=32, n=3)
    ds = [(torch.randn(2, 5, 32, generator=g),)]
    return export_fixture(out, "local_functions", m, ds, ["x"], ["y"],
                          export_modules_as_functions={fm.ResidualBlock, nn.LayerNorm},
                          check_functions=True)


@fixture("video_3d")
def video_3d(out):
    g = seed()
    m = fm.TinyVideoNet()
    fm.randomize_batchnorm(m, g)
    ds = [(torch.randn(1, 3, 8, 32, 32, generator=g),), (torch.randn(2, 3, 8, 32, 32, generator=g),)]
    return export_fixture(out, "video_3d", m, ds, ["clip"], ["logits"],
                          dynamic_axes={"clip": {0: "batch"}, "logits": {0: "batch"}})


@fixture("vocoder_1d")
def vocoder_1d(out):
    g = seed()
    m = fm.TinyVocoder()
    ds = [(torch.randn(1, 16, 20, generator=g),), (torch.randn(2, 16, 9, generator=g),)]
    return export_fixture(out, "vocoder_1d", m, ds, ["mel"], ["wave"],
                          dynamic_axes={"mel": {0: "batch", 2: "frames"}, "wave": {0: "batch", 2: "samples"}})


@fixture("einsum_attention")
def einsum_attention(out):
    g = seed()
    m = fm.EinsumAttention()
    ds = [(torch.randn(2, 7, 32, generator=g), torch.randn(1, 3, 25, 35, generator=g))]
    return export_fixture(out, "einsum_attention", m, ds, ["x", "fmap"], ["y", "small"], opset=13)


@fixture("vit_tiny")
def vit_tiny(out):
    # torchvision's VisionTransformer at toy size: the classifier reads the class token of the
    # last encoder layer (x[:, 0]), which the runtime computes alone (narrow-selected-rows);
    # dynamic batch, so the head-splitting Reshapes have symbolic dims.
    g = seed()
    m = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                             hidden_dim=32, mlp_dim=64, num_classes=10)
    ds = [(torch.randn(1, 3, 32, 32, generator=g),), (torch.randn(3, 3, 32, 32, generator=g),)]
    return export_fixture(out, "vit_tiny", m, ds, ["input"], ["logits"], noise=0.05,
                          dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})


# ------------------------------------------------------------------ main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--slow", metavar="OUTDIR",
                    help="export the full-size benchmark variants into OUTDIR")
    ap.add_argument("--out", default=DEFAULT_OUT, help="output dir for the default tier")
    ap.add_argument("--only", help="comma-separated fixture names")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()

    slow = args.slow is not None
    outdir = args.slow if slow else args.out
    todo = [(n, fn) for (n, s), fn in FIXTURES.items() if s == slow]
    if args.list:
        for n, _ in todo:
            print(n)
        return 0
    if args.only:
        want = set(args.only.split(","))
        unknown = want - {n for n, _ in todo}
        if unknown:
            ap.error("unknown fixture(s): %s" % ", ".join(sorted(unknown)))
        todo = [(n, fn) for n, fn in todo if n in want]
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))

    infos, failed = [], []
    for n, fn in todo:
        try:
            infos.append(fn(outdir))
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            failed.append((n, repr(e)))
    total = dir_size(outdir)
    print("\n%d fixtures, total %.2f MB in %s" % (len(infos), total / 1e6, outdir))
    for n, e in failed:
        print("FAILED %s: %s" % (n, e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
