#!/usr/bin/env python3
"""Makes tests/models_llm_ops: one-node models of the LLM ops (com.microsoft GroupQueryAttention,
RotaryEmbedding, SkipSimplifiedLayerNormalization, SimplifiedLayerNormalization and ONNX-23
Attention, RotaryEmbedding, RMSNormalization) on random inputs over their attribute space, with
ONNX Runtime 1.30's outputs as the expected values (a second runtime), in the ONNX backend-test
layout that `xonnx conformance` reads.

    /usr/bin/python3 tools/llm_ops_fixtures.py [--out tests/models_llm_ops] [--only SUBSTRING]

Needs onnx (python3-onnx), node and onnxruntime-node in ~/.cache/xonnx-ort (bench/compare_ort.sh
installs it). Each case is also computed by a numpy model of the op written from the spec; a case
where ORT and that model disagree stops the script, so the fixtures record semantics two
independent implementations agree on.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MS = "com.microsoft"
NP_TO_ORT = {np.float32: "float32", np.int64: "int64", np.int32: "int32"}
NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def ort_outputs(model_path, inputs):
    feeds = {n: {"type": NP_TO_ORT[a.dtype.type], "dims": list(a.shape), "data": a.ravel().tolist()}
             for n, a in inputs.items()}
    done = subprocess.run(["node", os.path.join(ROOT, "tools", "ort_run.js"), model_path], input=json.dumps(feeds),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip())
    inv = {v: k for k, v in NP_TO_ORT.items()}
    return [np.array(o["data"], dtype=inv[o["type"]]).reshape(o["dims"]) for o in json.loads(done.stdout)]


def make_model(op, domain, inputs, outputs, attrs, opset):
    """inputs: list of (name, array or None); outputs: list of names ('' = not requested)."""
    node = helper.make_node(op, [n if a is not None else "" for n, a in inputs], outputs, domain=domain, **attrs)
    while node.input and node.input[-1] == "":
        node.input.pop()
    graph_inputs = [helper.make_tensor_value_info(n, NP_TO_ONNX[a.dtype.type], list(a.shape))
                    for n, a in inputs if a is not None]
    graph_outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs if n]
    graph = helper.make_graph([node], op, graph_inputs, graph_outputs)
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if domain == MS else [])
    model = helper.make_model(graph, opset_imports=imports, producer_name="tools/llm_ops_fixtures.py")
    model.ir_version = 10 if opset >= 21 else 8
    return model


# ------------------------------------------------------------------ numpy models of the ops

def softmax_rows(x, sink=None):
    """Softmax over the last axis; `sink` adds one more logit to the denominator only."""
    m = x.max(axis=-1, keepdims=True)
    if sink is not None:
        m = np.maximum(m, sink)
    e = np.exp(x - m)
    den = e.sum(axis=-1, keepdims=True)
    if sink is not None:
        den = den + np.exp(sink - m)
    return e / den


def rotate(x, cos, sin, interleaved):
    """x [..., H] rotated over its first 2*cos.shape[-1] dims; cos/sin broadcast over [..., half]."""
    half = cos.shape[-1]
    y = x.copy()
    if interleaved:
        x1, x2 = x[..., 0:2 * half:2], x[..., 1:2 * half:2]
        y[..., 0:2 * half:2] = x1 * cos - x2 * sin
        y[..., 1:2 * half:2] = x1 * sin + x2 * cos
    else:
        x1, x2 = x[..., :half], x[..., half:2 * half]
        y[..., :half] = x1 * cos - x2 * sin
        y[..., half:2 * half] = x1 * sin + x2 * cos
    return y


def gqa_model(inp, a):
    """GroupQueryAttention (float32, BNSH caches) as ORT's CPU kernel defines it."""
    q, k, v = inp["query"], inp.get("key"), inp.get("value")
    N, KV = a["num_heads"], a["kv_num_heads"]
    B, S, _ = q.shape
    if k is None:  # packed QKV
        H = q.shape[2] // (N + 2 * KV)
        q, k, v = q[..., :N * H], q[..., N * H:(N + KV) * H], q[..., (N + KV) * H:]
    H = q.shape[2] // N
    q = q.reshape(B, S, N, H).transpose(0, 2, 1, 3).astype(np.float64)
    k = k.reshape(B, S, KV, H).transpose(0, 2, 1, 3).astype(np.float64)
    v = v.reshape(B, S, KV, H).transpose(0, 2, 1, 3).astype(np.float64)
    seqlens = inp["seqlens_k"].astype(np.int64)
    total = int(inp["total_sequence_length"].reshape(-1)[0])
    pk, pv = inp.get("past_key"), inp.get("past_value")
    past_len = pk.shape[2] if pk is not None else 0
    present_len = max(total, past_len)
    first_prompt = S == total
    pk_out = np.zeros((B, KV, present_len, H))
    pv_out = np.zeros((B, KV, present_len, H))
    out = np.zeros((B, S, N, H))
    qk_mode = a.get("qk_output", 0)
    qk_out = np.zeros((B, N, S, total)) if qk_mode else None
    scale = a.get("scale", 0.0) or 1.0 / np.sqrt(H)
    softcap = a.get("softcap", 0.0)
    window = a.get("local_window_size", -1)
    for b in range(B):
        tot_b = int(seqlens[b]) + 1
        past_b = 0 if first_prompt else tot_b - S
        qb, kb = q[b], k[b]
        if a.get("do_rotary", 0):
            if "position_ids" in inp:
                pos = inp["position_ids"][b, :S]
            else:
                pos = np.arange(S) + past_b
            cos = inp["cos_cache"][pos].astype(np.float64)[None]
            sin = inp["sin_cache"][pos].astype(np.float64)[None]
            qb = rotate(qb, cos, sin, a.get("rotary_interleaved", 0))
            kb = rotate(kb, cos, sin, a.get("rotary_interleaved", 0))
        if past_b > 0:
            pk_out[b, :, :past_b] = pk[b, :, :past_b]
            pv_out[b, :, :past_b] = pv[b, :, :past_b]
        pk_out[b, :, past_b:past_b + S] = kb
        pv_out[b, :, past_b:past_b + S] = v[b]
        for h in range(N):
            kh = h // (N // KV)
            scores = qb[h] @ pk_out[b, kh, :tot_b].T * scale  # [S, tot_b]
            for s in range(S):
                causal = past_b + s + 1
                lo = max(0, causal - window) if window > 0 else 0
                row = scores[s, :causal].copy()
                if softcap > 0:
                    row = softcap * np.tanh(row / softcap)
                if "attention_bias" in inp:
                    ab = inp["attention_bias"]
                    row = row + ab[b % ab.shape[0], h % ab.shape[1], s, :causal]
                if qk_mode == 1:
                    qk_out[b, h, s, :causal] = row
                row[:lo] = -np.inf
                sink = None
                if a.get("smooth_softmax", 0):
                    sink = 0.0
                if "head_sink" in inp:
                    sink = float(inp["head_sink"][h])
                p = softmax_rows(row, sink)
                if qk_mode == 2:
                    qk_out[b, h, s, :causal] = p
                out[b, s, h] = p @ pv_out[b, kh, :causal]
    outs = [out.reshape(B, S, N * H), pk_out, pv_out]
    if qk_mode:
        outs.append(qk_out)
    return outs


