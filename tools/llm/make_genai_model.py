#!/usr/bin/python3
"""Writes a Llama-style model folder in the ONNX Runtime GenAI layout, as GenAI's model builder
(onnxruntime_genai/models/builder.py) writes it for the CPU execution provider.

    make_genai_model.py --out DIR --checkpoint OUT/model.pt [--precision fp32|int4]   # trained weights
    make_genai_model.py --out DIR --preset 0.5b --precision int4                     # random weights
    make_genai_model.py --out DIR --shape hidden=64,layers=2,heads=4,kv_heads=2,intermediate=96,vocab=300,context=64

The folder: genai_config.json, model.onnx + model.onnx.data (every initializer external, streamed
to disk one tensor at a time), tokenizer.json + tokenizer_config.json (--tokenizer DIR).

The graph, node for node as the builder writes it (fp32 I/O, CPU):
  attention_mask -> ReduceSum(axis 1) -> Sub 1 -> Cast int32 = seqlens_k;
  attention_mask -> Shape -> Gather 1 -> Cast int32 = total_sequence_length;
  Gather(embed_tokens, input_ids);
  per layer: SimplifiedLayerNormalization (layer 0) or SkipSimplifiedLayerNormalization (com.microsoft,
  its output 3 the residual sum), one packed Q|K|V MatMul (--no-packed-qkv: three), GroupQueryAttention
  (com.microsoft; past/present share one buffer; do_rotary 1 with cos_cache/sin_cache
  [context, head/2]; local_window_size -1), o_proj MatMul, SkipSimplifiedLayerNormalization, gate/up
  MatMul, Sigmoid * gate (SiLU), * up, down MatMul; final SkipSimplifiedLayerNormalization; lm_head
  MatMul -> logits.
int4: every MatMul (lm_head too) becomes MatMulNBits (bits 4, block_size 32, accuracy_level 4, symmetric,
no zero points) as ORT's MatMulNBitsQuantizer writes it: weight "<name>_Q4" uint8 [N, K/32, 16]
(element 2i of a block in the low nibble), scales "<name>_scales" float [N * K/32], node "<name>_Q4".
The embedding stays a float Gather, as in the builder's default.
"""
import argparse
import json
import os
import shutil
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

PRESETS = {
    # ~0.34 B parameters; the reference shape (~194 MB of int4 weights read per token).
    "0.5b": dict(hidden=1024, layers=24, heads=16, kv_heads=4, intermediate=2816, vocab=32000, context=2048),
    # A small random shape for tests.
    "small": dict(hidden=64, layers=2, heads=4, kv_heads=2, intermediate=96, vocab=4096, context=128),
}
TOKENIZER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models_llm",
                             "tiny", "genai_fp32")


class Shape:
    def __init__(self, hidden, layers, heads, kv_heads, intermediate, vocab, context, head_dim=None,
                 rope_theta=10000.0, eps=1e-5, bos=None, eos=None, pad=None):
        self.hidden, self.layers, self.heads, self.kv_heads = hidden, layers, heads, kv_heads
        self.intermediate, self.vocab, self.context = intermediate, vocab, context
        self.head_dim = head_dim or hidden // heads
        self.rope_theta, self.eps = rope_theta, eps
        self.bos, self.eos, self.pad = bos, eos, pad
        if heads % kv_heads:
            raise SystemExit(f"heads {heads} is not a multiple of kv_heads {kv_heads}")
        if self.head_dim % 16:  # ORT's CPU GroupQueryAttention refuses other head sizes
            raise SystemExit(f"head size {self.head_dim} (hidden {hidden} / heads {heads}) is not a multiple of 16")

    def num_parameters(self, tied):
        per_layer = (self.hidden * self.head_dim * (2 * self.heads + 2 * self.kv_heads)
                     + 3 * self.hidden * self.intermediate + 2 * self.hidden)
        return self.layers * per_layer + self.vocab * self.hidden * (1 if tied else 2) + self.hidden


