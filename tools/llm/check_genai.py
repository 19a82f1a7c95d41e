#!/usr/bin/python3
"""Checks a GenAI folder written by make_genai_model.py against PyTorch, with ONNX Runtime running the
folder through bench/llm/ort_generate.js (past/present in one shared buffer, as ORT GenAI does):

    check_genai.py DIR (--checkpoint OUT/model.pt | --preset NAME | --shape ...) [--seed S]
                   [--prompt-ids 1,2,3] [--tokens 64] [--rtol 1e-4] [--atol 1e-4]

1. logits: ORT's logits of every step (prefill's last position, then each decode step) against
   PyTorch's for the same token sequence, fed the same way (prefill, then one token at a time with
   the KV cache): |ort - torch| <= atol + rtol * |torch| everywhere;
2. greedy: PyTorch's own greedy continuation equals ORT's ids.
For an int4 folder the PyTorch reference uses the dequantized int4 weights; ORT's accuracy_level 4
also quantizes activations to int8 inside MatMulNBits, so only the figures are reported there.
Exit status 1 when an fp32 check fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_genai_model import PRESETS, RandomWeights, Shape, dequantize_int4, parse_shape, quantize_int4  # noqa: E402
from model import LlamaConfig, LlamaModel  # noqa: E402
from train_tiny_llm import generate  # noqa: E402

ORT_GENERATE = os.path.join(HERE, "..", "..", "bench", "llm", "ort_generate.js")


def torch_model(args):
    if args.checkpoint:
        ckpt = torch.load(args.checkpoint, map_location="cpu")
        model = LlamaModel(LlamaConfig(**ckpt["config"]))
        model.load_state_dict(ckpt["state_dict"])
        return model
    fields = PRESETS[args.preset] if args.preset else parse_shape(args.shape)
    shape = Shape(**fields)
    cfg = LlamaConfig(vocab_size=shape.vocab, hidden_size=shape.hidden, num_layers=shape.layers,
                      num_heads=shape.heads, num_kv_heads=shape.kv_heads, head_dim=shape.head_dim,
                      intermediate_size=shape.intermediate, context_length=shape.context,
                      rope_theta=shape.rope_theta, rms_norm_eps=shape.eps, tie_embeddings=False)
    model = LlamaModel(cfg)
    weights = RandomWeights(shape, args.seed)
    state = {name: torch.from_numpy(weights(name, list(t.shape))) for name, t in model.state_dict().items()}
    model.load_state_dict(state)
    return model


def dequantized(model):
    """The model with every Linear weight replaced by its int4 round trip (the lm_head untied)."""
    with torch.no_grad():
        for name, module in model.named_modules():
            if isinstance(module, torch.nn.Linear):
                w = module.weight.detach().numpy()
                packed, scales = quantize_int4(w)
                module.weight = torch.nn.Parameter(torch.from_numpy(dequantize_int4(packed, scales, w.shape[1]).copy()))
    return model


def ort_run(folder, prompt, tokens, threads):
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "logits.bin")
        cmd = ["node", ORT_GENERATE, folder, "--prompt-ids", ",".join(map(str, prompt)), "--tokens", str(tokens),
               "--warmup", "0", "--threads", str(threads), "--dump-logits", dump]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        logits = np.fromfile(dump, dtype=np.float32)
    return result, logits.reshape(tokens, -1)


@torch.no_grad()
def torch_logits(model, prompt, generated):
    """Last-position logits of every step when `prompt` then `generated[:-1]` are fed as ORT fed them."""
    past = model.empty_past()
    ids = list(prompt)
    x = torch.tensor([ids])
    rows = []
    for tok in generated:
        logits, past = model.forward_step(x, torch.ones(1, len(ids), dtype=torch.int64), past)
        rows.append(logits[0, -1].numpy())
        ids.append(tok)
        x = torch.tensor([[tok]])
    return np.stack(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint")
    src.add_argument("--preset", choices=sorted(PRESETS))
    src.add_argument("--shape")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--prompt-ids", default="4093,464,3110,318,257")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()
    torch.set_num_threads(1)

    with open(os.path.join(args.folder, "model.onnx"), "rb") as f:
        int4 = b"MatMulNBits" in f.read()
    model = torch_model(args)
    if int4:
        model = dequantized(model)
    model.eval()
    vocab = model.cfg.vocab_size
    prompt = [int(x) % vocab for x in args.prompt_ids.split(",")]

    result, ort_logits = ort_run(args.folder, prompt, args.tokens, args.threads)
    ref = torch_logits(model, prompt, result["ids"])
    diff = np.abs(ort_logits - ref)
    bound = args.atol + args.rtol * np.abs(ref)
    logits_ok = bool(np.all(diff <= bound))
    greedy = generate(model, prompt, args.tokens)
    same = next((i for i, (a, b) in enumerate(zip(greedy, result["ids"])) if a != b), None)
    greedy_ok = same is None
    report = {
        "folder": args.folder, "precision": "int4" if int4 else "fp32", "bound": result["bound"],
        "prompt_ids": prompt, "tokens": args.tokens,
        "max_abs_logit_diff": float(diff.max()), "max_abs_logit": float(np.abs(ref).max()),
        "logits_within_tolerance": logits_ok, "rtol": args.rtol, "atol": args.atol,
        "greedy_equal": greedy_ok, "first_greedy_difference": same,
        "ort_ids": result["ids"], "torch_ids": greedy,
    }
    print(json.dumps(report))
    if not int4 and not (logits_ok and greedy_ok):
        sys.exit(1)


if __name__ == "__main__":
    main()
