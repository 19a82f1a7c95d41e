#!/usr/bin/python3
"""Export the model zoo: 30+ torch models of the families people deploy, for the slow tier
(scripts/test-zoo.sh) and the side-by-side benchmark (bench/compare_ort.sh --zoo).

Layout (the ONNX backend-test layout of tests/models, so `xonnx conformance` reads it):
  <zoo>/<name>/model.onnx
  <zoo>/<name>/test_data_set_0/input_I.pb, output_I.pb   (torch's outputs)
  <zoo>/<name>/calibration/test_data_set_K/input_I.pb    (more inputs of the same kind, for
                                                          int8 calibration)
  <zoo>/<name>/zoo.json        this model's manifest entry, written last (marks it complete)
  <zoo>/manifest.json          every complete entry: name, family, variant, opset, inputs
                               (name, dtype, shape), outputs, classifier, note

Usage (Debian's python: torch 1.13, torchvision 0.14, onnx 1.12):
  /usr/bin/python3 tools/export_zoo.py [--out DIR] [--only a,b] [--force] [--list]
The default DIR is $XONNX_ZOO_DIR or ~/.cache/xonnx-zoo. Models already exported are skipped
(--force re-exports them), so an interrupted run resumes where it stopped. Weights are random
(fixed seeds); nothing is downloaded.
"""
import argparse
import collections
import json
import os
import shutil
import sys
import traceback

import onnx
import torch
import torchvision.models as tvm
from torchvision.models import detection, segmentation
from torchvision.models.resnet import BasicBlock, Bottleneck

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_fixtures as ef  # noqa: E402
import fixture_models as fm  # noqa: E402
import zoo_models as zm  # noqa: E402

