"""Model definitions used by tools/export_fixtures.py.

Everything here is built from random weights (callers seed torch first); nothing
is ever downloaded.
"""
import math
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor
from torchvision.models.resnet import BasicBlock, ResNet


# --------------------------------------------------------------------------- MLP
class MLP(nn.Module):
    """Linear 16->64->64->32->10 with ReLU between layers."""

    def __init__(self, dims=(16, 64, 64, 32, 10)):
        super().__init__()
        layers = []
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            if i < len(dims) - 2:
                layers.append(nn.ReLU())
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


# ------------------------------------------------------------------------ ResNet
class NarrowResNet(ResNet):
    """torchvision ResNet(BasicBlock, layers) with configurable stage widths.

    torchvision hard-codes widths 64/128/256/512 for BasicBlock; this reuses its
    _make_layer/forward and only changes the widths, so the graph has exactly
    the resnet18 topology (Conv/BN/ReLU/MaxPool/Add/GlobalAveragePool/Gemm).
    """

    def __init__(self, layers=(2, 2, 2, 2), widths=(64, 128, 256, 512), num_classes=1000):
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes = widths[0]
        self.dilation = 1
        self.groups = 1
        self.base_width = 64
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(BasicBlock, widths[0], layers[0])
        self.layer2 = self._make_layer(BasicBlock, widths[1], layers[1], stride=2)
        self.layer3 = self._make_layer(BasicBlock, widths[2], layers[2], stride=2)
        self.layer4 = self._make_layer(BasicBlock, widths[3], layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(widths[3] * BasicBlock.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")


def randomize_batchnorm(model: nn.Module, gen: torch.Generator):
    """Give every BatchNorm non-trivial affine params and running statistics,
    so that a runtime that ignores (or mis-folds) BN produces wrong numbers."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            c = m.num_features
            with torch.no_grad():
                m.weight.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(c, generator=gen) * 0.1)
                m.running_mean.copy_(torch.randn(c, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=gen) * 0.5 + 0.75)


def break_symmetry(model: nn.Module, gen: torch.Generator, noise: float = 0.0):
    """Perturb parameters so tests are numerically discriminating:
    every constant-valued parameter (zero biases, LayerNorm weight=1/bias=0)
    gets N(0, 0.1) noise, and with noise > 0 every other parameter gets
    N(0, noise) noise (e.g. to make deep-copied TransformerEncoder layers
    differ from each other)."""
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() == 0:
                continue
            if bool((p == p.flatten()[0]).all()):
                p.add_(torch.randn(p.shape, generator=gen) * 0.1)
            elif noise > 0:
                p.add_(torch.randn(p.shape, generator=gen) * noise)


# ------------------------------------------------------------------- Transformer
class EncoderClassifier(nn.Module):
    """nn.TransformerEncoder (batch_first) + mean-pool over seq + Linear head.
    Input: float features [batch, seq, d_model]."""

    def __init__(self, d_model=64, nhead=4, num_layers=2, dim_ff=128, num_classes=10,
                 activation="gelu"):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=dim_ff,
                                           dropout=0.0, activation=activation,
                                           batch_first=True)
        # enable_nested_tensor=False: keep the plain (exportable) code path.
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, num_classes)

    def forward(self, x):
        h = self.encoder(x)
        return self.head(h.mean(dim=1))


# --------------------------------------------------------------------------- GPT
class GPTBlock(nn.Module):
    def __init__(self, d, nhead):
        super().__init__()
        self.nhead = nhead
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x, past_k, past_v, mask):
        b, s, d = x.shape
        hd = d // self.nhead
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q = q.reshape(b, s, self.nhead, hd).transpose(1, 2)  # [b, h, s, hd]
        k = k.reshape(b, s, self.nhead, hd).transpose(1, 2)
        v = v.reshape(b, s, self.nhead, hd).transpose(1, 2)
        k = torch.cat([past_k, k], dim=2)  # [b, h, past+s, hd]
        v = torch.cat([past_v, v], dim=2)
        att = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(hd)
        att = att.masked_fill(mask, float("-inf"))
        att = torch.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
        x = x + self.proj(y)
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return x, k, v


class GPTDecoder(nn.Module):
    """Small GPT-2 style decoder with KV cache and tied embeddings.

    forward(input_ids[b, s], past_key_0, past_value_0, ..., past_key_{L-1}, past_value_{L-1})
      past_*: [b, heads, past_seq, head_dim]
    returns (logits[b, s, vocab], present_key_0, present_value_0, ...)
      present_*: [b, heads, past_seq + s, head_dim]
    """

    def __init__(self, vocab=256, d=64, nhead=4, num_layers=2, max_pos=1024):
        super().__init__()
        self.num_layers = num_layers
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(max_pos, d)
        self.blocks = nn.ModuleList([GPTBlock(d, nhead) for _ in range(num_layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        with torch.no_grad():
            self.wte.weight.normal_(0, 0.5)
            self.wpe.weight.normal_(0, 0.1)

    def forward(self, input_ids, *past):
        s = input_ids.shape[1]
        past_len = past[0].shape[2]
        pos = torch.arange(past_len, past_len + s, dtype=torch.long, device=input_ids.device)
        x = self.wte(input_ids) + self.wpe(pos).unsqueeze(0)
        # causal mask [s, past+s]: query i (absolute pos past_len+i) sees key j iff j <= past_len+i
        kpos = torch.arange(0, past_len + s, dtype=torch.long, device=input_ids.device)
        mask = kpos.unsqueeze(0) > pos.unsqueeze(1)
        presents = []
        for i, blk in enumerate(self.blocks):
            x, k, v = blk(x, past[2 * i], past[2 * i + 1], mask)
            presents += [k, v]
        logits = self.lm_head(self.ln_f(x))
        return (logits, *presents)


# ------------------------------------------------------------------ control flow
class IfModel(nn.Module):
    """Data-dependent branch; meant to be torch.jit.script'ed."""

    def forward(self, x: Tensor) -> Tensor:
        if bool(x.sum() > 0):
            y = x * 2.0
        else:
            y = x - 1.0
        return y


class LoopModel(nn.Module):
    """Elman-RNN style loop over the leading (sequence) axis, meant to be
    torch.jit.script'ed: trip count = x.size(0) (dynamic), loop-carried h and
    a running sum, x[i] indexed by the loop counter."""

    def __init__(self, d_in=8, d_h=16):
        super().__init__()
        self.d_h = d_h
        self.inp = nn.Linear(d_in, d_h)
        self.rec = nn.Linear(d_h, d_h, bias=False)

    def forward(self, x: Tensor) -> Tuple[Tensor, Tensor]:
        # x: [seq, batch, d_in]
        h = torch.zeros(x.size(1), self.d_h, dtype=x.dtype)
        acc = torch.zeros(x.size(1), self.d_h, dtype=x.dtype)
        for i in range(x.size(0)):
            h = torch.tanh(self.inp(x[i]) + self.rec(h))
            acc = acc + h
        return h, acc


# --------------------------------------------------------------- local functions
class ResidualBlock(nn.Module):
    """Repeated submodule exported as an ONNX model-local function."""

    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.norm(x))))


