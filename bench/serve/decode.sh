#!/usr/bin/env bash
# Aggregate decode tokens/s of `xonnx serve` with 4 concurrent streams, batched (--parallel 4)
# and not (--parallel 1: the 4 requests take turns), on one model. Both servers run at once and
# the rounds alternate between them, so that a loaded machine slows both alike.
#   bash bench/serve/decode.sh [path/to/xonnx] [MODEL_DIR] [rounds] [max_tokens]
# Prints per round the wall-clock aggregate (completion tokens / wall time of the 4 requests)
# and, at the end, each server's decode-only rate from /metrics (generated tokens / decode
# seconds) and the ratios. End-of-sequence is biased away (logit_bias) so every request
# generates max_tokens tokens. XONNX_SERVE_THREADS (default 0: all cores) sets --threads.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
xonnx="${1:-$here/../../build/bin/xonnx}"
model="${2:-$here/../../tests/models_llm/tiny/genai_int4}"
rounds="${3:-3}"
max_tokens="${4:-48}"
streams=4
name="$(basename "$model")"
source "$here/../../sdk/examples/chat/serve_local.sh"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
declare -A base
for parallel in 1 4; do
  log="$(mktemp)"
  serve_start "$log" "$xonnx" "$model" --parallel "$parallel" --threads "${XONNX_SERVE_THREADS:-0}" \
    --ctx-size 256 --keep-alive -1
  pids+=("$SERVE_PID")
  base[$parallel]=$SERVE_BASE
done

# The special tokens of the model's tokenizer (end-of-sequence among them) get -100.
bias="$(curl -s "${base[1]}/tokenize" -H 'Content-Type: application/json' \
  -d '{"content":"<|endoftext|><|im_end|>","add_special":false}' | sed -n 's/.*"tokens":\[\([0-9,]*\)\].*/\1/p' |
  tr ',' '\n' | sed 's/.*/"&":-100/' | paste -sd, -)"
body="{\"model\":\"$name\",\"prompt\":\"Once upon a time\",\"max_tokens\":$max_tokens,\"temperature\":0,\"logit_bias\":{$bias}}"

now_ms() { date +%s%3N; }
round() {  # round BASE: prints aggregate tokens/s of $streams concurrent requests
  local b=$1 start end tokens=0 i out clients=()
  out="$(mktemp -d)"
  start=$(now_ms)
  for i in $(seq 1 $streams); do
    curl -s "$b/v1/completions" -H 'Content-Type: application/json' -d "$body" >"$out/$i" &
    clients+=($!)
  done
  wait "${clients[@]}"  # not the servers, which are children too
  end=$(now_ms)
  for i in $(seq 1 $streams); do
    tokens=$((tokens + $(sed -n 's/.*"completion_tokens":\([0-9]*\).*/\1/p' "$out/$i")))
  done
  rm -rf "$out"
  awk -v t="$tokens" -v ms="$((end - start))" 'BEGIN { printf "%.1f", t * 1000 / ms }'
}
decode_rate() {  # decode-only tokens/s since start, from /metrics
  curl -s "$1/metrics" | awk '/^xonnx_model_generated_tokens_total/ { t = $2 } /^xonnx_model_decode_seconds_total/ { s = $2 }
    END { printf "%.1f", (s > 0 ? t / s : 0) }'
}

round "${base[1]}" >/dev/null  # warm-up
round "${base[4]}" >/dev/null
sum1=0 sum4=0
for r in $(seq 1 "$rounds"); do
  a=$(round "${base[1]}")
  b=$(round "${base[4]}")
  echo "round $r: --parallel 1 $a tok/s, --parallel 4 $b tok/s (x$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }'))"
  sum1=$(awk -v s="$sum1" -v a="$a" 'BEGIN { print s + a }')
  sum4=$(awk -v s="$sum4" -v b="$b" 'BEGIN { print s + b }')
done
d1=$(decode_rate "${base[1]}")
d4=$(decode_rate "${base[4]}")
echo "mean aggregate ($streams streams, $max_tokens tokens each): --parallel 1 $(awk -v s="$sum1" -v r="$rounds" 'BEGIN { printf "%.1f", s / r }')" \
  "tok/s, --parallel 4 $(awk -v s="$sum4" -v r="$rounds" 'BEGIN { printf "%.1f", s / r }') tok/s," \
  "ratio x$(awk -v a="$sum1" -v b="$sum4" 'BEGIN { printf "%.2f", b / a }')"
echo "decode only (/metrics, incl. warm-up): --parallel 1 $d1 tok/s, --parallel 4 $d4 tok/s," \
  "ratio x$(awk -v a="$d1" -v b="$d4" 'BEGIN { printf "%.2f", b / a }')"