class RandomWeights:
    """Weights in torch layout ([out, in] for Linear), N(0, 0.02) per tensor from a seed derived from
    the tensor's name, so any tensor can be made alone and in any order; norms are 1."""

    def __init__(self, shape, seed):
        self.shape, self.seed = shape, seed
        self.tied = False

    def __call__(self, name, dims):
        if name.endswith("norm.weight"):
            return np.ones(dims, dtype=np.float32)
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
        return (rng.standard_normal(dims, dtype=np.float32) * 0.02).astype(np.float32)


class CheckpointWeights:
    """The trained model's weights (train_tiny_llm.py's model.pt)."""

    def __init__(self, path):
        import torch
        ckpt = torch.load(path, map_location="cpu")
        c = ckpt["config"]
        self.shape = Shape(c["hidden_size"], c["num_layers"], c["num_heads"], c["num_kv_heads"],
                           c["intermediate_size"], c["vocab_size"], c["context_length"], head_dim=c["head_dim"],
                           rope_theta=c["rope_theta"], eps=c["rms_norm_eps"])
        self.tied = c["tie_embeddings"]
        self.state = {k: v.float().numpy() for k, v in ckpt["state_dict"].items()}

    def __call__(self, name, dims):
        w = self.state[name]
        if list(w.shape) != list(dims):
            raise SystemExit(f"checkpoint tensor {name} is {list(w.shape)}, expected {list(dims)}")
        return w


def rope_caches(shape):
    """cos/sin [context, head_dim / 2] as the builder makes them (float32 throughout)."""
    dim = shape.head_dim
    inv_freq = 1.0 / (shape.rope_theta ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float32) / dim))
    t = np.arange(shape.context, dtype=np.int64).astype(np.float32)
    freqs = np.outer(t, inv_freq).astype(np.float32)
    return np.cos(freqs).astype(np.float32), np.sin(freqs).astype(np.float32)


def quantize_int4(w_out_in, block_size=32):
    """ORT's symmetric blockwise 4-bit quantization of a torch-layout weight [N, K] (= MatMul B^T).
    Per block: the value of largest magnitude maps to -8, scale = that value / -8; codes
    clamp(round(w / scale) + 8, 0, 15). Returns packed uint8 [N, K/bs, bs/2] and scales [N * K/bs]."""
    n, k = w_out_in.shape
    blocks = (k + block_size - 1) // block_size
    w = np.zeros((n, blocks * block_size), dtype=np.float32)
    w[:, :k] = w_out_in
    w = w.reshape(n, blocks, block_size)
    idx = np.abs(w).argmax(axis=2)
    vmax = np.take_along_axis(w, idx[..., None], axis=2)[..., 0]
    scale = (vmax / -8.0).astype(np.float32)
    safe = np.where(scale == 0, 1.0, scale).astype(np.float32)
    q = np.where(scale[..., None] == 0, 8, np.clip(np.round(w / safe[..., None]) + 8, 0, 15)).astype(np.uint8)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)
    return packed, scale.reshape(-1)


def dequantize_int4(packed, scales, k):
    """The float [N, K] weight a quantize_int4 result stands for (for checks)."""
    n, blocks, half = packed.shape
    q = np.empty((n, blocks, half * 2), dtype=np.float32)
    q[..., 0::2] = packed & 0x0F
    q[..., 1::2] = packed >> 4
    w = (q - 8) * scales.reshape(n, blocks)[..., None]
    return w.reshape(n, blocks * half * 2)[:, :k]


