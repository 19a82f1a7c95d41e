"""Model definitions of the zoo (tools/export_zoo.py) that torchvision does not provide.

Written in plain torch after the published architectures (shapes and operator mix as their
torch exports have them), small enough to benchmark on 2 cores. Weights are random: callers
seed torch first; nothing is downloaded.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# ----------------------------------------------------------------------------- wrappers
class FirstOutput(nn.Module):
    """A torchvision segmentation model's dict output -> its "out" tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


class SsdBackboneHead(nn.Module):
    """SSDlite's backbone and head: box regression and class logits per anchor, before the
    anchor decoding and NMS (torchvision's postprocessing, which does not trace to ONNX)."""

    def __init__(self, ssd):
        super().__init__()
        self.backbone = ssd.backbone
        self.head = ssd.head

    def forward(self, x):
        features = list(self.backbone(x).values())
        out = self.head(features)
        return out["bbox_regression"], out["cls_logits"]


# ------------------------------------------------------------------------------ U-Net
def _double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class UNet(nn.Module):
    """Four-level U-Net: the two deep up-steps are ConvTranspose (stride 2), the two shallow
    ones bilinear Resize (align_corners=False), as the common U-Net implementations mix them."""

    def __init__(self, in_ch=3, classes=2, width=32):
        super().__init__()
        w = [width, width * 2, width * 4, width * 8, width * 16]
        self.inc = _double_conv(in_ch, w[0])
        self.downs = nn.ModuleList([_double_conv(w[i], w[i + 1]) for i in range(4)])
        self.up_t = nn.ModuleList([nn.ConvTranspose2d(w[4], w[3], 2, stride=2),
                                   nn.ConvTranspose2d(w[3], w[2], 2, stride=2)])
        self.up_convs = nn.ModuleList([_double_conv(w[4], w[3]), _double_conv(w[3], w[2]),
                                       _double_conv(w[2] + w[1], w[1]), _double_conv(w[1] + w[0], w[0])])
        self.outc = nn.Conv2d(w[0], classes, 1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(F.max_pool2d(skips[-1], 2)))
        x = skips.pop()
        for i, conv in enumerate(self.up_convs):
            skip = skips.pop()
            if i < 2:
                x = self.up_t[i](x)
            else:
                x = F.interpolate(x, size=skip.shape[2:], mode="bilinear", align_corners=False)
            x = conv(torch.cat([skip, x], dim=1))
        return self.outc(x)


# ------------------------------------------------------------------------ BERT family
class BertLayer(nn.Module):
    """Post-LN encoder layer as HF BERT writes it: q/k/v Linear, additive mask, erf GELU."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, additive_mask):
        b, s, d = x.shape
        hd = d // self.heads

        def split(t):
            return t.view(b, s, self.heads, hd).permute(0, 2, 1, 3)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd) + additive_mask
        y = torch.matmul(att.softmax(-1), v).permute(0, 2, 1, 3).reshape(b, s, d)
        x = self.ln1(x + self.o(y))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class BertEncoder(nn.Module):
    """BERT: word + position + token-type embeddings, LayerNorm, N post-LN layers, tanh pooler
    and a classifier on [CLS]. Inputs input_ids, attention_mask (1 = token), token_type_ids;
    outputs the last hidden state and the logits (the encoders below do the same)."""

    def __init__(self, vocab=30522, d=768, layers=12, heads=12, ff=3072, max_pos=512, classes=2):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.token_type = nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(d, heads, ff) for _ in range(layers)])
        self.pooler = nn.Linear(d, d)
        self.classifier = nn.Linear(d, classes)

    def forward(self, input_ids, attention_mask, token_type_ids):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.token_type(token_type_ids))
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, additive)
        return x, self.classifier(torch.tanh(self.pooler(x[:, 0])))


class DistilBertLayer(nn.Module):
    """DistilBERT's layer: a boolean mask through masked_fill (float min), post-LN."""

    def __init__(self, d, heads, ff):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, masked):
        b, s, d = x.shape
        hd = d // self.heads

        def split(t):
            return t.view(b, -1, self.heads, hd).transpose(1, 2)

        q = split(self.q(x)) / math.sqrt(hd)
        scores = torch.matmul(q, split(self.k(x)).transpose(2, 3))
        scores = scores.masked_fill(masked, torch.finfo(scores.dtype).min)
        y = torch.matmul(F.softmax(scores, dim=-1), split(self.v(x)))
        x = self.ln1(x + self.o(y.transpose(1, 2).reshape(b, -1, d)))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class DistilBert(nn.Module):
    def __init__(self, vocab=30522, d=768, layers=6, heads=12, ff=3072, max_pos=512, classes=2):
        super().__init__()
        self.word = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.ln = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList([DistilBertLayer(d, heads, ff) for _ in range(layers)])
        self.pre_classifier = nn.Linear(d, d)
        self.classifier = nn.Linear(d, classes)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos))
        masked = (attention_mask == 0).view(attention_mask.shape[0], 1, 1, -1)
        for layer in self.layers:
            x = layer(x, masked)
        return x, self.classifier(F.relu(self.pre_classifier(x[:, 0])))


