#!/usr/bin/env bash
# Zoo tier (slow, not part of CI): exports the model zoo if missing (tools/export_zoo.py: 30+ torch
# models, random weights, into $XONNX_ZOO_DIR or ~/.cache/xonnx-zoo; ~4 GB, 7-10 minutes on 2 cores the
# first time), then checks against ONNX Runtime 1.30 (tools/zoo_check.py):
#   - every model on every backend path (default, XONNX_DISABLE_XNNPACK=1, XONNX_DISABLE_OPTIMIZED=1),
#     rtol 1e-3 / atol 1e-4 against ORT's outputs;
#   - every model through `xonnx convert` at level 2, int8 static (16 calibration samples,
#     --target-cosine 0.99), int8 dynamic, int4 and fp16: libonnx's full checker, an ORT run,
#     cosine / top-1 against ORT's fp32 outputs (~35 minutes on 2 cores).
# Results: build/zoo-check/zoo-check.md; exit status 1 if anything fails.
#   bash scripts/test-zoo.sh [--only a,b] [--steps paths,convert] [--variants level2,int8-static,...]
# Needs Debian's python3-torch/torchvision/onnx/matplotlib, node and npm (installed here if
# missing by scripts/install-zoo-deps.sh; ~1 GB); onnxruntime-node goes into ~/.cache/xonnx-ort
# (bench/ort/install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash scripts/install-zoo-deps.sh
bash bench/ort/install.sh
only=()
for ((i = 1; i <= $#; ++i)); do
  if [ "${!i}" = --only ]; then j=$((i + 1)); only=(--only "${!j}"); fi
done
/usr/bin/python3 tools/export_zoo.py "${only[@]}" || echo "test-zoo.sh: some models did not export (listed above)" >&2
/usr/bin/python3 tools/zoo_check.py "$@"
