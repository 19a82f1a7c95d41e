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
source "$here/serve_local.sh"
cache=${XONNX_SERVE_CACHE:-$HOME/.cache/xonnx-serve}
mkdir -p "$out"
install_openai_client "$cache"
SERVE_PID=""
trap '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; wait 2>/dev/null || true' EXIT
serve_start "$out/serve.log" "$xonnx" "$model" --keep-alive -1
model_id=$(basename "$(cd "$model" && pwd)")
echo "== xonnx serve on $SERVE_BASE/v1, model \"$model_id\"; the openai client asks:" >&2
node "$here/chat.mjs" --modules "$cache/node_modules" --base "$SERVE_BASE/v1" \
  --model "$model_id" --transcript "$out/transcript.json" "$@"
