#!/usr/bin/env bash
# Chat demo: starts `xonnx serve` with a GenAI model folder (default: the shipped tiny model,
# tests/models_llm/tiny/genai_int4) and talks to it with the official openai npm client: a
# conversation of several turns, each answer streamed as it is generated.
#   bash scripts/demo-chat.sh [QUESTION ...] [--model DIR] [-- CLIENT OPTIONS]
# CLIENT OPTIONS (sdk/examples/chat/chat.mjs): --max-tokens N, --temperature T, --seed S.
# Installs what is missing (apt: scripts/install-deps.sh and npm; npm: openai into
# ~/.cache/xonnx-serve), builds build/bin/xonnx, writes build/demos/chat/transcript.json.
# The server and client part: sdk/examples/chat/run_chat.sh (the demo-chat test runs it too).
# The shipped model is 1.3M parameters trained for minutes on fortunes: it answers in the
# style of its training text, not sensibly; point --model at a real GenAI folder for that.
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=tests/models_llm/tiny/genai_int4
QUESTIONS=() EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --model) MODEL=${2:?--model needs a folder}; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) QUESTIONS+=("$1"); shift ;;
  esac
done
[ -f "$MODEL/genai_config.json" ] || { echo "not a GenAI model folder: $MODEL" >&2; exit 2; }
[ ${#QUESTIONS[@]} -gt 0 ] || QUESTIONS=("What is the secret of a happy life?" "And what should I avoid?")

bash scripts/install-deps.sh >&2
command -v npm >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm >&2
cmake --preset release >/dev/null
cmake --build --preset release --target xonnx >&2
OUT=build/demos/chat
bash sdk/examples/chat/run_chat.sh build/bin/xonnx "$MODEL" "$OUT" ${EXTRA[@]+"${EXTRA[@]}"} "${QUESTIONS[@]}"
echo "transcript: $OUT/transcript.json; server log: $OUT/serve.log" >&2