class AlbertEncoder(nn.Module):
    """ALBERT: factorized embeddings (E < d) and ONE encoder layer applied `repeats` times.
    torch writes the reused layer's folded (transposed) weights once and feeds the other uses
    through Identity nodes: the zoo's shared-weights export."""

    def __init__(self, vocab=30000, e=128, d=512, heads=8, ff=2048, repeats=6, max_pos=512, classes=2):
        super().__init__()
        self.word = nn.Embedding(vocab, e)
        self.pos = nn.Embedding(max_pos, e)
        self.ln = nn.LayerNorm(e, eps=1e-12)
        self.project = nn.Linear(e, d)
        self.layer = BertLayer(d, heads, ff)
        self.repeats = repeats
        self.classifier = nn.Linear(d, classes)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        x = self.project(self.ln(self.word(input_ids) + self.pos(pos)))
        additive = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for _ in range(self.repeats):
            x = self.layer(x, additive)
        return x, self.classifier(torch.tanh(x[:, 0]))


# ---------------------------------------------------------------------------- Whisper
class MultiHeadAttention(nn.Module):
    """Whisper's attention: k without bias; optional KV cache (self) or given k/v (cross)."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def heads_of(self, t):
        b, s, d = t.shape
        return t.view(b, s, self.heads, d // self.heads).transpose(1, 2)

    def attend(self, q, k, v, mask=None):
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        if mask is not None:
            scores = scores + mask
        y = torch.matmul(scores.softmax(-1), v).transpose(1, 2)
        return self.o(y.reshape(y.shape[0], y.shape[1], -1))

    def forward(self, x):
        return self.attend(self.heads_of(self.q(x)), self.heads_of(self.k(x)), self.heads_of(self.v(x)))


class WhisperEncoderBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = MultiHeadAttention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def sinusoids(length, channels):
    inv = torch.exp(-math.log(10000) / (channels // 2 - 1) * torch.arange(channels // 2))
    t = torch.arange(length)[:, None] * inv[None, :]
    return torch.cat([torch.sin(t), torch.cos(t)], dim=1)


class WhisperEncoder(nn.Module):
    """Whisper-tiny's encoder (d 384, 6 heads, 4 layers): two Conv1d + GELU over the log-mel
    frames (the second one stride 2), sinusoidal positions, pre-LN blocks, final LayerNorm."""

    def __init__(self, mels=80, frames=1000, d=384, heads=6, layers=4):
        super().__init__()
        self.conv1 = nn.Conv1d(mels, d, 3, padding=1)
        self.conv2 = nn.Conv1d(d, d, 3, stride=2, padding=1)
        self.register_buffer("positions", sinusoids(frames // 2, d))
        self.blocks = nn.ModuleList([WhisperEncoderBlock(d, heads) for _ in range(layers)])
        self.ln_post = nn.LayerNorm(d)

    def forward(self, mel):
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).permute(0, 2, 1)
        x = x + self.positions
        for block in self.blocks:
            x = block(x)
        return self.ln_post(x)


class WhisperDecoderBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.self_attn = MultiHeadAttention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.cross_attn = MultiHeadAttention(d, heads)
        self.ln3 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, past_k, past_v, cross_k, cross_v):
        a = self.self_attn
        h = self.ln1(x)
        k = torch.cat([past_k, a.heads_of(a.k(h))], dim=2)
        v = torch.cat([past_v, a.heads_of(a.v(h))], dim=2)
        x = x + a.attend(a.heads_of(a.q(h)), k, v)  # one new token: it sees every cached one
        c = self.cross_attn
        x = x + c.attend(c.heads_of(c.q(self.ln2(x))), cross_k, cross_v)
        return x + self.mlp(self.ln3(x)), k, v


class WhisperDecoderStep(nn.Module):
    """Whisper-tiny's decoder, one token with a KV cache, as Optimum's decoder-with-past export:
    inputs input_ids [b, 1], per layer the self-attention cache past_key_i / past_value_i
    [b, 6, past, 64] and the cross-attention keys/values of the encoder output cross_key_i /
    cross_value_i [b, 6, frames, 64]; outputs logits (tied to the token embedding) and the
    updated self-attention cache."""

    def __init__(self, vocab=51865, d=384, heads=6, layers=4, max_pos=448):
        super().__init__()
        self.token = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_pos, d)
        self.blocks = nn.ModuleList([WhisperDecoderBlock(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)

    def forward(self, input_ids, *cache):
        layers = len(self.blocks)
        past, cross = cache[:2 * layers], cache[2 * layers:]
        start = past[0].shape[2]
        pos = torch.arange(start, start + input_ids.shape[1], device=input_ids.device)
        x = self.token(input_ids) + self.pos(pos).unsqueeze(0)
        presents = []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, past[2 * i], past[2 * i + 1], cross[2 * i], cross[2 * i + 1])
            presents += [k, v]
        logits = torch.matmul(self.ln(x), self.token.weight.t())
        return (logits, *presents)


# --------------------------------------------------------------------------------- T5
class T5LayerNorm(nn.Module):
    """RMS norm without mean subtraction or bias (T5's LayerNorm)."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def relative_bucket(relative, bidirectional, buckets=32, max_distance=128):
    """T5's relative-position bucketing (log-spaced beyond buckets/2), as HF computes it."""
    result = torch.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        result = result + (relative > 0).to(torch.long) * buckets
        relative = torch.abs(relative)
    else:
        relative = -torch.min(relative, torch.zeros_like(relative))
    exact = buckets // 2
    large = exact + (torch.log(relative.float() / exact) / math.log(max_distance / exact)
                     * (buckets - exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, buckets - 1))
    return result + torch.where(relative < exact, relative, large)


class T5Attention(nn.Module):
    def __init__(self, d, heads, d_kv, bias_table=False, bidirectional=True):
        super().__init__()
        self.heads, self.d_kv, self.bidirectional = heads, d_kv, bidirectional
        self.q = nn.Linear(d, heads * d_kv, bias=False)
        self.k = nn.Linear(d, heads * d_kv, bias=False)
        self.v = nn.Linear(d, heads * d_kv, bias=False)
        self.o = nn.Linear(heads * d_kv, d, bias=False)
        self.bias_table = nn.Embedding(32, heads) if bias_table else None

    def position_bias(self, q_len, k_len):
        ctx = torch.arange(q_len)[:, None]
        mem = torch.arange(k_len)[None, :]
        bucket = relative_bucket(mem - ctx, self.bidirectional)
        return self.bias_table(bucket).permute(2, 0, 1).unsqueeze(0)  # [1, heads, q, k]

    def forward(self, x, kv, bias):
        b = x.shape[0]

        def split(t):
            return t.view(b, -1, self.heads, self.d_kv).transpose(1, 2)

        scores = torch.matmul(split(self.q(x)), split(self.k(kv)).transpose(3, 2)) + bias  # T5: no 1/sqrt(d)
        y = torch.matmul(scores.softmax(-1), split(self.v(kv))).transpose(1, 2)
        return self.o(y.reshape(b, -1, self.heads * self.d_kv))


class T5Block(nn.Module):
    def __init__(self, d, heads, d_kv, ff, first, decoder):
        super().__init__()
        self.ln1 = T5LayerNorm(d)
        self.self_attn = T5Attention(d, heads, d_kv, bias_table=first, bidirectional=not decoder)
        self.cross_attn = T5Attention(d, heads, d_kv) if decoder else None
        self.ln_cross = T5LayerNorm(d) if decoder else None
        self.ln2 = T5LayerNorm(d)
        self.wi = nn.Linear(d, ff, bias=False)
        self.wo = nn.Linear(ff, d, bias=False)

    def forward(self, x, bias, memory=None, memory_bias=None):
        h = self.ln1(x)
        x = x + self.self_attn(h, h, bias)
        if self.cross_attn is not None:
            x = x + self.cross_attn(self.ln_cross(x), memory, memory_bias)
        return x + self.wo(F.relu(self.wi(self.ln2(x))))


class T5(nn.Module):
    """T5-small (d 512, 8 heads, d_kv 64, ff 2048, 6 + 6 layers): shared token embedding for
    the encoder, the decoder and the (scaled, tied) LM head; relative position bias computed
    in the graph; padding mask on the encoder side, causal mask in the decoder. Inputs
    input_ids, attention_mask, decoder_input_ids; output logits."""

    def __init__(self, vocab=32128, d=512, heads=8, d_kv=64, ff=2048, layers=6):
        super().__init__()
        self.d = d
        self.shared = nn.Embedding(vocab, d)
        self.encoder = nn.ModuleList([T5Block(d, heads, d_kv, ff, i == 0, False) for i in range(layers)])
        self.decoder = nn.ModuleList([T5Block(d, heads, d_kv, ff, i == 0, True) for i in range(layers)])
        self.enc_ln = T5LayerNorm(d)
        self.dec_ln = T5LayerNorm(d)

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        s, t = input_ids.shape[1], decoder_input_ids.shape[1]
        pad = (1.0 - attention_mask[:, None, None, :].float()) * -1e9
        x = self.shared(input_ids)
        bias = self.encoder[0].self_attn.position_bias(s, s) + pad
        for block in self.encoder:
            x = block(x, bias)
        memory = self.enc_ln(x)
        causal = torch.triu(torch.full((t, t), -1e9), diagonal=1)[None, None]
        y = self.shared(decoder_input_ids)
        dbias = self.decoder[0].self_attn.position_bias(t, t) + causal
        for block in self.decoder:
            y = block(y, dbias, memory, pad)
        y = self.dec_ln(y) * (self.d ** -0.5)
        return torch.matmul(y, self.shared.weight.t())


# ------------------------------------------------------------------------------ Llama
class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d, heads, kv_heads, ff):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.ln1 = RMSNorm(d)
        self.q = nn.Linear(d, heads * self.hd, bias=False)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(heads * self.hd, d, bias=False)
        self.ln2 = RMSNorm(d)
        self.gate = nn.Linear(d, ff, bias=False)
        self.up = nn.Linear(d, ff, bias=False)
        self.down = nn.Linear(ff, d, bias=False)

    def forward(self, x, cos, sin, mask, past_k=None, past_v=None):
        b, s, _ = x.shape
        h = self.ln1(x)
        q = self.q(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if past_k is not None:
            k = torch.cat([past_k, k], dim=2)
            v = torch.cat([past_v, v], dim=2)
        group = self.heads // self.kv_heads  # grouped-query attention: each kv head serves `group` heads
        kk = k[:, :, None].expand(b, self.kv_heads, group, k.shape[2], self.hd).reshape(b, self.heads, -1, self.hd)
        vv = v[:, :, None].expand(b, self.kv_heads, group, v.shape[2], self.hd).reshape(b, self.heads, -1, self.hd)
        scores = torch.matmul(q, kk.transpose(2, 3)) / math.sqrt(self.hd) + mask
        y = torch.matmul(scores.softmax(-1), vv).transpose(1, 2).reshape(b, s, -1)
        x = x + self.o(y)
        h = self.ln2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h)), k, v