class GraphWriter:
    """Collects nodes and writes initializers to the external data file as they come."""

    def __init__(self, out_dir, data_name="model.onnx.data"):
        self.data_name = data_name
        self.data = open(os.path.join(out_dir, data_name), "wb")
        self.offset = 0
        self.nodes, self.initializers = [], []
        self.constants = set()

    def initializer(self, name, array):
        array = np.ascontiguousarray(array)
        pad = (-self.offset) % 64  # keep every tensor 64-byte aligned in the file
        if pad:
            self.data.write(b"\0" * pad)
            self.offset += pad
        raw = array.tobytes()
        self.data.write(raw)
        t = TensorProto()
        t.name = name
        t.dims.extend(array.shape)
        t.data_type = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype]
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", self.data_name), ("offset", str(self.offset)), ("length", str(len(raw)))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += len(raw)
        self.initializers.append(t)
        return name

    def constant(self, dtype_name, values):
        """A Constant node named as the builder names them: /model/constants/INT64/1D/1."""
        dims = "0D" if np.ndim(values) == 0 else "1D"
        text = str(values) if dims == "0D" else ", ".join(str(v) for v in values)
        name = f"/model/constants/{dtype_name}/{dims}/{text}"
        if name not in self.constants:
            self.constants.add(name)
            np_type = {"INT64": np.int64, "FLOAT": np.float32}[dtype_name]
            value = numpy_helper.from_array(np.array(values, dtype=np_type), name=name.replace("constants", "numpy_helper"))
            self.nodes.append(helper.make_node("Constant", [], [name], name=name.replace("constants", "constant_nodes"),
                                               value=value))
        return name

    def node(self, op, inputs, name, outputs=None, domain="", **attrs):
        outputs = outputs or [f"{name}/output_0"]
        self.nodes.append(helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs))
        return outputs[0]

    def close(self):
        self.data.close()


def make_matmul(g, name, x, w_out_in, precision, output=None):
    """MatMul (weight stored [K, N]) or, in int4, MatMulNBits named as ORT's quantizer renames it."""
    weight = name[1:].replace("/", ".") + ".weight"
    out = [output] if output else None
    if precision == "fp32":
        g.initializer(weight, np.ascontiguousarray(w_out_in.T))
        return g.node("MatMul", [x, weight], name, outputs=out)
    n, k = w_out_in.shape
    packed, scales = quantize_int4(w_out_in)
    g.initializer(weight + "_Q4", packed)
    g.initializer(weight + "_scales", scales)
    outputs = out or [f"{name}/output_0"]
    return g.node("MatMulNBits", [x, weight + "_Q4", weight + "_scales"], name + "_Q4", outputs=outputs,
                  domain="com.microsoft", K=k, N=n, bits=4, block_size=32, accuracy_level=4)


