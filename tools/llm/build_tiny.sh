#!/usr/bin/env bash
# Makes every artifact of the tiny fortune model and checks them, then copies the committed ones
# into tests/models_llm/tiny (see tools/llm/README.md):
#
#   tools/llm/build_tiny.sh OUT [--skip-train] [-- TRAIN_ARGS...]
#
# OUT keeps the checkpoint and all intermediate files. Needs /usr/bin/python3 with torch, onnx,
# numpy and regex (Debian: python3-torch python3-onnx python3-numpy python3-regex), the Debian
# packages fortunes and fortunes-min, and node with onnxruntime-node (~/.cache/xonnx-ort) and
# @huggingface/transformers (~/.cache/xonnx-tfjs), both installed here with --ignore-scripts.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:?usage: build_tiny.sh OUT [--skip-train] [-- TRAIN_ARGS...]}"
shift
TRAIN_ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-train) TRAIN_ARGS+=(--skip-train); shift ;;
    --) shift; TRAIN_ARGS+=("$@"); break ;;
    *) echo "build_tiny.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
PY=/usr/bin/python3
DEST="$ROOT/tests/models_llm/tiny"

# Debian's torch links the reference BLAS through the libblas.so.3 alternative; OpenBLAS
# (libopenblas0-pthread) is ~7x faster for training. Used only by this process when present.
OPENBLAS=/usr/lib/x86_64-linux-gnu/openblas-pthread
[ -f "$OPENBLAS/libblas.so.3" ] && export LD_LIBRARY_PATH="$OPENBLAS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

ORT_DIR="${XONNX_ORT_DIR:-$HOME/.cache/xonnx-ort}"
TFJS_DIR="${XONNX_TFJS_DIR:-$HOME/.cache/xonnx-tfjs}"
[ -d "$ORT_DIR/node_modules/onnxruntime-node" ] || npm install --prefix "$ORT_DIR" --ignore-scripts \
  --no-audit --no-fund --loglevel=error onnxruntime-node@1.30.0
[ -d "$TFJS_DIR/node_modules/@huggingface/transformers" ] || npm install --prefix "$TFJS_DIR" \
  --ignore-scripts --no-audit --no-fund --loglevel=error @huggingface/transformers@4

"$PY" "$ROOT/tools/llm/train_tiny_llm.py" --out "$OUT" "${TRAIN_ARGS[@]}"
node "$ROOT/tools/llm/check_tokenizer.mjs" "$OUT/tokenizer" "$OUT/tokenizer_cases.json"
for precision in fp32 int4; do
  "$PY" "$ROOT/tools/llm/make_genai_model.py" --out "$OUT/genai_$precision" --checkpoint "$OUT/model.pt" \
    --precision "$precision" --tokenizer "$OUT/tokenizer"
done
"$PY" "$ROOT/tools/llm/check_ground_truth.py" "$OUT" | tee "$OUT/ort_check.json"

mkdir -p "$DEST"
rm -rf "${DEST:?}"/*
cp -r "$OUT/torch" "$OUT/genai_fp32" "$OUT/genai_int4" "$DEST/"
cp "$OUT/ground_truth.json" "$OUT/heldout.txt" "$OUT/tokenizer_cases.json" "$OUT/ort_check.json" "$DEST/"
du -sh "$DEST" "$DEST"/*