class LlamaDecoder(nn.Module):
    """Llama-style decoder (Llama 3.2 layout, scaled down: d 512, 8 heads, 2 KV heads, SwiGLU
    1408, 8 layers, vocab 32000, tied embeddings): RMSNorm, rotary embeddings from a cos/sin
    table indexed by position, grouped-query attention, causal mask.
    with_past=False: forward(input_ids) -> logits, present_key_i, present_value_i (prefill);
    with_past=True: forward(input_ids, past_key_0, past_value_0, ...) (decode step)."""

    def __init__(self, vocab=32000, d=512, heads=8, kv_heads=2, ff=1408, layers=8, max_pos=2048,
                 with_past=False):
        super().__init__()
        self.with_past = with_past
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([LlamaBlock(d, heads, kv_heads, ff) for _ in range(layers)])
        self.ln = RMSNorm(d)
        hd = d // heads
        inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.arange(max_pos).float()[:, None] * inv[None, :]
        ang = torch.cat([ang, ang], dim=-1)
        self.register_buffer("cos_table", ang.cos())
        self.register_buffer("sin_table", ang.sin())

    def forward(self, input_ids, *past):
        s = input_ids.shape[1]
        start = past[0].shape[2] if self.with_past else 0
        pos = torch.arange(start, start + s, device=input_ids.device)
        cos, sin = self.cos_table[pos][None, None], self.sin_table[pos][None, None]
        kpos = torch.arange(0, start + s, device=input_ids.device)
        mask = torch.where(kpos[None, :] > pos[:, None], torch.tensor(float("-inf")), torch.tensor(0.0))
        x = self.embed(input_ids)
        presents = []
        for i, block in enumerate(self.blocks):
            pk, pv = (past[2 * i], past[2 * i + 1]) if self.with_past else (None, None)
            x, k, v = block(x, cos, sin, mask, pk, pv)
            presents += [k, v]
        logits = torch.matmul(self.ln(x), self.embed.weight.t())
        return (logits, *presents)