def contrib_rotary_model(inp, a):
    x = inp["input"].astype(np.float64)
    cos_c, sin_c, pos = inp["cos_cache"], inp["sin_cache"], inp["position_ids"]
    four_d = x.ndim == 4
    B = x.shape[0]
    S = x.shape[2] if four_d else x.shape[1]
    if pos.size == 1 and pos.ndim == 1:
        pos = np.broadcast_to(np.arange(S) + pos[0], (B, S))
    rot = a.get("rotary_embedding_dim", 0) or 2 * cos_c.shape[1]
    cos = cos_c[pos][..., :rot // 2].astype(np.float64)  # [B, S, half]
    sin = sin_c[pos][..., :rot // 2].astype(np.float64)
    if four_d:
        return [rotate(x, cos[:, None], sin[:, None], a.get("interleaved", 0))]
    N = a.get("num_heads", 0) or x.shape[2] // (2 * cos_c.shape[1])
    xs = x.reshape(B, S, N, -1)
    return [rotate(xs, cos[:, :, None], sin[:, :, None], a.get("interleaved", 0)).reshape(x.shape)]


def skip_simplified_model(inp, a):
    s = inp["input"].astype(np.float64) + inp["skip"]
    if "bias" in inp:
        s = s + inp["bias"]
    inv = 1.0 / np.sqrt((s * s).mean(axis=-1, keepdims=True) + a.get("epsilon", 1e-5))
    return [s * inv * inp["gamma"], None, inv, s]


def simplified_model(inp, a):
    x = inp["X"].astype(np.float64)
    axis = a.get("axis", -1) % x.ndim
    red = tuple(range(axis, x.ndim))
    inv = 1.0 / np.sqrt((x * x).mean(axis=red, keepdims=True) + a.get("epsilon", 1e-5))
    return [x * inv * inp["scale"], inv]


# ------------------------------------------------------------------ cases

def rnd(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def rope_caches(max_pos, half, base=10000.0):
    inv = 1.0 / base ** (np.arange(half) / half)
    ang = np.outer(np.arange(max_pos), inv)
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def gqa_case(rng, B=1, S=4, N=4, KV=2, H=16, past=0, buffer=None, seqlens=None, packed=False, rotary=0,
             cache_len=None, bias=False, sink=False, pos_ids=False, outputs=3, **attrs):
    """past: valid past tokens per batch (int or list); buffer: past buffer length (shared-buffer
    style when > past); seqlens: explicit seqlens_k (defaults to past + S - 1)."""
    pasts = past if isinstance(past, list) else [past] * B
    seq = np.array(seqlens if seqlens is not None else [p + S - 1 for p in pasts], np.int32)
    total = int(seq.max()) + 1
    inp = {}
    if packed:
        inp["query"] = rnd(rng, B, S, (N + 2 * KV) * H)
    else:
        inp["query"], inp["key"], inp["value"] = rnd(rng, B, S, N * H), rnd(rng, B, S, KV * H), rnd(rng, B, S, KV * H)
    buf = buffer if buffer is not None else max(pasts)
    if buf > 0 or any(pasts):
        pk, pv = rnd(rng, B, KV, buf, H), rnd(rng, B, KV, buf, H)
        for b, p in enumerate(pasts):  # positions past the valid ones hold stale data nobody reads
            pk[b, :, p:] = 7.0
            pv[b, :, p:] = -7.0
        inp["past_key"], inp["past_value"] = pk, pv
    inp["seqlens_k"] = seq
    inp["total_sequence_length"] = np.array([total], np.int32)
    if rotary:
        cos, sin = rope_caches(cache_len or total + 3, rotary // 2)
        inp["cos_cache"], inp["sin_cache"] = cos, sin
        attrs["do_rotary"] = 1
    if pos_ids:
        inp["position_ids"] = np.array([np.arange(S) + p for p in pasts], np.int64)
    if bias:
        inp["attention_bias"] = rnd(rng, 1 if bias == "b1" else B, N if bias != "h1" else 1, S, total)
    if sink:
        inp["head_sink"] = rnd(rng, N)
    attrs.update(num_heads=N, kv_num_heads=KV)
    names = ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length", "cos_cache",
             "sin_cache", "position_ids", "attention_bias", "head_sink"]
    out_names = ["output", "present_key", "present_value", "output_qk"][:outputs]
    return ("GroupQueryAttention", MS, 17, [(n, inp.get(n)) for n in names], out_names, attrs, gqa_model)


def gqa_cases(rng):
    c = {}
    c["gqa_prefill_ratio2"] = gqa_case(rng, S=5, N=4, KV=2, H=16)
    c["gqa_prefill_ratio1"] = gqa_case(rng, S=3, N=2, KV=2, H=8)
    c["gqa_prefill_ratio8_rotary"] = gqa_case(rng, S=7, N=8, KV=1, H=16, rotary=16)
    c["gqa_prefill_rotary_interleaved_partial"] = gqa_case(rng, S=6, N=4, KV=1, H=32, rotary=16,
                                                           rotary_interleaved=1)
    c["gqa_prefill_batch2"] = gqa_case(rng, B=2, S=4, N=4, KV=4, H=16)
    c["gqa_prefill_window"] = gqa_case(rng, S=9, N=4, KV=2, H=16, local_window_size=3)
    c["gqa_prefill_softcap"] = gqa_case(rng, S=6, N=4, KV=2, H=16, softcap=0.5, scale=0.7)
    c["gqa_prefill_packed_rotary"] = gqa_case(rng, S=5, N=4, KV=2, H=16, packed=True, rotary=16)
    c["gqa_prefill_into_buffer"] = gqa_case(rng, S=5, N=4, KV=1, H=16, buffer=12, rotary=16)
    c["gqa_decode_shared_ratio4"] = gqa_case(rng, S=1, N=8, KV=2, H=32, past=6, buffer=12, rotary=32)
    c["gqa_decode_separate"] = gqa_case(rng, S=1, N=4, KV=2, H=16, past=6, rotary=16, rotary_interleaved=1)
    c["gqa_decode_batch2_ragged"] = gqa_case(rng, B=2, S=1, N=4, KV=1, H=16, past=[3, 9], buffer=12, rotary=16)
    c["gqa_decode_window"] = gqa_case(rng, S=1, N=4, KV=2, H=16, past=10, buffer=16, local_window_size=4)
    c["gqa_decode_softcap_packed"] = gqa_case(rng, S=1, N=4, KV=2, H=16, past=5, buffer=8, packed=True, softcap=2.0)
    c["gqa_decode_ratio8_head24"] = gqa_case(rng, S=1, N=8, KV=1, H=24, past=4, buffer=8)
    c["gqa_subsequent_prompt"] = gqa_case(rng, S=3, N=4, KV=2, H=16, past=5, buffer=10, rotary=16)
    c["gqa_smooth_softmax"] = gqa_case(rng, S=4, N=4, KV=2, H=16, smooth_softmax=1)
    c["gqa_head_sink"] = gqa_case(rng, S=1, N=4, KV=2, H=16, past=3, buffer=6, sink=True)
    c["gqa_attention_bias"] = gqa_case(rng, S=4, N=4, KV=2, H=16, bias=True)
    c["gqa_attention_bias_b1"] = gqa_case(rng, S=1, N=4, KV=2, H=16, past=4, buffer=6, bias="b1")
    c["gqa_position_ids"] = gqa_case(rng, S=1, N=4, KV=2, H=16, past=4, buffer=8, rotary=16, pos_ids=True)
    c["gqa_qk_before_softmax"] = gqa_case(rng, S=3, N=2, KV=1, H=16, outputs=4, qk_output=1)
    c["gqa_qk_after_softmax"] = gqa_case(rng, S=1, N=2, KV=1, H=16, past=3, buffer=5, outputs=4, qk_output=2)
    return c


def rotary_cases(rng):
    c = {}

    def case(x, pos, half, rot_dim=0, **attrs):
        cos, sin = rope_caches(12, half)
        if rot_dim:
            attrs["rotary_embedding_dim"] = rot_dim
        ins = [("input", x), ("position_ids", pos), ("cos_cache", cos), ("sin_cache", sin)]
        return ("RotaryEmbedding", MS, 17, ins, ["output"], attrs, contrib_rotary_model)

    c["rotary_contrib_3d"] = case(rnd(rng, 2, 3, 4 * 16), np.array([[0, 1, 2], [4, 5, 6]], np.int64), 8, num_heads=4)
    c["rotary_contrib_3d_interleaved_offset"] = case(rnd(rng, 1, 4, 2 * 32), np.array([3], np.int64), 16,
                                                     interleaved=1)
    c["rotary_contrib_4d"] = case(rnd(rng, 1, 2, 3, 16), np.array([[1, 2, 3]], np.int64), 8)
    c["rotary_contrib_partial"] = case(rnd(rng, 1, 3, 2 * 32), np.array([[0, 5, 9]], np.int64), 8, rot_dim=16,
                                       num_heads=2)
    return c


def norm_cases(rng):
    c = {}
    D = 24
    ins = [("input", rnd(rng, 2, 3, D)), ("skip", rnd(rng, 2, 3, D)), ("gamma", rnd(rng, D)), ("bias", rnd(rng, D))]
    c["skip_simplified_bias_all_outputs"] = ("SkipSimplifiedLayerNormalization", MS, 17, ins,
                                             ["output", "", "inv_std_var", "input_skip_bias_sum"], {"epsilon": 1e-6},
                                             skip_simplified_model)
    ins = [("input", rnd(rng, 1, 5, 13)), ("skip", rnd(rng, 1, 5, 13)), ("gamma", rnd(rng, 13))]
    c["skip_simplified_nobias_sum"] = ("SkipSimplifiedLayerNormalization", MS, 17, ins,
                                       ["output", "", "", "input_skip_bias_sum"], {}, skip_simplified_model)
    ins = [("input", rnd(rng, 3, 40)), ("skip", rnd(rng, 3, 40)), ("gamma", rnd(rng, 40))]
    c["skip_simplified_2d"] = ("SkipSimplifiedLayerNormalization", MS, 17, ins, ["output"], {"epsilon": 1e-5},
                               skip_simplified_model)
    ins = [("X", rnd(rng, 2, 3, 17)), ("scale", rnd(rng, 17))]
    c["simplified_layernorm_inv_std"] = ("SimplifiedLayerNormalization", "", 17, ins, ["Y", "inv_std_var"],
                                         {"epsilon": 1e-6}, simplified_model)
    ins = [("X", rnd(rng, 2, 3, 4)), ("scale", rnd(rng, 3, 4))]
    c["simplified_layernorm_axis1"] = ("SimplifiedLayerNormalization", "", 17, ins, ["Y"], {"axis": 1},
                                       simplified_model)
    return c


def onnx23_cases(rng):
    """ONNX opset-23 ops the dynamo exporter emits; ORT's outputs only (no numpy model)."""
    c = {}
    q, k, v = rnd(rng, 1, 8, 3, 16), rnd(rng, 1, 2, 3, 16), rnd(rng, 1, 2, 3, 16)
    pk, pv = rnd(rng, 1, 2, 5, 16), rnd(rng, 1, 2, 5, 16)
    ins = [("Q", q), ("K", k), ("V", v), ("attn_mask", None), ("past_key", pk), ("past_value", pv)]
    c["attention23_gqa_past_causal"] = ("Attention", "", 23, ins, ["Y", "present_key", "present_value"],
                                        {"is_causal": 1}, None)
    ins = [("Q", rnd(rng, 2, 4, 4 * 8)), ("K", rnd(rng, 2, 6, 2 * 8)), ("V", rnd(rng, 2, 6, 2 * 12)),
           ("attn_mask", rnd(rng, 4, 6))]
    c["attention23_3d_mask_softcap_qk"] = ("Attention", "", 23, ins, ["Y", "", "", "qk"],
                                           {"q_num_heads": 4, "kv_num_heads": 2, "softcap": 0.8,
                                            "qk_matmul_output_mode": 1}, None)
    ins = [("Q", rnd(rng, 1, 4, 1, 16)), ("K", rnd(rng, 1, 1, 1, 16)), ("V", rnd(rng, 1, 1, 1, 16)),
           ("attn_mask", None), ("past_key", rnd(rng, 1, 1, 9, 16)), ("past_value", rnd(rng, 1, 1, 9, 16))]
    c["attention23_decode_mqa_scale"] = ("Attention", "", 23, ins, ["Y", "present_key", "present_value"],
                                         {"scale": 0.3, "is_causal": 1}, None)
    ins = [("X", rnd(rng, 2, 3, 24)), ("scale", rnd(rng, 24))]
    c["rmsnorm23"] = ("RMSNormalization", "", 23, ins, ["Y"], {"epsilon": 1e-6}, None)
    cos, sin = rope_caches(10, 8)
    ins = [("X", rnd(rng, 1, 3, 2 * 16)), ("cos_cache", cos), ("sin_cache", sin),
           ("position_ids", np.array([[2, 3, 4]], np.int64))]
    c["rotary23_3d_position_ids"] = ("RotaryEmbedding", "", 23, ins, ["Y"], {"num_heads": 2, "interleaved": 1}, None)
    return c


def genai_form_cases(rng):
    """Input forms ORT GenAI's graphs feed: seqlens_k [B, 1] from ReduceSum(attention_mask, keepdims)."""
    name, domain, opset, ins, outs, attrs, model = gqa_case(rng, B=2, S=1, N=4, KV=2, H=16, past=[2, 5], buffer=8,
                                                             rotary=16)
    ins = [(n, a.reshape(-1, 1) if n == "seqlens_k" else a) for n, a in ins]
    return {"gqa_seqlens_k_2d": (name, domain, opset, ins, outs, attrs, model)}


def write_case(out_dir, name, case):
    op, domain, opset, inputs, outputs, attrs, numpy_model = case
    dst = os.path.join(out_dir, name)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(os.path.join(dst, "test_data_set_0"))
    model_path = os.path.join(dst, "model.onnx")
    onnx.save(make_model(op, domain, inputs, outputs, attrs, opset), model_path)
    given = {n: a for n, a in inputs if a is not None}
    got = ort_outputs(model_path, given)
    if numpy_model is not None:
        want = [w for w, n in zip(numpy_model(given, attrs), outputs + [""] * 4) if n]
        for i, (g, w) in enumerate(zip(got, want)):
            if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
                diff = np.abs(g - w).max() if g.shape == w.shape else f"shape {g.shape} vs {w.shape}"
                raise RuntimeError(f"{name}: ORT and the numpy model disagree on output {i}: {diff}")
    for i, a in enumerate(given.values()):
        with open(os.path.join(dst, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, list(given)[i]).SerializeToString())
    for i, (g, n) in enumerate(zip(got, [n for n in outputs if n])):
        with open(os.path.join(dst, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(g, n).SerializeToString())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "models_llm_ops"))
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    rng = np.random.default_rng(24)
    cases = {}
    for family in (gqa_cases, rotary_cases, norm_cases, onnx23_cases, genai_form_cases):
        cases.update(family(rng))
    failed = 0
    for name, case in cases.items():
        if args.only not in name:
            continue
        try:
            write_case(args.out, name, case)
            print(f"{name}: ok", file=sys.stderr)
        except RuntimeError as e:
            failed += 1
            print(f"{name}: {e}", file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
