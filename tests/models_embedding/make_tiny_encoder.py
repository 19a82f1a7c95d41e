#!/usr/bin/python3
"""Writes tests/models_embedding/tiny_encoder: a random-weight BERT-style sentence encoder in the
sentence-transformers ONNX folder layout, and the embeddings a numpy forward pass gives for a few
token sequences (tiny_encoder_expected.json), for `xonnx serve`'s /v1/embeddings tests.

    python3 tests/models_embedding/make_tiny_encoder.py            # needs python3-onnx, python3-numpy

The folder, as sentence-transformers writes one with an ONNX backend:
  model.onnx                 inputs input_ids, attention_mask, token_type_ids (int64 [batch, seq]);
                             output last_hidden_state (float [batch, seq, hidden]); weights inline
  modules.json               Transformer -> Pooling (1_Pooling) -> Normalize (2_Normalize)
  1_Pooling/config.json      mean pooling over the attention mask
  sentence_bert_config.json  max_seq_length
  tokenizer.json, tokenizer_config.json   the shipped tiny LLM's byte-level BPE (4096 tokens)

The graph: word + position + token-type embeddings, LayerNormalization, 2 post-norm encoder layers
(4 heads of 16, additive mask from attention_mask, Erf GELU feed-forward of 128), hidden 64.
The weights are random (seeded): the numbers mean nothing, so the tests compare numbers, not
similarities.
"""
import json
import math
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tiny_encoder")
TOKENIZER = os.path.join(HERE, "..", "models_llm", "tiny", "genai_fp32")
VOCAB, HIDDEN, HEADS, LAYERS, FFN, MAX_POS, TYPES = 4096, 64, 4, 2, 128, 128, 2
EPS = 1e-12
SEED = 21

# Token sequences the expected embeddings are computed for (ids of the tiny tokenizer; lengths
# differ so that a batched request pads).
CASES = [[72, 101, 108, 108, 111], [4093, 300, 1200, 17, 2048, 3999, 64, 9], [5], list(range(100, 160))]


def weights():
    rng = np.random.default_rng(SEED)
    w = {
        "word": rng.normal(0, 0.5, (VOCAB, HIDDEN)),
        "pos": rng.normal(0, 0.2, (MAX_POS, HIDDEN)),
        "type": rng.normal(0, 0.2, (TYPES, HIDDEN)),
        "ln_emb_g": 1 + rng.normal(0, 0.1, HIDDEN),
        "ln_emb_b": rng.normal(0, 0.1, HIDDEN),
    }
    for l in range(LAYERS):
        for name, shape in [("q", (HIDDEN, HIDDEN)), ("k", (HIDDEN, HIDDEN)), ("v", (HIDDEN, HIDDEN)),
                            ("o", (HIDDEN, HIDDEN)), ("ff1", (HIDDEN, FFN)), ("ff2", (FFN, HIDDEN))]:
            w[f"l{l}_{name}_w"] = rng.normal(0, 1 / math.sqrt(shape[0]), shape)
            w[f"l{l}_{name}_b"] = rng.normal(0, 0.05, shape[1])
        for ln in ("ln1", "ln2"):
            w[f"l{l}_{ln}_g"] = 1 + rng.normal(0, 0.1, HIDDEN)
            w[f"l{l}_{ln}_b"] = rng.normal(0, 0.1, HIDDEN)
    return {k: v.astype(np.float32) for k, v in w.items()}


