#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, convert a bundled model
# (a torch-exported MobileNetV2) with the optimizing converter, run original and converted,
# and print what happened (report, outputs, timing, agreement with torch); then generate text
# with the shipped tiny language model (tests/models_llm/tiny, int4 GenAI folder).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
MODEL=tests/models/mobilenet_v2
OUT=build/demo-out
mkdir -p "$OUT"
echo
echo "== xonnx info $MODEL/model.onnx"
build/bin/xonnx info "$MODEL/model.onnx" | head -20
echo
echo "== xonnx convert: fold, fuse BatchNorm/activations, dedup, DCE; verify against the original"
build/bin/xonnx convert "$MODEL/model.onnx" "$OUT/mobilenet_v2.opt.onnx" --report "$OUT/report.md" \
  --verify --input "input=$MODEL/test_data_set_0/input_0.pb"
sed -n '1,/^## Passes/p' "$OUT/report.md" | head -25
echo
echo "== xonnx run (converted model, input from the fixture, outputs to $OUT)"
build/bin/xonnx run "$OUT/mobilenet_v2.opt.onnx" --input "input=$MODEL/test_data_set_0/input_0.pb" \
  --output-dir "$OUT"
echo
echo "== xonnx bench (converted model, 1 thread)"
build/bin/xonnx bench "$OUT/mobilenet_v2.opt.onnx" --iters 20 | tail -4
echo
echo "== checking the original and the converted model against torch's output"
build/bin/xonnx conformance "$MODEL" --rtol 1e-4 --atol 1e-5
build/bin/xonnx conformance "$MODEL" --convert 2 --rtol 1e-4 --atol 1e-5
echo
echo "== xonnx generate: the shipped tiny language model (tests/models_llm/tiny/genai_int4, int4), streamed"
build/bin/xonnx generate tests/models_llm/tiny/genai_int4 --chat -p "Tell me a fortune." -n 48 --seed 3