# ------------------------------------------------------------------ audio and sequences
class LstmAcoustic(nn.Module):
    """2-layer LSTM over 80-dim feature frames ([seq, batch, 80], seq-first as nn.LSTM's
    default) and a per-frame Linear to 32 classes (a CTC-style acoustic model)."""

    def __init__(self, feats=80, hidden=256, layers=2, classes=32):
        super().__init__()
        self.lstm = nn.LSTM(feats, hidden, layers)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.out(y)


class BiLstmTagger(nn.Module):
    """Embedding + one bidirectional LSTM (batch_first) + per-token Linear: a sequence tagger."""

    def __init__(self, vocab=10000, emb=128, hidden=256, tags=17):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, ids):
        y, _ = self.lstm(self.embed(ids))
        return self.out(y)


class GruLanguageModel(nn.Module):
    """Embedding + 2-layer GRU (batch_first) + Linear to the vocabulary, returning the logits
    and the final hidden state."""

    def __init__(self, vocab=5000, emb=256, hidden=512, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.gru = nn.GRU(emb, hidden, layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids):
        y, h = self.gru(self.embed(ids))
        return self.out(y), h


class KeywordSpotter(nn.Module):
    """Dilated Conv1d keyword spotter over MFCC frames [b, 40, 101]: a Conv1d stem, residual
    blocks of two dilated Conv1d (dilation 1, 2, 4, 8) with BatchNorm and ReLU, global average
    pooling and a Linear to 12 keywords."""

    def __init__(self, mfcc=40, ch=64, classes=12, dilations=(1, 2, 4, 8)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(mfcc, ch, 3, padding=1, bias=False), nn.BatchNorm1d(ch), nn.ReLU())
        self.blocks = nn.ModuleList()
        for dil in dilations:
            self.blocks.append(nn.Sequential(
                nn.Conv1d(ch, ch, 3, padding=dil, dilation=dil, bias=False), nn.BatchNorm1d(ch), nn.ReLU(),
                nn.Conv1d(ch, ch, 3, padding=dil, dilation=dil, bias=False), nn.BatchNorm1d(ch)))
        self.fc = nn.Linear(ch, classes)

    def forward(self, x):
        x = self.stem(x)
        for block in self.blocks:
            x = F.relu(x + block(x))
        return self.fc(x.mean(dim=2))