DEFAULT_OUT = os.environ.get("XONNX_ZOO_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "xonnx-zoo")
# int8 static calibration samples per model. 16, not 4: a per-image value (a global pool's and
# the 1x1 Convs after it: DeepLabV3's ASPP pooling branch, squeeze-excitation) shows 4 values
# per channel in 4 samples, and an unseen image's fell outside their min-max range (10.8 against
# 4.46), clipped across the whole output (int8 static cosine 0.976 on the test input, 0.993 with 16).
CALIBRATION_SAMPLES = 16
EVAL = torch.onnx.TrainingMode.EVAL
PRESERVE = torch.onnx.TrainingMode.PRESERVE

Spec = collections.namedtuple("Spec", "model inputs input_names output_names opset dynamic_axes fold training "
                                      "classifier note random_batchnorm")
ZOO = collections.OrderedDict()  # name -> (family, builder)


def zoo(name, family):
    def deco(fn):
        ZOO[name] = (family, fn)
        return fn
    return deco


def spec(model, inputs, input_names, output_names, opset=17, dynamic_axes=None, fold=True, training=EVAL,
         classifier=False, note="", random_batchnorm=True):
    """inputs(g) makes one input tuple from generator g (called for the test set and for each
    calibration sample). random_batchnorm: random BatchNorm affine parameters and running
    statistics measured on such inputs (else torch's initial ones, which fold into equal biases)."""
    return Spec(model, inputs, input_names, output_names, opset, dynamic_axes, fold, training, classifier, note,
                random_batchnorm)


def variant_of(s):
    parts = ["opset %d" % s.opset]
    if not s.fold:
        parts.append("do_constant_folding=False")
    if s.training == PRESERVE:
        parts.append("TrainingMode.PRESERVE")
    if s.dynamic_axes:
        dims = sorted({d for axes in s.dynamic_axes.values() for d in axes.values()})
        parts.append("dynamic axes (%s)" % ", ".join(dims))
    return ", ".join(parts)


def images(hw, n=1):
    return lambda g: (torch.randn(n, 3, hw[0], hw[1], generator=g),)


def classifier(model, hw=224, **kw):
    return spec(model, images((hw, hw)), ["input"], ["logits"], classifier=True, **kw)


BATCH = {"input": {0: "batch"}, "logits": {0: "batch"}}


# ------------------------------------------------------------------ torchvision classifiers
@zoo("resnet50", "classification")
def resnet50():
    return classifier(tvm.resnet50())


@zoo("resnext50_32x4d", "classification")
def resnext50():
    return classifier(tvm.resnext50_32x4d())


@zoo("densenet121", "classification")
def densenet121():
    return classifier(tvm.densenet121(), opset=13)


@zoo("googlenet", "classification")
def googlenet():
    return classifier(tvm.googlenet(aux_logits=False, init_weights=True), fold=False)


@zoo("inception_v3", "classification")
def inception_v3():
    return classifier(tvm.inception_v3(aux_logits=False, init_weights=True), hw=299)


@zoo("shufflenet_v2_x1_0", "classification")
def shufflenet():
    return classifier(tvm.shufflenet_v2_x1_0(), opset=14)


@zoo("mnasnet1_0", "classification")
def mnasnet():
    return classifier(tvm.mnasnet1_0(), training=PRESERVE, fold=False)


@zoo("regnet_y_400mf", "classification")
def regnet():
    return classifier(tvm.regnet_y_400mf(), random_batchnorm=False,
                      note="BatchNorm as initialized: the folded biases are equal, and shared after dedup")


@zoo("convnext_tiny", "classification")
def convnext():
    return classifier(tvm.convnext_tiny())


@zoo("efficientnet_v2_s", "classification")
def efficientnet_v2():
    return classifier(tvm.efficientnet_v2_s(), note="224x224 (trained at 384)")


@zoo("mobilenet_v3_large", "classification")
def mobilenet_v3_large():
    return classifier(tvm.mobilenet_v3_large(), dynamic_axes=BATCH)


@zoo("vgg11", "classification")
def vgg11():
    return classifier(tvm.vgg11())


@zoo("vit_b_16", "classification")
def vit_b_16():
    return classifier(tvm.vit_b_16())


@zoo("swin_t", "classification")
def swin_t():
    return classifier(tvm.swin_t())


# ---------------------------------------------------------------- detection, segmentation
@zoo("ssdlite320_mobilenet_v3_large", "detection")
def ssdlite():
    m = detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    return spec(zm.SsdBackboneHead(m), images((320, 320)), ["input"], ["bbox_regression", "cls_logits"],
                note="backbone + head; anchor decoding and NMS are not exported")


def _segmentation(model, hw):
    return spec(zm.FirstOutput(model), images((hw, hw)), ["input"], ["out"])


@zoo("deeplabv3_mobilenet_v3_large", "segmentation")
def deeplab():
    return _segmentation(segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None), 320)


@zoo("lraspp_mobilenet_v3_large", "segmentation")
def lraspp():
    return _segmentation(segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None), 320)


@zoo("fcn_resnet50", "segmentation")
def fcn():
    s = _segmentation(segmentation.fcn_resnet50(weights=None, weights_backbone=None), 224)
    return s._replace(note="224x224 (dilated ResNet-50, output stride 8)")


@zoo("unet", "segmentation")
def unet():
    return spec(zm.UNet(), images((256, 256)), ["input"], ["mask"],
                dynamic_axes={"input": {2: "height", 3: "width"}, "mask": {2: "height", 3: "width"}})


