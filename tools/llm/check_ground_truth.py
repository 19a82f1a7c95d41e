#!/usr/bin/python3
"""Checks the tiny model's ONNX folders in ONNX Runtime against its PyTorch ground truth:

    check_ground_truth.py OUT     (OUT as written by train_tiny_llm.py and make_genai_model.py)

For OUT/genai_fp32, OUT/genai_int4 and OUT/torch (the TorchScript export, run as a GenAI folder with
past_present_share_buffer false): greedy ids of every ground-truth prompt (64 tokens) against
PyTorch's, logits of every step against PyTorch's (fp32: |diff| <= 1e-4 + 1e-4 |torch|; int4: against
PyTorch with the dequantized weights, reported only), and held-out perplexity in ORT against
PyTorch's figure. Prints one JSON report; exit status 1 when an fp32 check fails.
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_genai import ORT_GENERATE, dequantized, ort_run, torch_logits  # noqa: E402
from model import LlamaConfig, LlamaModel  # noqa: E402


def ort_perplexity(folder, truth_file):
    out = subprocess.run(["node", ORT_GENERATE, folder, "--perplexity", truth_file], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    out_dir = sys.argv[1]
    truth_file = os.path.join(out_dir, "ground_truth.json")
    with open(truth_file) as f:
        truth = json.load(f)
    ckpt = torch.load(os.path.join(out_dir, "model.pt"), map_location="cpu")
    torch.set_num_threads(1)
    report = {"pytorch_perplexity": truth["heldout"]["perplexity"], "folders": {}}
    ok = True
    for name in ("torch", "genai_fp32", "genai_int4"):
        folder = os.path.join(out_dir, name)
        model = LlamaModel(LlamaConfig(**ckpt["config"]))
        model.load_state_dict(ckpt["state_dict"])
        int4 = name.endswith("int4")
        if int4:
            model = dequantized(model)
        model.eval()
        entry = {"prompts": []}
        max_diff, within = 0.0, True
        for g in truth["greedy"]:
            result, logits = ort_run(folder, g["prompt_ids"], len(g["ids"]), 1)
            ref = torch_logits(model, g["prompt_ids"], result["ids"])
            diff = np.abs(logits - ref)
            max_diff = max(max_diff, float(diff.max()))
            within &= bool(np.all(diff <= 1e-4 + 1e-4 * np.abs(ref)))
            same = next((i for i, (a, b) in enumerate(zip(g["ids"], result["ids"])) if a != b), None)
            entry["prompts"].append({"name": g["name"], "greedy_equal": same is None, "first_difference": same,
                                     "bound": result["bound"]})
        ppl = ort_perplexity(folder, truth_file)
        entry.update(max_abs_logit_diff=max_diff, logits_within_tolerance=within,
                     greedy_equal_all=all(p["greedy_equal"] for p in entry["prompts"]),
                     ort_perplexity=ppl["perplexity"],
                     perplexity_vs_pytorch=ppl["perplexity"] / truth["heldout"]["perplexity"] - 1)
        if not int4:
            ok &= within and entry["greedy_equal_all"]
        report["folders"][name] = entry
    print(json.dumps(report, indent=1))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