def build(out_dir, shape, weights, precision, packed_qkv=True):
    s = shape
    g = GraphWriter(out_dir)
    b, seq, total, past = "batch_size", "sequence_length", "total_sequence_length", "past_sequence_length"
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [b, seq]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [b, total])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [b, seq, s.vocab])]
    for i in range(s.layers):
        for kv in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kv}", TensorProto.FLOAT,
                                                        [b, s.kv_heads, past, s.head_dim]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kv}", TensorProto.FLOAT,
                                                         [b, s.kv_heads, total, s.head_dim]))

    # seqlens_k and total_sequence_length from the 2-D mask.
    mask = "/model/attn_mask_reformat/attn_mask_subgraph"
    one_1d = g.constant("INT64", [1])
    red = g.node("ReduceSum", ["attention_mask", one_1d], f"{mask}/ReduceSum")
    sub = g.node("Sub", [red, one_1d], f"{mask}/Sub")
    seqlens_k = g.node("Cast", [sub], f"{mask}/Sub/Cast", to=TensorProto.INT32)
    shp = g.node("Shape", ["attention_mask"], f"{mask}/Shape")
    gat = g.node("Gather", [shp, g.constant("INT64", 1)], f"{mask}/Gather", axis=0)
    total_len = g.node("Cast", [gat], f"{mask}/Gather/Cast", to=TensorProto.INT32)

    emb = g.initializer("model.embed_tokens.weight", weights("embed_tokens.weight", [s.vocab, s.hidden]))
    root = g.node("Gather", [emb, "input_ids"], "/model/embed_tokens/Gather")
    cos, sin = rope_caches(s)
    g.initializer("cos_cache", cos)
    g.initializer("sin_cache", sin)

    def layernorm(layer, location, weight_src, root_in, skip_in, last=False):
        weight = g.initializer(f"model.layers.{layer}.{location}_layernorm.weight", weights(weight_src, [s.hidden]))
        base = f"/model/layers.{layer}/{location}_layernorm"
        out0 = f"{base}/output_0"
        if skip_in is None:
            g.node("SimplifiedLayerNormalization", [root_in, weight], f"{base}/LayerNorm", outputs=[out0],
                   epsilon=s.eps, axis=-1, stash_type=1)
            return out0, root_in
        out3 = f"{base}/output_3"
        outs = [out0] if last else [out0, "", "", out3]
        g.node("SkipSimplifiedLayerNormalization", [root_in, skip_in, weight], f"{base}/SkipLayerNorm",
               outputs=outs, domain="com.microsoft", epsilon=s.eps)
        return out0, out3

    skip = None
    q_size, kv_size = s.heads * s.head_dim, s.kv_heads * s.head_dim
    for i in range(s.layers):
        p = f"layers.{i}"
        normed, root = layernorm(i, "input", f"{p}.input_layernorm.weight", root, skip)
        wq = weights(f"{p}.self_attn.q_proj.weight", [q_size, s.hidden])
        wk = weights(f"{p}.self_attn.k_proj.weight", [kv_size, s.hidden])
        wv = weights(f"{p}.self_attn.v_proj.weight", [kv_size, s.hidden])
        attn = f"/model/layers.{i}/attn"
        if packed_qkv:
            q = make_matmul(g, f"{attn}/qkv_proj/MatMul", normed, np.concatenate([wq, wk, wv], axis=0), precision)
            k = v = ""
        else:
            q = make_matmul(g, f"{attn}/q_proj/MatMul", normed, wq, precision)
            k = make_matmul(g, f"{attn}/k_proj/MatMul", normed, wk, precision)
            v = make_matmul(g, f"{attn}/v_proj/MatMul", normed, wv, precision)
        del wq, wk, wv
        a = g.node("GroupQueryAttention",
                   [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", seqlens_k, total_len,
                    "cos_cache", "sin_cache"],
                   f"{attn}/GroupQueryAttention",
                   outputs=[f"{attn}/GroupQueryAttention/output_0", f"present.{i}.key", f"present.{i}.value"],
                   domain="com.microsoft", num_heads=s.heads, kv_num_heads=s.kv_heads,
                   scale=float(1.0 / np.sqrt(s.head_dim)), local_window_size=-1, softcap=0.0,
                   do_rotary=1, rotary_interleaved=0)
        skip = make_matmul(g, f"{attn}/o_proj/MatMul", a, weights(f"{p}.self_attn.o_proj.weight", [s.hidden, q_size]),
                           precision)
        normed, root = layernorm(i, "post_attention", f"{p}.post_attention_layernorm.weight", root, skip)
        mlp = f"/model/layers.{i}/mlp"
        gate = make_matmul(g, f"{mlp}/gate_proj/MatMul", normed,
                           weights(f"{p}.mlp.gate_proj.weight", [s.intermediate, s.hidden]), precision)
        up = make_matmul(g, f"{mlp}/up_proj/MatMul", normed,
                         weights(f"{p}.mlp.up_proj.weight", [s.intermediate, s.hidden]), precision)
        sig = g.node("Sigmoid", [gate], f"{mlp}/act_fn/Sigmoid")
        act = g.node("Mul", [gate, sig], f"{mlp}/act_fn/Mul")
        mul = g.node("Mul", [act, up], f"{mlp}/Mul")
        skip = make_matmul(g, f"{mlp}/down_proj/MatMul", mul,
                           weights(f"{p}.mlp.down_proj.weight", [s.hidden, s.intermediate]), precision)
    normed, _ = layernorm(s.layers, "final_norm", "norm.weight", root, skip, last=True)
    head = "embed_tokens.weight" if weights.tied else "lm_head.weight"
    make_matmul(g, "/lm_head/MatMul", normed, weights(head, [s.vocab, s.hidden]), precision, output="logits")
    g.close()

    graph = helper.make_graph(g.nodes, "main_graph", inputs, outputs, initializer=g.initializers)
    model = helper.make_model(graph, producer_name="onnxruntime-genai",
                              opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10
    with open(os.path.join(out_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def genai_config(shape):
    s = shape
    return {
        "model": {
            "bos_token_id": s.bos,
            "context_length": s.context,
            "decoder": {
                "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                "filename": "model.onnx",
                "head_size": s.head_dim,
                "hidden_size": s.hidden,
                "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask",
                           "past_key_names": "past_key_values.%d.key", "past_value_names": "past_key_values.%d.value"},
                "outputs": {"logits": "logits", "present_key_names": "present.%d.key",
                            "present_value_names": "present.%d.value"},
                "num_attention_heads": s.heads,
                "num_hidden_layers": s.layers,
                "num_key_value_heads": s.kv_heads,
            },
            "eos_token_id": s.eos,
            "pad_token_id": s.pad,
            "type": "llama",
            "vocab_size": s.vocab,
        },
        "search": {
            "diversity_penalty": 0.0, "do_sample": False, "early_stopping": True, "length_penalty": 1.0,
            "max_length": s.context, "min_length": 0, "no_repeat_ngram_size": 0, "num_beams": 1,
            "num_return_sequences": 1, "past_present_share_buffer": True, "repetition_penalty": 1.0,
            "temperature": 1.0, "top_k": 50, "top_p": 1.0,
        },
    }


def special_ids(tokenizer_dir):
    """bos / eos (list: eos and <|im_end|> when present) / pad ids from tokenizer_config.json."""
    with open(os.path.join(tokenizer_dir, "tokenizer_config.json")) as f:
        cfg = json.load(f)
    by_content = {v["content"]: int(k) for k, v in cfg.get("added_tokens_decoder", {}).items()}
    bos, eos, pad = (by_content.get(cfg.get(key)) for key in ("bos_token", "eos_token", "pad_token"))
    eos_list = [eos] + ([by_content["<|im_end|>"]] if "<|im_end|>" in by_content else [])
    return bos, eos_list, pad if pad is not None else eos


def parse_shape(text):
    fields = dict(PRESETS["small"])
    for item in text.split(","):
        key, _, value = item.partition("=")
        if key not in fields:
            raise SystemExit(f"--shape: unknown field {key!r} (known: {', '.join(fields)})")
        fields[key] = int(value)
    return fields


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="the model folder to write")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--checkpoint", help="train_tiny_llm.py's model.pt (the tiny preset)")
    src.add_argument("--preset", choices=sorted(PRESETS), help="random weights of a preset shape")
    src.add_argument("--shape", help="random weights: hidden=,layers=,heads=,kv_heads=,intermediate=,vocab=,context=")
    ap.add_argument("--precision", choices=["fp32", "int4"], default="fp32")
    ap.add_argument("--tokenizer", default=TOKENIZER_DIR, help="folder with tokenizer.json and tokenizer_config.json")
    ap.add_argument("--seed", type=int, default=42, help="random weights' seed")
    ap.add_argument("--no-packed-qkv", action="store_true", help="three Q/K/V MatMuls instead of one packed")
    args = ap.parse_args()

    if args.checkpoint:
        weights = CheckpointWeights(args.checkpoint)
        shape = weights.shape
    else:
        fields = PRESETS[args.preset] if args.preset else parse_shape(args.shape)
        shape = Shape(**fields)
        weights = RandomWeights(shape, args.seed)
    shape.bos, shape.eos, shape.pad = special_ids(args.tokenizer)
    if len(shape.eos) == 1:
        shape.eos = shape.eos[0]
    os.makedirs(args.out, exist_ok=True)
    build(args.out, shape, weights, args.precision, packed_qkv=not args.no_packed_qkv)
    with open(os.path.join(args.out, "genai_config.json"), "w") as f:
        json.dump(genai_config(shape), f, indent=4)
        f.write("\n")
    for name in ("tokenizer.json", "tokenizer_config.json"):
        src_path = os.path.join(args.tokenizer, name)
        if os.path.abspath(src_path) != os.path.abspath(os.path.join(args.out, name)):
            shutil.copyfile(src_path, os.path.join(args.out, name))
    size = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out))
    print(f"{args.out}: {args.precision}, {shape.num_parameters(weights.tied)} parameters, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