# ------------------------------------------------------------------------ transformers
def token_inputs(vocab, seq, mask=True, types=False, pad=16):
    """ids in [0, vocab), a padding mask whose last `pad` tokens are padding, token types 0|1."""
    def make(g):
        ids = torch.randint(0, vocab, (1, seq), generator=g)
        out = [ids]
        if mask:
            m = torch.ones(1, seq, dtype=torch.long)
            m[:, seq - pad:] = 0
            out.append(m)
        if types:
            t = torch.zeros(1, seq, dtype=torch.long)
            t[:, seq // 2:] = 1
            out.append(t)
        return tuple(out)
    return make


@zoo("bert_base", "transformer")
def bert_base():
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dyn = {n: {0: "batch", 1: "seq"} for n in names}
    dyn["logits"] = {0: "batch"}
    dyn["last_hidden_state"] = {0: "batch", 1: "seq"}
    return spec(zm.BertEncoder(), token_inputs(30522, 128, types=True), names, ["last_hidden_state", "logits"], opset=13,
                dynamic_axes=dyn, note="seq 128, 12 layers, d 768")


@zoo("distilbert", "transformer")
def distilbert():
    return spec(zm.DistilBert(), token_inputs(30522, 128), ["input_ids", "attention_mask"],
                ["last_hidden_state", "logits"], opset=14,
                fold=False, note="seq 128, 6 layers, d 768")


@zoo("albert_shared", "transformer")
def albert():
    return spec(zm.AlbertEncoder(), token_inputs(30000, 128), ["input_ids", "attention_mask"],
                ["last_hidden_state", "logits"],
                note="one layer applied 6 times: its weights are shared through Identity; seq 128, d 512")


@zoo("vit_small", "transformer")
def vit_small():
    m = tvm.VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=6, hidden_dim=384,
                              mlp_dim=1536)
    return classifier(m, note="ViT-S/16: 12 layers, d 384, 6 heads")


WHISPER_FRAMES = 1000  # 10 s of audio (Whisper pads to 30 s: 3000 frames)


@zoo("whisper_tiny_encoder", "transformer")
def whisper_encoder():
    return spec(zm.WhisperEncoder(frames=WHISPER_FRAMES), lambda g: (torch.randn(1, 80, WHISPER_FRAMES, generator=g),),
                ["mel"], ["hidden"], note="80 x 1000 log-mel frames (10 s), 4 layers, d 384")


def _cache_names(layers, prefix_in, prefix_out, cross=False):
    ins, outs = [], []
    for i in range(layers):
        for kv in ("key", "value"):
            ins.append("%s_%s_%d" % (prefix_in, kv, i))
            outs.append("%s_%s_%d" % (prefix_out, kv, i))
    if cross:
        ins += ["cross_%s_%d" % (kv, i) for i in range(layers) for kv in ("key", "value")]
    return ins, outs


@zoo("whisper_tiny_decoder_step", "transformer")
def whisper_decoder():
    layers, past, frames = 4, 24, WHISPER_FRAMES // 2
    past_in, present_out = _cache_names(layers, "past", "present", cross=True)

    def make(g):
        ids = torch.randint(0, 51865, (1, 1), generator=g)
        cache = [torch.randn(1, 6, past, 64, generator=g) for _ in range(2 * layers)]
        cross = [torch.randn(1, 6, frames, 64, generator=g) for _ in range(2 * layers)]
        return (ids, *cache, *cross)

    dyn = {n: {2: "past"} for n in past_in[:2 * layers]}
    dyn.update({n: {2: "total"} for n in present_out})
    return spec(zm.WhisperDecoderStep(), make, ["input_ids"] + past_in, ["logits"] + present_out,
                dynamic_axes=dyn, note="one token after 24, cross-attention over 500 encoder frames")


@zoo("t5_small", "transformer")
def t5_small():
    def make(g):
        ids, mask = token_inputs(32128, 64, pad=8)(g)
        return ids, mask, torch.randint(0, 32128, (1, 16), generator=g)
    return spec(zm.T5(), make, ["input_ids", "attention_mask", "decoder_input_ids"], ["logits"],
                note="encoder seq 64, decoder seq 16 (whole forward), 6 + 6 layers, d 512")


LLAMA = dict(layers=8, kv_heads=2, head_dim=64, vocab=32000)


@zoo("llama_prefill", "transformer")
def llama_prefill():
    _, present = _cache_names(LLAMA["layers"], "past", "present")
    dyn = {"input_ids": {1: "seq"}, "logits": {1: "seq"}}
    dyn.update({n: {2: "seq"} for n in present})
    return spec(zm.LlamaDecoder(), lambda g: (torch.randint(0, LLAMA["vocab"], (1, 128), generator=g),),
                ["input_ids"], ["logits"] + present, dynamic_axes=dyn,
                note="prefill of 128 tokens; 8 layers, d 512, 8 heads / 2 KV heads, SwiGLU")