class FunctionsModel(nn.Module):
    def __init__(self, d=32, n=3, num_classes=10):
        super().__init__()
        self.blocks = nn.Sequential(*[ResidualBlock(d) for _ in range(n)])
        self.head = nn.Linear(d, num_classes)

    def forward(self, x):
        return self.head(self.blocks(x))


class TinyVideoNet(nn.Module):
    """3-D layers (session pass lower-3d): a Conv3d with temporal pads and stride, BatchNorm3d,
    a MaxPool3d with ceil_mode, a (2+1)D pair (1x3x3 then 3x1x1), a residual and a 3-D pool."""

    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv3d(3, 8, (3, 5, 5), stride=(2, 2, 2), padding=(1, 2, 2), bias=False),
                                  nn.BatchNorm3d(8), nn.ReLU())
        self.pool = nn.MaxPool3d((2, 3, 3), stride=2, padding=(0, 1, 1), ceil_mode=True)
        self.spatial = nn.Conv3d(8, 12, (1, 3, 3), padding=(0, 1, 1))
        self.temporal = nn.Conv3d(12, 8, (3, 1, 1), padding=(1, 0, 0), dilation=(1, 1, 1))
        self.head = nn.Linear(8, classes)

    def forward(self, x):
        y = self.pool(self.stem(x))
        y = y + self.temporal(torch.relu(self.spatial(y)))
        return self.head(torch.nn.functional.adaptive_avg_pool3d(y, 1).flatten(1))


class TinyVocoder(nn.Module):
    """A mel-to-wave decoder's layers (1-D lift of ConvTranspose, InstanceNorm / GroupNorm,
    reflect Pad, LeakyRelu, Tanh on the fast kernels): Conv1d, two ConvTranspose1d upsamplers."""

    def __init__(self, mels=16):
        super().__init__()
        self.pad = nn.ReflectionPad1d(3)
        self.pre = nn.Conv1d(mels, 32, 7)
        self.up1 = nn.ConvTranspose1d(32, 16, 8, stride=4, padding=2)
        self.norm1 = nn.GroupNorm(4, 16)
        self.up2 = nn.ConvTranspose1d(16, 8, 4, stride=2, padding=1, output_padding=0, groups=2)
        self.norm2 = nn.InstanceNorm1d(8, affine=True)
        self.post = nn.Conv1d(8, 1, 5, padding=2)

    def forward(self, mel):
        x = torch.nn.functional.leaky_relu(self.pre(self.pad(mel)), 0.1)
        x = torch.nn.functional.leaky_relu(self.norm1(self.up1(x)), 0.1)
        x = torch.nn.functional.elu(self.norm2(self.up2(x)))
        return torch.tanh(self.post(x))


class EinsumAttention(nn.Module):
    """Attention written with torch.einsum (session pass lower-einsum), relative-position bias,
    and an align_corners bilinear resize of an odd-sized map by a fractional scale (ONNX Runtime's
    and torch's integer output length)."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.bias = nn.Parameter(torch.randn(heads, 1, 1) * 0.1)

    def forward(self, x, fmap):
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).unbind(2)
        scores = torch.einsum("B I H D, B J H D -> B H I J", q, k) / (d // self.heads) ** 0.5 + self.bias
        y = torch.einsum("bhij,bjhd->bihd", scores.softmax(-1), v).reshape(b, n, d)
        small = torch.nn.functional.interpolate(fmap, scale_factor=0.5, mode="bilinear", align_corners=True)
        return self.out(y), small
