#!/usr/bin/env bash
# `xonnx serve` driven by clients nobody here wrote: the official `openai` npm package
# (tests/serve/openai_client.mjs) and curl, against the shipped tiny model on loopback.
# Installs the pinned package into a cache folder first (no install scripts run).
#   bash tests/serve/openai_client.sh path/to/xonnx
# XONNX_SERVE_CACHE overrides the cache folder (default ~/.cache/xonnx-serve).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
xonnx="${1:?usage: openai_client.sh path/to/xonnx}"
model="$here/../models_llm/tiny/genai_int4"
encoder="$here/../models_embedding/tiny_encoder"
cache="${XONNX_SERVE_CACHE:-$HOME/.cache/xonnx-serve}"
source "$here/../../sdk/examples/chat/serve_local.sh"

command -v node >/dev/null || { echo "[serve-openai] node (v18+) is required" >&2; exit 1; }
command -v curl >/dev/null || { echo "[serve-openai] curl is required" >&2; exit 1; }
install_openai_client "$cache"

log="$(mktemp)"
SERVE_PID=""
cleanup() {
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -f "$log"
}
trap cleanup EXIT
serve_start "$log" "$xonnx" "$model" "$encoder" --api-key test-key --threads 1 --parallel 2 --keep-alive -1 || exit 1
pid=$SERVE_PID
base=$SERVE_BASE

fail() { echo "[serve-openai] FAIL: $*" >&2; cat "$log" >&2; exit 1; }
auth=(-H "Authorization: Bearer test-key")
# curl: a streamed chat ends with data: [DONE]; bad JSON is a 400; no key is a 401.
stream="$(curl -sN "${auth[@]}" -H 'Content-Type: application/json' "$base/v1/chat/completions" \
  -d '{"model":"genai_int4","messages":[{"role":"user","content":"Hello"}],"stream":true,"max_tokens":8}')"
echo "$stream" | grep -q '^data: \[DONE\]' || fail "stream without [DONE]: $stream"
echo "$stream" | grep -q '"chat.completion.chunk"' || fail "stream without chunks: $stream"
code="$(curl -s -o /dev/null -w '%{http_code}' "${auth[@]}" -H 'Content-Type: application/json' "$base/v1/chat/completions" -d '{oops')"
[ "$code" = 400 ] || fail "bad JSON gave $code"
code="$(curl -s -o /dev/null -w '%{http_code}' "$base/v1/models")"
[ "$code" = 401 ] || fail "no API key gave $code"
metrics="$(curl -s "${auth[@]}" "$base/metrics")"  # whole, so that grep -q closing early is no failed pipe
grep -q '^xonnx_requests_total' <<<"$metrics" || fail "/metrics has no request counter"
# curl: an embedding as OpenAI's shape.
emb="$(curl -s "${auth[@]}" -H 'Content-Type: application/json' "$base/v1/embeddings" -d '{"model":"tiny_encoder","input":"Hello"}')"
echo "$emb" | grep -q '"object":"embedding"' || fail "embeddings: $emb"

node "$here/openai_client.mjs" --modules "$cache/node_modules" --base "$base/v1" --key test-key \
  --expected "$here/../models_embedding/tiny_encoder_expected.json" || fail "openai client"

# SIGTERM: a graceful stop.
kill -TERM "$pid"
wait "$pid" || fail "the server exited with $? on SIGTERM"
SERVE_PID=""
grep -q "stopped" "$log" || fail "no graceful stop"
echo "[serve-openai] ok"
