#!/usr/bin/env python3
"""Exports models nobody tuned xonnx for (torchvision families outside the zoo, detection with
its postprocessing, video, optical flow, and layers written in torch the zoo does not have:
einsum attention, 3-D convolutions, 1-D transposed convolutions, reflect padding, GroupNorm,
InstanceNorm, odd activations, scatter / sort / cumsum; a YOLOv8n-like detector, a DDPM-like
U-Net with attention, a CRNN text recognizer, a ViT written as timm writes its attention) with torch's outputs, in the ONNX
backend-test layout: OUT/<name>/model.onnx, OUT/<name>/test_data_set_0/{input,output}_K.pb.

Random weights, fixed seeds (torch 1.13, torchvision 0.14, Debian's). ~2 GB, ~5 min on 2 cores.
    /usr/bin/python3 tools/export_unseen.py OUT [name ...]
Then, for instance, ONNX Runtime's outputs as the expected values and the side-by-side latency:
    node tools/ort_run.js OUT/<name>/model.onnx --test-data OUT/<name>/test_data_set_0 DIR
    bench/compare_ort.sh --threads 1 --rounds 2 OUT/<name>/model.onnx ...
docs/performance.md ("Models nobody tuned for", 2026-12-02) has what they showed.
"""
import math
import os
import sys
import zlib

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as tvm
from torchvision.models import detection, optical_flow, segmentation, video

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_fixtures as ef  # noqa: E402

g = torch.Generator()


def rn(*s):
    return torch.randn(*s, generator=g)


# ------------------------------------------------------------------ models written in torch
class SR(nn.Module):  # ESPCN-like super resolution with reflect pad, PixelShuffle
    def __init__(s):
        super().__init__(); s.c1 = nn.Conv2d(1, 64, 5, padding=2, padding_mode="reflect"); s.c2 = nn.Conv2d(64, 32, 3, padding=1); s.c3 = nn.Conv2d(32, 9, 3, padding=1); s.ps = nn.PixelShuffle(3)
    def forward(s, x): return s.ps(s.c3(torch.tanh(s.c2(torch.tanh(s.c1(x))))))


class AudioDec(nn.Module):  # vocoder-like: ConvTranspose1d upsampling, GroupNorm, InstanceNorm
    def __init__(s):
        super().__init__(); s.pre = nn.Conv1d(80, 256, 7, padding=3); s.up1 = nn.ConvTranspose1d(256, 128, 16, stride=8, padding=4); s.gn = nn.GroupNorm(8, 128); s.up2 = nn.ConvTranspose1d(128, 64, 8, stride=4, padding=2); s.inn = nn.InstanceNorm1d(64, affine=True); s.post = nn.Conv1d(64, 1, 7, padding=3)
    def forward(s, x):
        x = F.leaky_relu(s.pre(x), 0.1); x = F.leaky_relu(s.gn(s.up1(x)), 0.1); x = F.gelu(s.inn(s.up2(x))); return torch.tanh(s.post(x))


class Misc(nn.Module):  # einsum, cumsum, topk, gather, masked_fill, softplus, argmax, where
    def __init__(s):
        super().__init__(); s.l = nn.Linear(32, 32); s.ln = nn.LayerNorm(32)
    def forward(s, x, idx):
        h = s.ln(s.l(x)); a = torch.einsum("bid,bjd->bij", h, h) / 5.65
        a = a.masked_fill(torch.triu(torch.ones(a.shape[-2], a.shape[-1], dtype=torch.bool), 1), float("-inf")).softmax(-1)
        y = torch.einsum("bij,bjd->bid", a, h); c = torch.cumsum(y, 1); v, i = torch.topk(c, 4, dim=-1)
        gth = torch.gather(y, 1, idx.unsqueeze(-1).expand(-1, -1, 32))
        return F.softplus(c) + gth.mean(1, keepdim=True), v, i, torch.argmax(y, -1)


class Tx(nn.Module):
    def __init__(s):
        super().__init__(); s.t = nn.Transformer(d_model=128, nhead=4, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=256, batch_first=True, dropout=0.0)
    def forward(s, src, tgt):
        m = s.t.generate_square_subsequent_mask(tgt.shape[1])
        return s.t(src, tgt, tgt_mask=m)


