#!/usr/bin/env bash
# The demo pipelines with the engine swapped: OCR time per 640x480 image and VAD real-time
# factor over 60 s of audio, xonnx against ONNX Runtime 1.30 (onnxruntime-node, CPU EP).
#
#   bench/demo_compare.sh [--rounds N] [--repeat N] [--threads "1 2"] [--out FILE]
#
# Inputs: the OCR demo's rendered page (640x480, six lines) and 60 s of the VAD demo's
# synthesised speech (44.1 kHz stereo float). Both engines run the same pipeline: the demo
# program records every model input of one pass (--record), ORT replays exactly those runs
# (bench/demo/ort_replay.js), and ORT's pipeline time is the demo's own pre/post-processing
# time (image resizing, DB boxes, crops, CTC; WAV mixing, resampling, segmenting: measured in
# the xonnx run of the same round) plus ORT's model time. Each round runs xonnx and ORT once
# per thread count, alternating which goes first; every figure is the median over the rounds
# of the median of --repeat passes. Ratios are xonnx / ORT (below 1 = xonnx faster).
# Options: --rounds N (default 3), --repeat N passes per run (default 5), --threads (default
# "1 2"), --out FILE keeps the raw JSON lines, --ort-dir DIR (default $XONNX_ORT_DIR or
# ~/.cache/xonnx-ort).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
ROUNDS=3 REPEAT=5 THREADS="1 2" OUT=""
ORT_VERSION="${XONNX_ORT_VERSION:-1.30.0}"
ORT_DIR="${XONNX_ORT_DIR:-$HOME/.cache/xonnx-ort}"
die() { echo "demo_compare.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS="${2:?--rounds needs a value}"; shift 2 ;;
    --repeat) REPEAT="${2:?--repeat needs a value}"; shift 2 ;;
    --threads) THREADS="${2:?--threads needs a value}"; shift 2 ;;
    --out) OUT="${2:?--out needs a value}"; shift 2 ;;
    --ort-dir) ORT_DIR="${2:?--ort-dir needs a value}"; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument $1" ;;
  esac
done

OCR_MODELS=$(bash scripts/install-demo-deps.sh ocr | tail -1)
VAD_MODELS=$(bash scripts/install-demo-deps.sh vad | tail -1)
bash scripts/install-deps.sh >&2
cmake --preset release >/dev/null
cmake --build --preset release --target xonnx_ocr xonnx_vad >&2
bash bench/ort/install.sh "$ORT_DIR" "$ORT_VERSION"
export XONNX_ORT_DIR="$(cd "$ORT_DIR" && pwd)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$OUT" ] || OUT="$work/results.jsonl"
: > "$OUT"
bash sdk/examples/ocr/make_sample.sh "$work/page.ppm" "$work/truth.txt"
bash sdk/examples/vad/make_sample.sh "$work/speech.wav" "$work/segments.txt" 60
OCR=(build/bin/xonnx-ocr "$work/page.ppm" --models "$OCR_MODELS")
VAD=(build/bin/xonnx-vad "$work/speech.wav" --model "$VAD_MODELS/silero_vad_v5.onnx")
echo "recording one pass of each pipeline's model inputs" >&2
"${OCR[@]}" --record "$work/ocr-runs" > /dev/null
"${VAD[@]}" --record "$work/vad-runs" > /dev/null

# Appends the JSON line a run prints (ORT) or writes (xonnx, --stats-json) to $OUT, tagged.
tagged() {  # DEMO ROUND JSON
  echo "{\"demo\":\"$1\",\"round\":$2,${3:1}" >> "$OUT"
}
run_xonnx() {  # DEMO ROUND THREADS
  local -n cmd=${1^^}
  "${cmd[@]}" --threads "$3" --repeat "$REPEAT" --stats-json "$work/stats.json" > /dev/null 2> "$work/log" ||
    { cat "$work/log" >&2; die "xonnx-$1 failed"; }
  tagged "$1" "$2" "$(cat "$work/stats.json")"
}
run_ort() {  # DEMO ROUND THREADS
  tagged "$1" "$2" "$(node bench/demo/ort_replay.js "$work/$1-runs" --threads "$3" --repeat "$REPEAT")"
}
for ((round = 0; round < ROUNDS; ++round)); do
  for t in $THREADS; do
    for demo in ocr vad; do
      echo "== round $((round + 1))/$ROUNDS, $demo, $t thread(s)" >&2
      if ((round % 2 == 0)); then
        run_xonnx $demo $round "$t"; run_ort $demo $round "$t"
      else
        run_ort $demo $round "$t"; run_xonnx $demo $round "$t"
      fi
    done
  done
done
echo
node bench/demo/table.js "$OUT"