@zoo("llama_decode_step", "transformer")
def llama_decode():
    past_in, present = _cache_names(LLAMA["layers"], "past", "present")

    def make(g):
        cache = [torch.randn(1, LLAMA["kv_heads"], 127, LLAMA["head_dim"], generator=g) for _ in past_in]
        return (torch.randint(0, LLAMA["vocab"], (1, 1), generator=g), *cache)

    dyn = {"input_ids": {1: "seq"}, "logits": {1: "seq"}}
    dyn.update({n: {2: "past"} for n in past_in})
    dyn.update({n: {2: "total"} for n in present})
    return spec(zm.LlamaDecoder(with_past=True), make, ["input_ids"] + past_in, ["logits"] + present,
                dynamic_axes=dyn, note="one token after 127 cached ones")


# ----------------------------------------------------------------- audio and sequences
@zoo("lstm_acoustic", "sequence")
def lstm():
    return spec(zm.LstmAcoustic(), lambda g: (torch.randn(100, 1, 80, generator=g),), ["features"], ["logits"],
                opset=13, dynamic_axes={"features": {0: "frames"}, "logits": {0: "frames"}},
                note="100 frames, 2 layers, hidden 256")


@zoo("bilstm_tagger", "sequence")
def bilstm():
    return spec(zm.BiLstmTagger(), lambda g: (torch.randint(0, 10000, (1, 64), generator=g),), ["ids"], ["tags"],
                note="64 tokens, hidden 256 per direction")


@zoo("gru_lm", "sequence")
def gru():
    return spec(zm.GruLanguageModel(), lambda g: (torch.randint(0, 5000, (1, 64), generator=g),), ["ids"],
                ["logits", "hidden"], opset=14, note="64 tokens, 2 layers, hidden 512, vocab 5000")


@zoo("kws_conv1d", "audio")
def kws():
    return spec(zm.KeywordSpotter(), lambda g: (torch.randn(1, 40, 101, generator=g),), ["mfcc"], ["logits"],
                training=PRESERVE, fold=False, classifier=True, note="40 MFCC x 101 frames, dilations 1-8")


# ------------------------------------------------------------------------------ driver
def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def quiet_residual_branches(model, gain=0.2):
    """Scales the last BatchNorm of every ResNet block's residual branch by `gain`: trained
    ResNets end their branches with small BatchNorm weights, so each block adds a modest update.
    With full-size random ones the blocks' sum amplifies any rounding (fp16-rounded weights moved
    fcn_resnet50's output to cosine 0.995)."""
    with torch.no_grad():
        for m in model.modules():
            last = getattr(m, "bn3", None) if isinstance(m, Bottleneck) else getattr(m, "bn2", None) if isinstance(m, BasicBlock) else None
            if last is not None:
                last.weight.mul_(gain)


