#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, and run a bundled model
# (a torch-exported MobileNetV2) printing its inputs, outputs and timing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
MODEL=tests/models/mobilenet_v2
echo
echo "== xonnx info $MODEL/model.onnx"
build/bin/xonnx info "$MODEL/model.onnx" | head -20
echo
echo "== xonnx run $MODEL/model.onnx (input from the fixture, outputs to build/demo-out)"
build/bin/xonnx run "$MODEL/model.onnx" --input "input=$MODEL/test_data_set_0/input_0.pb" --output-dir build/demo-out
echo
echo "== checking against torch's output"
build/bin/xonnx conformance "$MODEL" --rtol 1e-4 --atol 1e-5
