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
cache="${XONNX_SERVE_CACHE:-$HOME/.cache/xonnx-serve}"
OPENAI=openai@6.49.0

command -v node >/dev/null || { echo "[serve-openai] node (v18+) is required" >&2; exit 1; }
command -v curl >/dev/null || { echo "[serve-openai] curl is required" >&2; exit 1; }
mkdir -p "$cache"
have="$(node -p "try { require('$cache/node_modules/openai/package.json').version } catch (e) { '' }" 2>/dev/null || true)"
if [ "$have" != "${OPENAI##*@}" ]; then
  echo "[serve-openai] installing $OPENAI into $cache"
  npm install --prefix "$cache" --ignore-scripts --no-audit --no-fund --loglevel=error "$OPENAI" >&2
fi

log="$(mktemp)"
port_file="$(mktemp)"
cleanup() {
  [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -f "$log" "$port_file"
}
trap cleanup EXIT
"$xonnx" serve "$model" --port 0 --api-key test-key --threads 1 --parallel 2 --keep-alive -1 2>"$log" &
pid=$!
for _ in $(seq 1 100); do
  port="$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/v1.*|\1|p' "$log")"
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "[serve-openai] the server did not start" >&2; cat "$log" >&2; exit 1; }
base="http://127.0.0.1:$port"
for _ in $(seq 1 300); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/health")" = 200 ] && break
  sleep 0.1
done

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
curl -s "${auth[@]}" "$base/metrics" | grep -q '^xonnx_requests_total' || fail "/metrics has no request counter"

node "$here/openai_client.mjs" --modules "$cache/node_modules" --base "$base/v1" --key test-key || fail "openai client"

# SIGTERM: a graceful stop.
kill -TERM "$pid"
wait "$pid" || fail "the server exited with $? on SIGTERM"
pid=""
grep -q "stopped" "$log" || fail "no graceful stop"
echo "[serve-openai] ok"