class Interp(nn.Module):
    def __init__(s):
        super().__init__(); s.c = nn.Conv2d(3, 16, 3, padding=1); s.c2 = nn.Conv2d(16, 8, 3, padding=1, dilation=1, groups=2)
    def forward(s, x):
        y = s.c(x); a = F.interpolate(y, scale_factor=2, mode="nearest"); b = F.interpolate(y, size=(50, 70), mode="bicubic", align_corners=False)
        c = F.interpolate(y, scale_factor=0.5, mode="bilinear", align_corners=True); d = F.adaptive_avg_pool2d(y, (5, 7)); e = F.avg_pool2d(y, 3, stride=2, padding=1, count_include_pad=False)
        return s.c2(a), b, c, d, e, F.max_pool2d(y, 2, ceil_mode=True)


class Style(nn.Module):  # fast-neural-style: reflection pad, InstanceNorm2d, residual, upsample conv
    def __init__(s):
        super().__init__()
        def cl(i, o, k, st): return nn.Sequential(nn.ReflectionPad2d(k // 2), nn.Conv2d(i, o, k, st), nn.InstanceNorm2d(o, affine=True), nn.ReLU())
        s.down = nn.Sequential(cl(3, 32, 9, 1), cl(32, 64, 3, 2), cl(64, 128, 3, 2))
        s.res = nn.ModuleList([nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(128, 128, 3), nn.InstanceNorm2d(128, affine=True), nn.ReLU(), nn.ReflectionPad2d(1), nn.Conv2d(128, 128, 3), nn.InstanceNorm2d(128, affine=True)) for _ in range(3)])
        s.up1 = nn.ConvTranspose2d(128, 64, 3, 2, 1, output_padding=1); s.n1 = nn.InstanceNorm2d(64, affine=True)
        s.up2 = nn.Upsample(scale_factor=2, mode="nearest"); s.c2 = nn.Conv2d(64, 32, 3, padding=1); s.out = nn.Sequential(nn.ReflectionPad2d(4), nn.Conv2d(32, 3, 9))
    def forward(s, x):
        y = s.down(x)
        for r in s.res: y = y + r(y)
        y = F.relu(s.n1(s.up1(y))); y = F.relu(s.c2(s.up2(y))); return s.out(y)


class Acts(nn.Module):
    def __init__(s):
        super().__init__(); s.c = nn.Conv2d(8, 16, 3, padding=1); s.p = nn.PReLU(16); s.l = nn.Linear(16, 16)
    def forward(s, x):
        y = s.p(s.c(x)); a = F.selu(y); b = F.softplus(y); c = F.mish(y); d = F.hardtanh(y, -2, 2); e = F.celu(y, 0.5); f = F.softsign(y); h = F.hardsigmoid(y)
        z = a + b + c + d + e + f + h
        t = s.l(z.mean((2, 3)))
        return z, F.log_softmax(t, -1), F.normalize(t, dim=-1), torch.sigmoid(z).sum(1)


class Misc2(nn.Module):
    def forward(s, x, idx):
        a = torch.triu(x, 1) + torch.tril(x, -1) * 2
        b = torch.flip(x, [1]); c = torch.roll(x, 2, 2)
        d = torch.zeros(4, 16).scatter_add(0, idx, x[0, :2, :16].abs())
        e = torch.cumsum(x, 2).flip(2)
        f = x.clone(); f[:, 1] = 0.5
        return a, b + c, d, e, f, x.norm(dim=-1), torch.sort(x, -1, descending=True)[0]


class Unet3d(nn.Module):
    def __init__(s):
        super().__init__(); s.e1 = nn.Conv3d(1, 8, 3, padding=1); s.e2 = nn.Conv3d(8, 16, 3, padding=1, stride=2); s.bn = nn.BatchNorm3d(16); s.d = nn.ConvTranspose3d(16, 8, 2, stride=2); s.o = nn.Conv3d(16, 2, 1)
    def forward(s, x):
        a = F.relu(s.e1(x)); b = F.relu(s.bn(s.e2(a))); u = s.d(b); return s.o(torch.cat([a, u], 1)), F.max_pool3d(a, 2), F.interpolate(b, scale_factor=2, mode="trilinear")


class Seq(nn.Module):
    def __init__(s):
        super().__init__(); s.lstm = nn.LSTM(40, 64, 2, batch_first=True); s.gru = nn.GRU(64, 96, bidirectional=True, batch_first=True); s.o = nn.Linear(192, 30)
    def forward(s, x, h0):
        y, _ = s.lstm(x); z, hn = s.gru(y, h0); return s.o(z), hn


class MHA(nn.Module):
    def __init__(s):
        super().__init__(); s.a = nn.MultiheadAttention(128, 8, batch_first=True); s.n = nn.LayerNorm(128)
    def forward(s, q, kv, kpm):
        o, w = s.a(q, kv, kv, key_padding_mask=kpm); return s.n(o + q), w


class TinyYolo(nn.Module):  # leaky relu, maxpool, upsample nearest, concat, sigmoid head decode
    def __init__(s):
        super().__init__()
        def cb(i, o, k=3, st=1): return nn.Sequential(nn.Conv2d(i, o, k, st, k // 2, bias=False), nn.BatchNorm2d(o), nn.LeakyReLU(0.1))
        s.b1 = nn.Sequential(cb(3, 16), nn.MaxPool2d(2), cb(16, 32), nn.MaxPool2d(2), cb(32, 64), nn.MaxPool2d(2), cb(64, 128))
        s.b2 = nn.Sequential(nn.MaxPool2d(2), cb(128, 256), cb(256, 128, 1))
        s.h1 = nn.Conv2d(128, 3 * 85, 1); s.up = cb(128, 64, 1); s.h2 = nn.Conv2d(192, 3 * 85, 1)
    def forward(s, x):
        a = s.b1(x); b = s.b2(a)
        p1 = s.h1(b); u = F.interpolate(s.up(b), scale_factor=2, mode="nearest"); p2 = s.h2(torch.cat([u, a], 1))
        outs = []
        for p in (p1, p2):
            n, _, h, w = p.shape
            p = p.view(n, 3, 85, h, w).permute(0, 1, 3, 4, 2)
            outs.append(torch.cat([p[..., :4].sigmoid() * 2, p[..., 4:].sigmoid()], -1).reshape(n, -1, 85))
        return torch.cat(outs, 1)


class Gpt(nn.Module):  # GPT-2 style with learned pos emb, causal mask via tril buffer, gelu tanh, tied head
    def __init__(s, v=1000, d=256, L=4, h=4):
        super().__init__(); s.te = nn.Embedding(v, d); s.pe = nn.Embedding(128, d); s.h = h
        s.blocks = nn.ModuleList([nn.ModuleDict(dict(ln1=nn.LayerNorm(d), qkv=nn.Linear(d, 3 * d), proj=nn.Linear(d, d), ln2=nn.LayerNorm(d), fc=nn.Linear(d, 4 * d), out=nn.Linear(4 * d, d))) for _ in range(L)])
        s.lnf = nn.LayerNorm(d); s.register_buffer("mask", torch.tril(torch.ones(128, 128)).view(1, 1, 128, 128))
    def forward(s, ids):
        B, T = ids.shape; x = s.te(ids) + s.pe(torch.arange(T).unsqueeze(0))
        for b in s.blocks:
            q, k, v = b["qkv"](b["ln1"](x)).split(x.shape[-1], -1)
            q, k, v = [t.view(B, T, s.h, -1).transpose(1, 2) for t in (q, k, v)]
            a = (q @ k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
            a = a.masked_fill(s.mask[:, :, :T, :T] == 0, float("-inf")).softmax(-1)
            x = x + b["proj"]((a @ v).transpose(1, 2).reshape(B, T, -1))
            x = x + b["out"](F.gelu(b["fc"](b["ln2"](x)), approximate="tanh"))
        return s.lnf(x) @ s.te.weight.t()


class Mixer(nn.Module):  # depthwise-separable 1D + channel attention + layernorm over channels via permute
    def __init__(s):
        super().__init__(); s.dw = nn.Conv1d(64, 64, 9, padding=4, groups=64); s.pw = nn.Conv1d(64, 128, 1); s.ln = nn.LayerNorm(128); s.se = nn.Sequential(nn.AdaptiveAvgPool1d(1), nn.Conv1d(128, 16, 1), nn.SiLU(), nn.Conv1d(16, 128, 1), nn.Sigmoid())
    def forward(s, x):
        y = s.pw(F.silu(s.dw(x))); y = y * s.se(y); return s.ln(y.transpose(1, 2)).transpose(1, 2), F.adaptive_max_pool1d(y, 8)


class Cls(nn.Module):  # GroupNorm, a grouped Conv, HardSwish, adaptive pooling to 4x4
    def __init__(s):
        super().__init__(); s.c1 = nn.Conv2d(3, 32, 3, 2, 1); s.gn = nn.GroupNorm(4, 32); s.c2 = nn.Conv2d(32, 64, 3, 2, 1, groups=2); s.fc = nn.Linear(64 * 4 * 4, 10)
    def forward(s, x):
        y = F.gelu(s.gn(s.c1(x))); y = F.hardswish(s.c2(y)); y = F.adaptive_avg_pool2d(y, (4, 4)); return s.fc(y.flatten(1)).log_softmax(-1)


class LastFlow(nn.Module):  # RAFT returns every refinement; the last one is the flow
    def __init__(s, m):
        super().__init__(); s.m = m

    def forward(s, a, b):
        return s.m(a, b, num_flow_updates=4)[-1]


class FirstDetections(nn.Module):  # torchvision detectors take a list of images, return dicts
    def __init__(s, m, keys):
        super().__init__(); s.m = m; s.keys = keys

    def forward(s, x):
        r = s.m([x])[0]
        return tuple(r[k] for k in s.keys)


class OutOnly(nn.Module):  # segmentation models return {"out": ...}
    def __init__(s, m):
        super().__init__(); s.m = m

    def forward(s, x):
        return s.m(x)["out"]


class CBS(nn.Module):
    def __init__(s, i, o, k=1, st=1): super().__init__(); s.c = nn.Conv2d(i, o, k, st, k // 2, bias=False); s.b = nn.BatchNorm2d(o)
    def forward(s, x): return F.silu(s.b(s.c(x)))
class Bottle(nn.Module):
    def __init__(s, c, sc=True): super().__init__(); s.a = CBS(c, c, 3); s.b = CBS(c, c, 3); s.sc = sc
    def forward(s, x): y = s.b(s.a(x)); return x + y if s.sc else y
class C2f(nn.Module):
    def __init__(s, i, o, n=1, sc=True):
        super().__init__(); s.h = o // 2; s.cv1 = CBS(i, 2 * s.h); s.cv2 = CBS((2 + n) * s.h, o); s.m = nn.ModuleList(Bottle(s.h, sc) for _ in range(n))
    def forward(s, x):
        y = list(s.cv1(x).chunk(2, 1))
        for m in s.m: y.append(m(y[-1]))
        return s.cv2(torch.cat(y, 1))
class SPPF(nn.Module):
    def __init__(s, i, o): super().__init__(); h = i // 2; s.cv1 = CBS(i, h); s.cv2 = CBS(4 * h, o); s.m = nn.MaxPool2d(5, 1, 2)
    def forward(s, x):
        x = s.cv1(x); a = s.m(x); b = s.m(a); return s.cv2(torch.cat([x, a, b, s.m(b)], 1))
class DFL(nn.Module):
    def __init__(s, c=16): super().__init__(); s.conv = nn.Conv2d(c, 1, 1, bias=False); s.conv.weight.data[:] = torch.arange(c, dtype=torch.float).view(1, c, 1, 1); s.c = c
    def forward(s, x):
        b, _, a = x.shape; return s.conv(x.view(b, 4, s.c, a).transpose(2, 1).softmax(1)).view(b, 4, a)
class Yolo8(nn.Module):  # YOLOv8n-like: C2f (chunk: Slices), SPPF, FPN / PAN with nearest upsampling, DFL head, anchor decode
    def __init__(s, nc=80):
        super().__init__(); w = [16, 32, 64, 128, 256]
        s.b0 = CBS(3, w[0], 3, 2); s.b1 = CBS(w[0], w[1], 3, 2); s.b2 = C2f(w[1], w[1]); s.b3 = CBS(w[1], w[2], 3, 2); s.b4 = C2f(w[2], w[2], 2)
        s.b5 = CBS(w[2], w[3], 3, 2); s.b6 = C2f(w[3], w[3], 2); s.b7 = CBS(w[3], w[4], 3, 2); s.b8 = C2f(w[4], w[4]); s.b9 = SPPF(w[4], w[4])
        s.h12 = C2f(w[4] + w[3], w[3], sc=False); s.h15 = C2f(w[3] + w[2], w[2], sc=False); s.h16 = CBS(w[2], w[2], 3, 2); s.h18 = C2f(w[2] + w[3], w[3], sc=False)
        s.h19 = CBS(w[3], w[3], 3, 2); s.h21 = C2f(w[3] + w[4], w[4], sc=False)
        s.nc = nc; s.reg = 16; s.strides = [8, 16, 32]
        s.cv2 = nn.ModuleList(nn.Sequential(CBS(c, 64, 3), CBS(64, 64, 3), nn.Conv2d(64, 4 * s.reg, 1)) for c in (w[2], w[3], w[4]))
        s.cv3 = nn.ModuleList(nn.Sequential(CBS(c, 80, 3), CBS(80, 80, 3), nn.Conv2d(80, nc, 1)) for c in (w[2], w[3], w[4]))
        s.dfl = DFL(s.reg)
    def forward(s, x):
        x = s.b2(s.b1(s.b0(x))); p3 = s.b4(s.b3(x)); p4 = s.b6(s.b5(p3)); p5 = s.b9(s.b8(s.b7(p4)))
        up = lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest")
        h12 = s.h12(torch.cat([up(p5), p4], 1)); h15 = s.h15(torch.cat([up(h12), p3], 1))
        h18 = s.h18(torch.cat([s.h16(h15), h12], 1)); h21 = s.h21(torch.cat([s.h19(h18), p5], 1))
        feats = [h15, h18, h21]; outs = []; anchors = []; strides = []
        for i, f in enumerate(feats):
            outs.append(torch.cat([s.cv2[i](f), s.cv3[i](f)], 1).flatten(2))
            _, _, hh, ww = f.shape
            sy, sx = torch.meshgrid(torch.arange(hh, dtype=torch.float) + 0.5, torch.arange(ww, dtype=torch.float) + 0.5, indexing="ij")
            anchors.append(torch.stack((sx, sy), -1).view(-1, 2)); strides.append(torch.full((hh * ww, 1), float(s.strides[i])))
        y = torch.cat(outs, 2); box, cls = y.split((4 * s.reg, s.nc), 1)
        a = torch.cat(anchors).transpose(0, 1).unsqueeze(0); st = torch.cat(strides).transpose(0, 1)
        d = s.dfl(box); lt, rb = d.chunk(2, 1); x1y1 = a - lt; x2y2 = a + rb
        return torch.cat([torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * st, cls.sigmoid()], 1)

class ResBlockT(nn.Module):
    def __init__(s, i, o, t):
        super().__init__(); s.n1 = nn.GroupNorm(8, i); s.c1 = nn.Conv2d(i, o, 3, padding=1); s.t = nn.Linear(t, o); s.n2 = nn.GroupNorm(8, o); s.c2 = nn.Conv2d(o, o, 3, padding=1)
        s.sk = nn.Conv2d(i, o, 1) if i != o else nn.Identity()
    def forward(s, x, te):
        h = s.c1(F.silu(s.n1(x))) + s.t(F.silu(te))[:, :, None, None]; h = s.c2(F.silu(s.n2(h))); return s.sk(x) + h
class SpatialAttn(nn.Module):
    def __init__(s, c): super().__init__(); s.n = nn.GroupNorm(8, c); s.qkv = nn.Conv2d(c, 3 * c, 1); s.o = nn.Conv2d(c, c, 1); s.c = c
    def forward(s, x):
        b, c, h, w = x.shape; q, k, v = s.qkv(s.n(x)).reshape(b, 3, c, h * w).unbind(1)
        a = torch.softmax(q.transpose(1, 2) @ k / math.sqrt(c), -1); return x + s.o((v @ a.transpose(1, 2)).reshape(b, c, h, w))
class DiffUNet(nn.Module):  # DDPM-like: sinusoidal timestep embedding, GroupNorm+SiLU resblocks, attention at 16x16
    def __init__(s):
        super().__init__(); s.te = nn.Sequential(nn.Linear(64, 256), nn.SiLU(), nn.Linear(256, 256)); s.inp = nn.Conv2d(3, 64, 3, padding=1)
        s.d1 = ResBlockT(64, 64, 256); s.dn1 = nn.Conv2d(64, 64, 3, 2, 1); s.d2 = ResBlockT(64, 128, 256); s.a2 = SpatialAttn(128); s.dn2 = nn.Conv2d(128, 128, 3, 2, 1)
        s.mid = ResBlockT(128, 128, 256); s.am = SpatialAttn(128)
        s.u2 = ResBlockT(256, 128, 256); s.ua = SpatialAttn(128); s.u1 = ResBlockT(192, 64, 256); s.out = nn.Sequential(nn.GroupNorm(8, 64), nn.SiLU(), nn.Conv2d(64, 3, 3, padding=1))
    def forward(s, x, t):
        half = 32; fr = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float) / half); e = t[:, None].float() * fr[None]
        te = s.te(torch.cat([e.sin(), e.cos()], -1))
        h0 = s.inp(x); h1 = s.d1(h0, te); h2 = s.a2(s.d2(s.dn1(h1), te)); m = s.am(s.mid(s.dn2(h2), te))
        u = F.interpolate(m, scale_factor=2.0, mode="nearest"); u = s.ua(s.u2(torch.cat([u, h2], 1), te))
        u = F.interpolate(u, scale_factor=2.0, mode="nearest"); u = s.u1(torch.cat([u, h1], 1), te); return s.out(u)

class CRNN(nn.Module):  # text recognition: VGG-ish convs, BN, BiLSTM x2, log_softmax over classes (CTC)
    def __init__(s, nc=97):
        super().__init__()
        def cb(i, o, bn=False): return [nn.Conv2d(i, o, 3, 1, 1)] + ([nn.BatchNorm2d(o)] if bn else []) + [nn.ReLU()]
        s.cnn = nn.Sequential(*cb(1, 64), nn.MaxPool2d(2), *cb(64, 128), nn.MaxPool2d(2), *cb(128, 256, True), *cb(256, 256), nn.MaxPool2d((2, 1)), *cb(256, 256, True), *cb(256, 256), nn.MaxPool2d((2, 1)))
        s.rnn = nn.LSTM(256 * 2, 128, 2, bidirectional=True); s.fc = nn.Linear(256, nc)
    def forward(s, x):
        f = s.cnn(x); b, c, h, w = f.shape; f = f.reshape(b, c * h, w).permute(2, 0, 1); y, _ = s.rnn(f); return s.fc(y).log_softmax(-1)

class TimmAttn(nn.Module):  # timm's Attention: one qkv projection cut by reshape + permute + unbind
    def __init__(s, d, h): super().__init__(); s.h = h; s.qkv = nn.Linear(d, 3 * d); s.proj = nn.Linear(d, d); s.scale = (d // h) ** -0.5
    def forward(s, x):
        b, n, c = x.shape; q, k, v = s.qkv(x).reshape(b, n, 3, s.h, c // s.h).permute(2, 0, 3, 1, 4).unbind(0)
        a = ((q * s.scale) @ k.transpose(-2, -1)).softmax(-1); return s.proj((a @ v).transpose(1, 2).reshape(b, n, c))
class TimmBlock(nn.Module):
    def __init__(s, d, h): super().__init__(); s.n1 = nn.LayerNorm(d); s.attn = TimmAttn(d, h); s.n2 = nn.LayerNorm(d); s.fc1 = nn.Linear(d, 4 * d); s.fc2 = nn.Linear(4 * d, d)
    def forward(s, x): x = x + s.attn(s.n1(x)); return x + s.fc2(F.gelu(s.fc1(s.n2(x))))
class TimmViT(nn.Module):  # DeiT-S-like as timm writes it: patch Conv, cls token, 12 blocks, d 384, 6 heads
    def __init__(s, d=384, h=6, depth=12):
        super().__init__(); s.pe = nn.Conv2d(3, d, 16, 16); s.cls = nn.Parameter(rn(1, 1, d) * 0.02); s.pos = nn.Parameter(rn(1, 197, d) * 0.02)
        s.blocks = nn.Sequential(*[TimmBlock(d, h) for _ in range(depth)]); s.n = nn.LayerNorm(d); s.head = nn.Linear(d, 1000)
    def forward(s, x):
        x = s.pe(x).flatten(2).transpose(1, 2); x = torch.cat([s.cls.expand(x.shape[0], -1, -1), x], 1) + s.pos
        return s.head(s.n(s.blocks(x))[:, 0])


# ------------------------------------------------------------------ the list
def cases():
    yield "r3d_18", lambda: (video.r3d_18(), [(rn(1, 3, 8, 112, 112),)], ["clip"], ["logits"], {})
    yield "r2plus1d_18", lambda: (video.r2plus1d_18(), [(rn(1, 3, 8, 112, 112),)], ["clip"], ["logits"], {})
    yield "regnet_x_400mf", lambda: (tvm.regnet_x_400mf(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {})
    yield "efficientnet_b0", lambda: (tvm.efficientnet_b0(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {})
    yield "mobilenet_v3_small", lambda: (tvm.mobilenet_v3_small(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {"opset": 13})
    yield "maxvit_t", lambda: (tvm.maxvit_t(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {})
    yield "wide_resnet50_2", lambda: (tvm.wide_resnet50_2(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {"opset": 12})
    yield "squeezenet1_0", lambda: (tvm.squeezenet1_0(), [(rn(2, 3, 224, 224),)], ["input"], ["logits"], {"opset": 11})
    yield "alexnet", lambda: (tvm.alexnet(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {"opset": 15})
    yield "fasterrcnn_mnv3_320", lambda: (FirstDetections(detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None), ["boxes", "labels", "scores"]), [(rn(3, 320, 320),)], ["image"], ["boxes", "labels", "scores"], {"opset": 11})
    yield "raft_small", lambda: (LastFlow(optical_flow.raft_small()), [(rn(1, 3, 128, 128), rn(1, 3, 128, 128))], ["img1", "img2"], ["flow"], {"opset": 16})
    yield "espcn", lambda: (SR(), [(rn(1, 1, 64, 64),)], ["lr"], ["hr"], {})
    yield "audio_dec", lambda: (AudioDec(), [(rn(1, 80, 50),)], ["mel"], ["wave"], {})
    yield "misc_ops", lambda: (Misc(), [(rn(2, 10, 32), torch.randint(0, 10, (2, 3), generator=g))], ["x", "idx"], ["y", "v", "i", "am"], {"opset": 14})
    yield "nn_transformer", lambda: (Tx(), [(rn(1, 20, 128), rn(1, 7, 128))], ["src", "tgt"], ["out"], {})
    yield "interp", lambda: (Interp(), [(rn(1, 3, 25, 35),)], ["x"], ["a", "b", "c", "d", "e", "f"], {"opset": 13})
    yield "style_transfer", lambda: (Style(), [(rn(1, 3, 256, 256),)], ["img"], ["out"], {"opset": 11})
    yield "activations", lambda: (Acts(), [(rn(2, 8, 20, 20),)], ["x"], ["z", "ls", "nrm", "sig"], {})
    yield "misc2", lambda: (Misc2(), [(rn(2, 6, 20), torch.randint(0, 4, (2, 16), generator=g))], ["x", "idx"], ["a", "b", "d", "e", "f", "n", "s"], {"opset": 16})
    yield "unet3d", lambda: (Unet3d(), [(rn(1, 1, 16, 32, 32),)], ["vol"], ["seg", "pool", "up"], {})
    yield "seq_lstm_proj_bigru", lambda: (Seq(), [(rn(2, 50, 40), rn(2, 2, 96))], ["x", "h0"], ["y", "hn"], {"opset": 14})
    yield "mha_padmask", lambda: (MHA(), [(rn(2, 10, 128), rn(2, 24, 128), torch.arange(24).unsqueeze(0).repeat(2, 1) >= torch.tensor([[20], [24]]))], ["q", "kv", "kpm"], ["o", "w"], {})
    yield "mc3_18", lambda: (video.mc3_18(), [(rn(1, 3, 8, 112, 112),)], ["clip"], ["logits"], {})
    yield "s3d", lambda: (video.s3d(), [(rn(1, 3, 16, 224, 224),)], ["clip"], ["logits"], {})
    yield "ssd300_vgg16", lambda: (FirstDetections(detection.ssd300_vgg16(weights=None, weights_backbone=None), ["boxes", "scores", "labels"]), [(rn(3, 300, 300),)], ["image"], ["boxes", "scores", "labels"], {"opset": 11})
    yield "deeplabv3_resnet50", lambda: (OutOnly(segmentation.deeplabv3_resnet50(weights=None, weights_backbone=None, aux_loss=False)), [(rn(1, 3, 224, 224),)], ["input"], ["out"], {})
    yield "vit_b_32", lambda: (tvm.vit_b_32(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {"opset": 14})
    yield "regnet_y_1_6gf", lambda: (tvm.regnet_y_1_6gf(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {})
    yield "resnet18_nonsquare", lambda: (tvm.resnet18(), [(rn(1, 3, 240, 320),)], ["input"], ["logits"], {"opset": 9})
    yield "tiny_yolo", lambda: (TinyYolo(), [(rn(1, 3, 320, 320),)], ["images"], ["pred"], {})
    yield "gpt_small", lambda: (Gpt(), [(torch.randint(0, 1000, (1, 64), generator=g),)], ["ids"], ["logits"], {})
    yield "conv1d_mixer", lambda: (Mixer(), [(rn(2, 64, 200),)], ["x"], ["y", "p"], {})
    yield "gn_classifier", lambda: (Cls(), [(rn(4, 3, 112, 112),)], ["x"], ["y"], {"opset": 12})
    yield "mobilenet_v2_dyn", lambda: (tvm.mobilenet_v2(), [(rn(2, 3, 192, 160),)], ["input"], ["logits"], {"dynamic_axes": {"input": {0: "n", 2: "h", 3: "w"}}})
    yield "efficientnet_b2", lambda: (tvm.efficientnet_b2(), [(rn(1, 3, 260, 260),)], ["input"], ["logits"], {})
    yield "squeezenet_fold_off", lambda: (tvm.squeezenet1_1(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {"do_constant_folding": False, "opset": 13})
    yield "yolov8n_like", lambda: (Yolo8(), [(rn(1, 3, 640, 640),)], ["images"], ["output0"], {})
    yield "yolov8n_like_o13", lambda: (Yolo8(), [(rn(1, 3, 480, 640),)], ["images"], ["output0"], {"opset": 13})
    yield "diffusion_unet", lambda: (DiffUNet(), [(rn(1, 3, 64, 64), torch.tensor([500]))], ["x", "t"], ["eps"], {})
    yield "crnn", lambda: (CRNN(), [(rn(1, 1, 32, 160),)], ["img"], ["logp"], {"opset": 14})
    yield "timm_vit_s", lambda: (TimmViT(), [(rn(1, 3, 224, 224),)], ["input"], ["logits"], {})


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out, only = sys.argv[1], set(sys.argv[2:])
    failed = 0
    for name, make in cases():
        if only and name not in only:
            continue
        try:
            torch.manual_seed(0)
            g.manual_seed(zlib.crc32(name.encode()))
            model, datasets, inputs, outputs, kw = make()
            info = ef.export_fixture(out, name, model.eval(), datasets, inputs, outputs, **kw)
            print("OK", name, info["nodes"], "nodes", flush=True)
        except Exception as e:  # noqa: BLE001
            failed += 1
            print("FAIL", name, type(e).__name__, str(e).splitlines()[0][:200], flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