def measure_batchnorm(model, inputs, g, batches=4):
    """Sets every BatchNorm's running statistics to those of the activations it sees on a few
    inputs of the model's kind (as training would): a random network's activations then stay
    near unit scale instead of growing layer after layer, so its outputs are as well conditioned
    as a trained model's (random statistics gave inception_v3 logits of 4e8)."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    momenta = [m.momentum for m in norms]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(*[torch.cat([a, b]) for a, b in zip(inputs(g), inputs(g))])  # 2 samples: batch statistics need more than one value
    model.eval()
    for m, momentum in zip(norms, momenta):
        m.momentum = momentum


def shared_through_identity(path):
    """Identity nodes reading an initializer: torch writes a reused module's folded weights once
    and the other uses through them."""
    m = onnx.load(path)
    inits = {t.name for t in m.graph.initializer}
    return sum(1 for n in m.graph.node if n.op_type == "Identity" and n.input[0] in inits)


def partial_dir(out):
    """Where this process writes a model before moving it into place (one per process, so two
    exports into one zoo never touch each other's files)."""
    return os.path.join(out, ".partial-%d" % os.getpid())


def build(name):
    """The zoo model `name` as exported: its spec (weights set), the input generator after the
    test inputs, and the test inputs."""
    ef.seed()
    s = ZOO[name][1]()
    g = torch.Generator()
    g.manual_seed(1234)
    if s.random_batchnorm:
        fm.randomize_batchnorm(s.model, g)
        quiet_residual_branches(s.model)
        measure_batchnorm(s.model, s.inputs, g)
    return s, g, s.inputs(g)


def write_calibration(d, s, g):
    """The calibration samples that follow the test input in the model's generator; those on disk
    already are drawn again (the same values) and kept."""
    for k in range(CALIBRATION_SAMPLES):
        cd = os.path.join(d, "calibration", "test_data_set_%d" % k)
        inputs = s.inputs(g)
        if os.path.isdir(cd):
            continue
        os.makedirs(cd + ".partial", exist_ok=True)
        for i, (n, t) in enumerate(zip(s.input_names, inputs)):
            ef.write_pb(os.path.join(cd + ".partial", "input_%d.pb" % i), t, n)
        os.rename(cd + ".partial", cd)


def calibration_count(d):
    c = os.path.join(d, "calibration")
    return len([e for e in os.listdir(c) if not e.endswith(".partial")]) if os.path.isdir(c) else 0


def export_one(out, name, family):
    s, g, test_set = build(name)
    partial = partial_dir(out)
    os.makedirs(partial, exist_ok=True)
    info = ef.export_fixture(partial, name, s.model, [test_set], s.input_names, s.output_names, opset=s.opset,
                             dynamic_axes=s.dynamic_axes, do_constant_folding=s.fold, training=s.training)
    d = os.path.join(partial, name)
    write_calibration(d, s, g)
    variant = variant_of(s)
    shared = shared_through_identity(os.path.join(d, "model.onnx"))
    if shared:
        variant += ", shared weights through Identity (%d)" % shared
    entry = dict(name=name, family=family, variant=variant, opset=s.opset,
                 inputs=[dict(name=n, dtype=dtype_name(t), shape=list(t.shape)) for n, t in zip(s.input_names, test_set)],
                 outputs=list(s.output_names), classifier=s.classifier, note=s.note,
                 checker=info["status"], nodes=info["nodes"], model_bytes=info["model_size"])
    with open(os.path.join(d, "zoo.json"), "w") as f:
        json.dump(entry, f, indent=1)
    final = os.path.join(out, name)
    shutil.rmtree(final, ignore_errors=True)
    os.rename(d, final)


def write_manifest(out):
    entries = []
    for name in ZOO:
        p = os.path.join(out, name, "zoo.json")
        if os.path.exists(p):
            with open(p) as f:
                entries.append(json.load(f))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"models": entries}, f, indent=1)
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="zoo folder (default %(default)s)")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--force", action="store_true", help="re-export models that exist")
    ap.add_argument("--list", action="store_true", help="print name, family and export variant of each model")
    args = ap.parse_args()
    names = list(ZOO)
    if args.only:
        want = args.only.split(",")
        unknown = [n for n in want if n not in ZOO]
        if unknown:
            ap.error("unknown model(s): %s" % ", ".join(unknown))
        names = [n for n in names if n in want]
    if args.list:
        for n in names:
            print("%-30s %s" % (n, ZOO[n][0]))
        return 0
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    failed = []
    for n in names:
        if not args.force and os.path.exists(os.path.join(args.out, n, "zoo.json")):
            if calibration_count(os.path.join(args.out, n)) < CALIBRATION_SAMPLES:  # a zoo from an older script
                s, g, _ = build(n)
                write_calibration(os.path.join(args.out, n), s, g)
            continue
        try:
            export_one(args.out, n, ZOO[n][0])
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            failed.append((n, repr(e)))
    shutil.rmtree(partial_dir(args.out), ignore_errors=True)
    entries = write_manifest(args.out)
    print("\n%d of %d zoo models in %s" % (len(entries), len(ZOO), args.out))
    for n, e in failed:
        print("FAILED %s: %s" % (n, e))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
