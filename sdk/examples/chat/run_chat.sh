#!/usr/bin/env bash
# Starts `xonnx serve` on a free loopback port with one GenAI model folder, waits until it is
# ready, and runs the openai-client conversation (chat.mjs) against it; stops the server after.
# Installs the pinned openai npm package into $XONNX_SERVE_CACHE (default ~/.cache/xonnx-serve)
# when missing (no install scripts run).
#   run_chat.sh XONNX MODEL_DIR OUT_DIR [CHAT.MJS OPTIONS] QUESTION...
# Writes OUT_DIR/serve.log and OUT_DIR/transcript.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
xonnx=${1:?usage: run_chat.sh XONNX MODEL_DIR OUT_DIR [OPTIONS] QUESTION...}
model=${2:?model folder} out=${3:?output folder}
shift 3
command -v node >/dev/null || { echo "node (v18+) is required" >&2; exit 1; }
command -v curl >/dev/null || { echo "curl is required" >&2; exit 1; }
cache=${XONNX_SERVE_CACHE:-$HOME/.cache/xonnx-serve}
OPENAI=openai@6.49.0
mkdir -p "$cache" "$out"
exec 9> "$cache/.lock"
flock 9
have="$(node -p "try { require('$cache/node_modules/openai/package.json').version } catch (e) { '' }" 2>/dev/null || true)"
if [ "$have" != "${OPENAI##*@}" ]; then
  npm install --prefix "$cache" --ignore-scripts --no-audit --no-fund --loglevel=error "$OPENAI" >&2
fi
flock -u 9

log=$out/serve.log
"$xonnx" serve "$model" --port 0 --keep-alive -1 2>"$log" &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true' EXIT
port=""
for _ in $(seq 1 300); do
  port="$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/v1.*|\1|p' "$log" | head -1)"
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "the server did not start:" >&2; cat "$log" >&2; exit 1; }
ready=0
for _ in $(seq 1 600); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] && { ready=1; break; }
  sleep 0.1
done
[ $ready = 1 ] || { echo "the model did not load in 60 s:" >&2; cat "$log" >&2; exit 1; }
model_id=$(basename "$(cd "$model" && pwd)")
echo "== xonnx serve on http://127.0.0.1:$port/v1, model \"$model_id\"; the openai client asks:" >&2
node "$here/chat.mjs" --modules "$cache/node_modules" --base "http://127.0.0.1:$port/v1" \
  --model "$model_id" --transcript "$out/transcript.json" "$@"
