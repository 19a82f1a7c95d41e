#!/usr/bin/python3
"""Small random-weight TorchScript exports of model.py's decoder in the shapes and export settings
`xonnx convert --genai` must recognise besides the trained tiny model (tests/models_llm/tiny/torch):
multi-head vs grouped-query vs multi-query attention, opsets 14-16, torch's constant folding on and
off, cos/sin gathered from tables or computed in the graph, rotate-half vs interleaved RoPE, an
additive vs a boolean mask, and the tiny model's tied embeddings vs untied ones here.

    export_variants.py [--out tests/models_llm/variants] [--only NAME,...]

Each variant folder: model.onnx (one decoder step, the GenAI input/output names), genai_config.json
(past_present_share_buffer false, as train_tiny_llm.py writes it for its export) and expected.json:
the config, a prompt, and PyTorch's logits of the prefill and of each greedy decode step with the
greedy ids (batch 1, KV cache as model.py's forward_step keeps it).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_genai_model import Shape, genai_config  # noqa: E402
from model import DecoderStep, LlamaConfig, LlamaModel, io_names  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_OUT = os.path.join(REPO, "tests", "models_llm", "variants")

# Untied embeddings: with random weights a tied lm_head mostly predicts the input token again.
SMALL = dict(vocab_size=128, hidden_size=64, num_layers=2, head_dim=16, intermediate_size=96, context_length=64,
             tie_embeddings=False)
VARIANTS = {
    # MHA (no repeat_kv), opset 14, no constant folding (weights reach MatMul through Transpose),
    # cos/sin computed from the positions, masked_fill with a bool mask.
    "mha_opset14_nofold": dict(num_heads=4, num_kv_heads=4, opset=14, fold=False, rope_style="computed",
                               mask_style="boolean"),
    # GQA 4/2, opset 16, folded, interleaved RoPE from tables, additive mask.
    "gqa_opset16_interleaved": dict(num_heads=4, num_kv_heads=2, opset=16, fold=True, rope_interleaved=True),
    # MQA 4/1 (repeat_kv by 4), opset 15, no constant folding, computed interleaved RoPE, bool mask.
    "mqa_opset15_nofold": dict(num_heads=4, num_kv_heads=1, opset=15, fold=False, rope_style="computed",
                               rope_interleaved=True, mask_style="boolean"),
}
PROMPT = [1, 17, 5, 99, 42, 7, 63]
DECODE_STEPS = 5


def randomize(model, seed):
    """Weights with spread (logits std ~5), so greedy choices have clear margins; norm weights around 1
    so a dropped norm weight changes the result."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(0.5 + torch.rand(p.shape, generator=g))
            elif p.dim() == 2 and "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)


@torch.no_grad()
def reference(model):
    """Prefill of PROMPT then DECODE_STEPS greedy steps: logits of every step and the ids."""
    past = model.empty_past()
    ids = list(PROMPT)
    x = torch.tensor([ids])
    steps, greedy = [], []
    for _ in range(DECODE_STEPS + 1):
        logits, past = model.forward_step(x, torch.ones(1, len(ids), dtype=torch.int64), past)
        steps.append([[float(v) for v in row] for row in logits[0]])
        nxt = int(torch.argmax(logits[0, -1]))
        greedy.append(nxt)
        ids.append(nxt)
        x = torch.tensor([[nxt]])
    return steps, greedy


def export(model, path, opset, fold):
    cfg = model.cfg
    inputs, outputs = io_names(cfg.num_layers)
    past_len, seq = 3, 2
    args = [torch.tensor([[5, 7]], dtype=torch.int64), torch.ones(1, past_len + seq, dtype=torch.int64)]
    for _ in range(cfg.num_layers):
        args += [torch.randn(1, cfg.num_kv_heads, past_len, cfg.head_dim) for _ in range(2)]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    for name in inputs[2:]:
        axes[name] = {0: "batch_size", 2: "past_sequence_length"}
    for name in outputs[1:]:
        axes[name] = {0: "batch_size", 2: "total_sequence_length"}
    torch.onnx.export(DecoderStep(model), tuple(args), path, input_names=inputs, output_names=outputs,
                      dynamic_axes=axes, opset_version=opset, do_constant_folding=fold)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--only", default="", help="comma-separated variant names")
    args = ap.parse_args()
    names = [n for n in VARIANTS if not args.only or n in args.only.split(",")]
    for seed, name in enumerate(names, start=1):
        spec = dict(VARIANTS[name])
        opset, fold = spec.pop("opset"), spec.pop("fold")
        cfg = LlamaConfig(**SMALL, **spec)
        torch.manual_seed(seed)
        model = LlamaModel(cfg).eval()
        randomize(model, seed)
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        export(model, os.path.join(folder, "model.onnx"), opset, fold)
        steps, greedy = reference(model)
        shape = Shape(cfg.hidden_size, cfg.num_layers, cfg.num_heads, cfg.num_kv_heads, cfg.intermediate_size,
                      cfg.vocab_size, cfg.context_length, head_dim=cfg.head_dim, bos=0, eos=[0], pad=0)
        config = genai_config(shape)
        config["search"]["past_present_share_buffer"] = False
        with open(os.path.join(folder, "genai_config.json"), "w") as f:
            json.dump(config, f, indent=4)
            f.write("\n")
        expected = {"config": cfg.to_dict(), "opset": opset, "do_constant_folding": fold, "prompt_ids": PROMPT,
                    "greedy_ids": greedy, "step_logits": steps}
        with open(os.path.join(folder, "expected.json"), "w") as f:
            json.dump(expected, f, separators=(",", ":"))
            f.write("\n")
        top2 = [sorted(s[-1], reverse=True)[:2] for s in steps]
        margin = min(a - b for a, b in top2)
        print(f"{name}: {sum(p.numel() for p in model.parameters())} parameters, greedy {greedy}, "
              f"smallest top-1 margin {margin:.3f}")


if __name__ == "__main__":
    main()
