#!/usr/bin/env bash
# Slow tier (not part of CI): exports the full-size fixtures (resnet18, also with its BatchNorms
# kept (TrainingMode.PRESERVE), mobilenet_v2,
# efficientnet_b0 at 1x3x224x224, a 4-layer d=256 encoder at seq 128, a 6-layer d=384 decoder
# with 127 cached tokens) with PyTorch and checks xonnx against torch's outputs; then writes the
# 0.5B-shape GenAI folders (tools/llm/make_genai_model.py, random weights, fp32 and int4, into
# ~/.cache/xonnx-llm) and checks greedy decoding against ONNX Runtime (tools/llm/check_greedy_ort.sh:
# fp32 64 tokens; int4 16, where int8 rounding of activations lets near ties part later).
# Needs Debian's python3-torch/torchvision/onnx (installed here if missing; ~1 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/apt-install-missing.sh slow python3-torch python3-torchvision python3-onnx python3-numpy \
  python3-regex node
OUT=build/slow-models
/usr/bin/python3 tools/export_fixtures.py --slow "$OUT"
# atol 1e-4: the full-size decoder's logits have std ~10, and float32 accumulation-order
# differences over K=384 reach ~3e-5 absolute on logits near zero.
build/bin/xonnx conformance "$OUT" --rtol 1e-4 --atol 1e-4 -v

# The LLM at real scale: greedy tokens equal ONNX Runtime's (node + onnxruntime-node).
bash bench/ort/install.sh
LLM=${XONNX_LLM_DIR:-$HOME/.cache/xonnx-llm}
for precision in fp32 int4; do
  [ -f "$LLM/0.5b_$precision/genai_config.json" ] ||
    /usr/bin/python3 tools/llm/make_genai_model.py --out "$LLM/0.5b_$precision" --preset 0.5b --precision "$precision"
done
bash tools/llm/check_greedy_ort.sh "$LLM/0.5b_fp32" 64
bash tools/llm/check_greedy_ort.sh "$LLM/0.5b_int4" 16
