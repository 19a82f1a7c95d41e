#!/usr/bin/env bash
# xonnx vs ONNX Runtime on one GenAI folder (issue 24's targets): prefill of a ~512-token prompt
# and greedy decode of 64 tokens, at 1 and 2 threads, rounds alternating the engines.
#   bash bench/llm/compare_ort.sh [MODEL_DIR] [rounds]
# MODEL_DIR defaults to the 0.5B-shape int4 folder in ~/.cache/xonnx-llm/0.5b_int4, written on
# first use by tools/llm/make_genai_model.py --preset 0.5b --precision int4 (random weights).
# xonnx runs `xonnx generate --ignore-eos`; ORT runs bench/llm/ort_generate.js (past/present in
# one bound buffer, as ORT GenAI runs these folders) with a prompt of the same length. Prints
# per round and thread count both engines' prefill and decode tokens/s, then the medians and
# the ratios (xonnx / ORT tokens/s: above 1 is faster).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
model="${1:-$HOME/.cache/xonnx-llm/0.5b_int4}"
rounds="${2:-3}"
xonnx="${XONNX_BIN:-$root/build/bin/xonnx}"
tokens=64
if [ ! -f "$model/genai_config.json" ]; then
  /usr/bin/python3 "$root/tools/llm/make_genai_model.py" --out "$model" --preset 0.5b --precision int4
fi
# About 512 tokens of held-out fortunes (the tiny model's tokenizer, which the presets share).
prompt="$(head -c 1650 "$root/tests/models_llm/tiny/heldout.txt")"

results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
  for threads in 1 2; do
    # xonnx's summary: "prompt N tok, P tok/s | generated G tok, D tok/s | ..."
    line="$("$xonnx" generate "$model" -p "$prompt" -n "$tokens" --ignore-eos -t "$threads" \
      --max-length 1024 2>&1 >/dev/null | grep '^\[xonnx generate\]')"
    n="$(sed -n 's/.*prompt \([0-9]*\) tok.*/\1/p' <<<"$line")"
    xp="$(sed -n 's/.*prompt [0-9]* tok, \([0-9.]*\) tok\/s.*/\1/p' <<<"$line")"
    xd="$(sed -n 's/.*generated [0-9]* tok, \([0-9.]*\) tok\/s.*/\1/p' <<<"$line")"
    json="$(node "$here/ort_generate.js" "$model" --threads "$threads" --prompt-len "$n" --tokens "$tokens" \
      --runs 1 --warmup 1 | tail -1)"
    op="$(sed -n 's/.*"prefill_tokens_per_s":\([0-9.]*\).*/\1/p' <<<"$json")"
    od="$(sed -n 's/.*"decode_tokens_per_s":\([0-9.]*\).*/\1/p' <<<"$json")"
    echo "$threads $xp $op $xd $od" >>"$results"
    printf 'round %d, %d thread(s), %d prompt tokens: prefill xonnx %s ORT %s tok/s | decode xonnx %s ORT %s tok/s\n' \
      "$round" "$threads" "$n" "$xp" "$op" "$xd" "$od"
  done
done
echo "| threads | prefill xonnx tok/s | prefill ORT tok/s | ratio | decode xonnx tok/s | decode ORT tok/s | ratio |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for threads in 1 2; do
  awk -v t="$threads" '$1 == t { xp[++n] = $2; op[n] = $3; xd[n] = $4; od[n] = $5 }
    function median(a, n,   i, j, v) {
      for (i = 2; i <= n; ++i) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; --j) a[j + 1] = a[j]; a[j + 1] = v }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END { p1 = median(xp, n); p2 = median(op, n); d1 = median(xd, n); d2 = median(od, n)
          printf "| %d | %.1f | %.1f | %.2fx | %.1f | %.1f | %.2fx |\n", t, p1, p2, p1 / p2, d1, d2, d1 / d2 }' "$results"
done
