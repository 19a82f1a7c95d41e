#!/usr/bin/env bash
# Zoo tier (slow, not part of CI): exports the model zoo if missing (tools/export_zoo.py: 30+ torch
# models, random weights, into $XONNX_ZOO_DIR or ~/.cache/xonnx-zoo; ~3 GB, an hour on 2 cores the
# first time), then checks against ONNX Runtime 1.30 (tools/zoo_check.py):
#   - every model on every backend path (default, XONNX_DISABLE_XNNPACK=1, XONNX_DISABLE_OPTIMIZED=1),
#     rtol 1e-3 / atol 1e-4 against ORT's outputs;
#   - every model through `xonnx convert` at level 2, int8 static (calibrated), int8 dynamic, int4
#     and fp16: libonnx's full checker, an ORT run, cosine / top-1 against ORT's fp32 outputs.
# Results: build/zoo-check/zoo-check.md; exit status 1 if anything fails.
#   bash scripts/test-zoo.sh [--only a,b] [--steps paths,convert] [--variants level2,int8-static,...]
# Needs Debian's python3-torch/torchvision/onnx (installed here if missing; ~1 GB), node and npm
# (onnxruntime-node is installed into ~/.cache/xonnx-ort by bench/ort/install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
missing=()
for p in python3-torch python3-torchvision python3-onnx python3-numpy; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  { $SUDO apt-get update -qq || echo "warning: apt-get update reported errors (continuing)"; } && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
bash bench/ort/install.sh
only=()
for ((i = 1; i <= $#; ++i)); do
  if [ "${!i}" = --only ]; then j=$((i + 1)); only=(--only "${!j}"); fi
done
/usr/bin/python3 tools/export_zoo.py "${only[@]}" || echo "test-zoo.sh: some models did not export (listed above)" >&2
/usr/bin/python3 tools/zoo_check.py "$@"
