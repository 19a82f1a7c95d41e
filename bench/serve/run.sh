#!/usr/bin/env bash
# Load test of `xonnx serve` on loopback (bench/serve/load.mjs): 8 clients x 25 requests per
# round, with and without batching (--parallel 1 and 4), the same mix each time.
#   bash bench/serve/run.sh [path/to/xonnx] [MODEL_DIR] [rounds]
# XONNX_SERVE_PARALLEL (default "1 4") and XONNX_SERVE_THREADS (default 0: all cores) vary the server.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
xonnx="${1:-$here/../../build/bin/xonnx}"
model="${2:-$here/../../tests/models_llm/tiny/genai_int4}"
rounds="${3:-3}"
name="$(basename "$model")"
threads="${XONNX_SERVE_THREADS:-0}"
for parallel in ${XONNX_SERVE_PARALLEL:-1 4}; do
  log="$(mktemp)"
  "$xonnx" serve "$model" --port 0 --parallel "$parallel" --threads "$threads" --max-queue 64 --keep-alive -1 2>"$log" &
  pid=$!
  port=""
  for _ in $(seq 1 100); do
    port="$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/v1.*|\1|p' "$log")"
    [ -n "$port" ] && break
    sleep 0.1
  done
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ]; do sleep 0.1; done
  echo "== --parallel $parallel"
  status=0
  node "$here/load.mjs" --base "http://127.0.0.1:$port" --model "$name" --pid "$pid" --rounds "$rounds" || status=$?
  curl -s "http://127.0.0.1:$port/metrics" | grep -E '^xonnx_model_(decode_steps_total|generated_tokens_total)' || true
  kill -TERM "$pid"; wait "$pid" || true
  rm -f "$log"
  [ "$status" = 0 ] || { echo "load test failed (--parallel $parallel)"; exit 1; }
done
