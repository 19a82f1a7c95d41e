"""A small Llama-style decoder in torch 1.13: RMSNorm, RoPE (rotate-half, as HF Llama), grouped-query
attention, SwiGLU MLP, tied input/output embeddings.

Variants for the converter's pattern tests (LlamaConfig; the defaults are the trained model's):
rope_style "cached" (cos/sin rows gathered from [context, head_dim] tables) or "computed" (cos/sin
computed from the positions in the graph, as HF transformers >= 4.36 does: inv_freq @ positions);
rope_interleaved (GPT-J / Meta style: rotate every two, tables with each frequency twice in a row);
mask_style "additive" (a 0 / finfo.min bias added to the scores) or "boolean" (masked_fill of the
scores where the bool mask forbids).

`forward_train` is the training path (no cache). `DecoderStep` wraps the model for
`torch.onnx.export` as one decoder step in the ONNX Runtime GenAI input/output form:
input_ids [b, s], attention_mask [b, past + s], past_key_values.N.key/value [b, kv_heads, past,
head_dim] -> logits [b, s, vocab], present.N.key/value [b, kv_heads, past + s, head_dim].
Positions are past .. past + s - 1 (no left padding), which is what GroupQueryAttention derives
from seqlens_k for an unpadded batch.
"""
import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class LlamaConfig:
    vocab_size: int = 4096
    hidden_size: int = 128
    num_layers: int = 6
    num_heads: int = 4
    num_kv_heads: int = 2
    head_dim: int = 32
    intermediate_size: int = 384
    context_length: int = 512  # length of the RoPE tables and the GenAI KV buffers
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5
    tie_embeddings: bool = True
    rope_style: str = "cached"  # "cached" | "computed"
    rope_interleaved: bool = False
    mask_style: str = "additive"  # "additive" | "boolean"

    def to_dict(self):
        return asdict(self)


def inv_frequencies(cfg):
    return 1.0 / (cfg.rope_theta ** (torch.arange(0, cfg.head_dim, 2, dtype=torch.int64).float() / cfg.head_dim))


def expand_frequencies(freqs, interleaved):
    """[..., head_dim / 2] angles -> [..., head_dim]: halves repeated (rotate-half) or each angle twice in
    a row (interleaved)."""
    if interleaved:
        return torch.stack((freqs, freqs), dim=-1).flatten(-2)
    return torch.cat((freqs, freqs), dim=-1)


def rope_tables(cfg):
    """cos, sin [context_length, head_dim] (each half repeated, HF Llama layout; interleaved: pairs)."""
    t = torch.arange(cfg.context_length, dtype=torch.int64).float()
    emb = expand_frequencies(torch.outer(t, inv_frequencies(cfg)), cfg.rope_interleaved)
    return emb.cos(), emb.sin()


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotate_every_two(x):
    return torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.q_proj = nn.Linear(cfg.hidden_size, cfg.num_heads * cfg.head_dim, bias=False)
        self.k_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * cfg.head_dim, bias=False)
        self.v_proj = nn.Linear(cfg.hidden_size, cfg.num_kv_heads * cfg.head_dim, bias=False)
        self.o_proj = nn.Linear(cfg.num_heads * cfg.head_dim, cfg.hidden_size, bias=False)

    def forward(self, x, cos, sin, bias, past_k=None, past_v=None):
        """x [b, s, d]; cos/sin [s, head_dim]; bias broadcastable to [b, h, s, total]."""
        cfg = self.cfg
        b, s = x.shape[0], x.shape[1]
        q = self.q_proj(x).view(b, s, cfg.num_heads, cfg.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, cfg.num_kv_heads, cfg.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, cfg.num_kv_heads, cfg.head_dim).transpose(1, 2)
        rotate = rotate_every_two if cfg.rope_interleaved else rotate_half
        q = q * cos + rotate(q) * sin
        k = k * cos + rotate(k) * sin
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        present_k, present_v = k, v
        rep = cfg.num_heads // cfg.num_kv_heads
        if rep > 1:
            t = k.shape[2]
            k = k[:, :, None].expand(b, cfg.num_kv_heads, rep, t, cfg.head_dim).reshape(b, cfg.num_heads, t, cfg.head_dim)
            v = v[:, :, None].expand(b, cfg.num_kv_heads, rep, t, cfg.head_dim).reshape(b, cfg.num_heads, t, cfg.head_dim)
        scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(cfg.head_dim))
        if bias.dtype == torch.bool:  # mask_style "boolean": True where a key is visible
            scores = scores.masked_fill(~bias, torch.finfo(torch.float32).min)
        else:
            scores = scores + bias
        probs = F.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, cfg.num_heads * cfg.head_dim)
        return self.o_proj(out), present_k, present_v


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.up_proj = nn.Linear(cfg.hidden_size, cfg.intermediate_size, bias=False)
        self.down_proj = nn.Linear(cfg.intermediate_size, cfg.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, bias, past_k=None, past_v=None):
        a, pk, pv = self.self_attn(self.input_layernorm(x), cos, sin, bias, past_k, past_v)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, pk, pv


class LlamaModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([Block(cfg) for _ in range(cfg.num_layers)])
        self.norm = RMSNorm(cfg.hidden_size, cfg.rms_norm_eps)
        self.lm_head = nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
        if cfg.tie_embeddings:
            self.lm_head.weight = self.embed_tokens.weight
        cos, sin = rope_tables(cfg)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)
        self.register_buffer("inv_freq", inv_frequencies(cfg), persistent=False)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2's scaled init of the residual projections
            if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.num_layers))

    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters())  # tied weights are counted once

    def forward_train(self, input_ids):
        s = input_ids.shape[1]
        causal = torch.full((s, s), torch.finfo(torch.float32).min).triu(1)
        x = self.embed_tokens(input_ids)
        cos, sin = self.rope_cos[:s], self.rope_sin[:s]
        for layer in self.layers:
            x, _, _ = layer(x, cos, sin, causal)
        return self.lm_head(self.norm(x))

    def forward_step(self, input_ids, attention_mask, past):
        """One decoder step with a KV cache. past: [(k, v)] per layer, [b, kv, past, hd] each."""
        s = input_ids.shape[1]
        past_len = past[0][0].shape[2]
        positions = torch.arange(s) + past_len
        total = attention_mask.shape[1]
        causal = torch.arange(total)[None, :] <= positions[:, None]  # [s, total]
        allowed = causal[None, None] & attention_mask[:, None, None, :].bool()
        if self.cfg.mask_style == "boolean":
            bias = allowed
        else:
            bias = torch.where(allowed, torch.zeros((), dtype=torch.float32),
                               torch.full((), torch.finfo(torch.float32).min))
        if self.cfg.rope_style == "computed":  # HF: (inv_freq [1, h/2, 1] @ positions [1, 1, s]).T
            freqs = (self.inv_freq[None, :, None] @ positions[None, None, :].float()).transpose(1, 2)
            emb = expand_frequencies(freqs, self.cfg.rope_interleaved)
            cos, sin = emb.cos()[:, None], emb.sin()[:, None]  # [1, 1, s, head_dim]
        else:
            cos, sin = self.rope_cos[positions], self.rope_sin[positions]
        x = self.embed_tokens(input_ids)
        present = []
        for layer, (pk, pv) in zip(self.layers, past):
            x, k, v = layer(x, cos, sin, bias, pk, pv)
            present.append((k, v))
        return self.lm_head(self.norm(x)), present

    def empty_past(self, batch=1):
        cfg = self.cfg
        z = torch.zeros(batch, cfg.num_kv_heads, 0, cfg.head_dim)
        return [(z, z) for _ in range(cfg.num_layers)]


class DecoderStep(nn.Module):
    """Flat-argument wrapper of LlamaModel.forward_step for torch.onnx.export."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, *past_flat):
        past = [(past_flat[2 * i], past_flat[2 * i + 1]) for i in range(len(past_flat) // 2)]
        logits, present = self.model.forward_step(input_ids, attention_mask, past)
        out = [logits]
        for k, v in present:
            out += [k, v]
        return tuple(out)


def io_names(num_layers):
    inputs = ["input_ids", "attention_mask"]
    outputs = ["logits"]
    for i in range(num_layers):
        inputs += [f"past_key_values.{i}.key", f"past_key_values.{i}.value"]
        outputs += [f"present.{i}.key", f"present.{i}.value"]
    return inputs, outputs
