#!/usr/bin/env bash
# Raw export vs converted file: for each model, `xonnx convert` it, then run `xonnx bench --json`
# on the raw file (session-time optimization at --optimize all), on the converted file, and on
# the raw file at --optimize none (what session creation did before the pass library ran there),
# alternating the three in each of ROUNDS rounds; prints a markdown table of medians over rounds
# (latency and session creation) and the ratios raw/converted.
#
# Usage: bench/raw_vs_converted.sh [--rounds N] [--iters N] [--threads N] [MODEL_DIR...]
#   MODEL_DIR holds model.onnx and test_data_set_0/input_I.pb (tests/models layout); default:
#   every folder of tests/models. XONNX: the CLI (default build/bin/xonnx).
set -euo pipefail
cd "$(dirname "$0")/.."
XONNX=${XONNX:-build/bin/xonnx}
ROUNDS=3 ITERS=30 THREADS=1
dirs=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) ROUNDS=$2; shift 2 ;;
    --iters) ITERS=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
[[ ${#dirs[@]} -gt 0 ]] || dirs=(tests/models/*/)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
field() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p"; }

echo "| model | raw ms | converted ms | raw/converted | raw@none ms | init raw ms | init converted ms | init raw@none ms | graph passes ms (raw) |"
echo "|---|---|---|---|---|---|---|---|---|"
for d in "${dirs[@]}"; do
  d=${d%/}
  name=$(basename "$d")
  model=$d/model.onnx
  [[ -f $model ]] || continue
  # Inputs of test_data_set_0 by graph-input order (names from `xonnx info`).
  mapfile -t names < <("$XONNX" info "$model" --optimize none |
                       awk '/^inputs:/ {on=1; next} /^outputs:/ {on=0} on {sub(/^  /, ""); sub(/:.*/, ""); print}')
  args=()
  for i in "${!names[@]}"; do
    f=$d/test_data_set_0/input_$i.pb
    [[ -f $f ]] && args+=(--input "${names[$i]}=$f")
  done
  conv=$tmp/$name.onnx
  if ! "$XONNX" convert "$model" "$conv" >/dev/null 2>"$tmp/err"; then
    echo "| $name | convert failed: $(head -c 120 "$tmp/err") |"
    continue
  fi
  : >"$tmp/raw" ; : >"$tmp/conv"; : >"$tmp/none"
  for ((r = 0; r < ROUNDS; ++r)); do
    "$XONNX" bench "$model" "${args[@]}" --threads "$THREADS" --iters "$ITERS" --json | tail -1 >>"$tmp/raw"
    "$XONNX" bench "$conv" "${args[@]}" --threads "$THREADS" --iters "$ITERS" --json | tail -1 >>"$tmp/conv"
    "$XONNX" bench "$model" "${args[@]}" --threads "$THREADS" --iters "$ITERS" --json --optimize none | tail -1 >>"$tmp/none"
  done
  m() { field "$2" <"$tmp/$1" | median; }
  raw=$(m raw median_ms) cv=$(m conv median_ms) none=$(m none median_ms)
  printf "| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f | %.2f |\n" "$name" "$raw" "$cv" \
    "$(awk -v a="$raw" -v b="$cv" 'BEGIN {print a / b}')" "$none" "$(m raw init_ms)" "$(m conv init_ms)" \
    "$(m none init_ms)" "$(m raw graph_passes_ms)"
done