def build_graph(w):
    nodes, inits = [], [numpy_helper.from_array(v, k) for k, v in w.items()]

    def const(name, values, dtype=np.int64):
        inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    const("zero", 0), const("one", 1), const("axis1", [1]), const("axes12", [1, 2])
    const("f_one", 1.0, np.float32), const("f_neg", -1e4, np.float32), const("f_half", 0.5, np.float32)
    const("f_rsqrt2", 1 / math.sqrt(2), np.float32), const("f_scale", 1 / math.sqrt(HIDDEN // HEADS), np.float32)
    const("heads_shape", [0, 0, HEADS, HIDDEN // HEADS]), const("hidden_shape", [0, 0, HIDDEN])

    seq = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), "one"], "seq_len", axis=0)
    positions = node("Range", ["zero", seq, "one"], "positions")
    x = node("Add", [node("Gather", ["word", "input_ids"], "e_word"), node("Gather", ["pos", positions], "e_pos")], "e_wp")
    x = node("Add", [x, node("Gather", ["type", "token_type_ids"], "e_type")], "e_sum")
    x = node("LayerNormalization", [x, "ln_emb_g", "ln_emb_b"], "emb", axis=-1, epsilon=EPS)
    # (1 - mask) * -1e4 as [batch, 1, 1, seq]
    mask_f = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", ["f_one", mask_f], "mask_inv"), "f_neg"], "mask_bias0")
    bias = node("Unsqueeze", [bias, "axes12"], "mask_bias")

    def dense(x, p):
        return node("Add", [node("MatMul", [x, p + "_w"], p + "_mm"), p + "_b"], p + "_out")

    def heads(x, p):
        return node("Transpose", [node("Reshape", [x, "heads_shape"], p + "_r")], p + "_t", perm=[0, 2, 1, 3])

    for l in range(LAYERS):
        p = f"l{l}"
        q, k, v = (heads(dense(x, f"{p}_{n}"), f"{p}_{n}h") for n in "qkv")
        kt = node("Transpose", [k], p + "_kt", perm=[0, 1, 3, 2])
        scores = node("Mul", [node("MatMul", [q, kt], p + "_qk"), "f_scale"], p + "_qks")
        probs = node("Softmax", [node("Add", [scores, bias], p + "_masked")], p + "_probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], p + "_ctx")], p + "_ctxt", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "hidden_shape"], p + "_ctxr")
        x = node("Add", [x, dense(ctx, p + "_o")], p + "_res1")
        x = node("LayerNormalization", [x, p + "_ln1_g", p + "_ln1_b"], p + "_x1", axis=-1, epsilon=EPS)
        h = dense(x, p + "_ff1")
        erf = node("Erf", [node("Mul", [h, "f_rsqrt2"], p + "_hs")], p + "_erf")
        gelu = node("Mul", [node("Mul", [h, "f_half"], p + "_hh"), node("Add", [erf, "f_one"], p + "_erf1")], p + "_gelu")
        x = node("Add", [x, dense(gelu, p + "_ff2")], p + "_res2")
        x = node("LayerNormalization", [x, p + "_ln2_g", p + "_ln2_b"],
                 "last_hidden_state" if l == LAYERS - 1 else p + "_x2", axis=-1, epsilon=EPS)

    ids = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    out = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", HIDDEN])]
    graph = helper.make_graph(nodes, "tiny_encoder", ids, out, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_tiny_encoder.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * g + b


def forward(w, ids):
    """The graph in float64 numpy for one unpadded sequence: [seq, hidden]."""
    ids = np.array(ids)
    x = w["word"][ids] + w["pos"][: len(ids)] + w["type"][0]
    x = layer_norm(x.astype(np.float64), w["ln_emb_g"], w["ln_emb_b"])
    erf = np.vectorize(math.erf)
    hd = HIDDEN // HEADS
    for l in range(LAYERS):
        p = f"l{l}"
        q, k, v = ((x @ w[f"{p}_{n}_w"] + w[f"{p}_{n}_b"]).reshape(len(ids), HEADS, hd).transpose(1, 0, 2) for n in "qkv")
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        ctx = ((s / s.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(len(ids), HIDDEN)
        x = layer_norm(x + ctx @ w[f"{p}_o_w"] + w[f"{p}_o_b"], w[f"{p}_ln1_g"], w[f"{p}_ln1_b"])
        h = x @ w[f"{p}_ff1_w"] + w[f"{p}_ff1_b"]
        x = layer_norm(x + (0.5 * h * (1 + erf(h / math.sqrt(2)))) @ w[f"{p}_ff2_w"] + w[f"{p}_ff2_b"],
                       w[f"{p}_ln2_g"], w[f"{p}_ln2_b"])
    return x


def main():
    w = weights()
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(os.path.join(OUT, "1_Pooling"))
    onnx.save(build_graph(w), os.path.join(OUT, "model.onnx"))
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(TOKENIZER, name), OUT)
    files = {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
        "1_Pooling/config.json": {"word_embedding_dimension": HIDDEN, "pooling_mode_cls_token": False,
                                  "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                                  "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
                                  "pooling_mode_lasttoken": False, "include_prompt": True},
        "sentence_bert_config.json": {"max_seq_length": MAX_POS, "do_lower_case": False},
    }
    for name, content in files.items():
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(content, f, indent=2)
            f.write("\n")
    expected = []
    for ids in CASES:
        pooled = forward(w, ids).mean(0)
        expected.append({"input": ids, "embedding": [float(v) for v in pooled / np.linalg.norm(pooled)]})
    with open(os.path.join(HERE, "tiny_encoder_expected.json"), "w") as f:
        json.dump({"dimensions": HIDDEN, "cases": expected}, f, indent=1)
        f.write("\n")
    print("wrote", OUT, "and tiny_encoder_expected.json")


if __name__ == "__main__":
    main()
