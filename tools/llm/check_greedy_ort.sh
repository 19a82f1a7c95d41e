#!/usr/bin/env bash
# Greedy decoding of one GenAI folder in xonnx and in ONNX Runtime must pick the same tokens:
#   bash tools/llm/check_greedy_ort.sh MODEL_DIR [TOKENS] [PROMPT]
# The prompt is encoded with tools/llm/bpe.py (the folder's tokenizer.json; the 0.5B presets
# share the tiny model's), ORT runs it through bench/llm/ort_generate.js (past/present bound to
# one buffer), xonnx through `xonnx generate --temperature 0 --ignore-eos --ids`; the ids are
# compared. Exit status 1 on a difference. The slow tier runs it on the 0.5B-shape folders
# (random weights: fp32 and int4; the int4 folder is checked over fewer tokens, since both
# engines quantize activations to int8 per block, each with its own rounding).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
model="${1:?usage: check_greedy_ort.sh MODEL_DIR [TOKENS] [PROMPT]}"
tokens="${2:-32}"
prompt="${3:-<|endoftext|>Once upon a time there was a}"
xonnx="${XONNX_BIN:-$root/build/bin/xonnx}"
py() { PYTHONPATH="$here" /usr/bin/python3 -c "$1" "${@:2}"; }

ids="$(py 'import sys; from bpe import Tokenizer
print(",".join(map(str, Tokenizer.load(sys.argv[1]).encode(sys.argv[2]))))' "$model/tokenizer.json" "$prompt")"
ort_ids="$(node "$root/bench/llm/ort_generate.js" "$model" --prompt-ids "$ids" --tokens "$tokens" --runs 1 --warmup 0 |
  tail -1 | sed -n 's/.*"ids":\[\([0-9,]*\)\].*/\1/p')"
xonnx_ids="$("$xonnx" generate "$model" -p "$prompt" -n "$tokens" --temperature 0 --ignore-eos --ids -q | tr ' ' ',')"
if [ "$xonnx_ids" != "$ort_ids" ]; then
  printf '%s: greedy tokens differ from ONNX Runtime'"'"'s\n  xonnx: %s\n  ORT:   %s\n' "$model" "$xonnx_ids" "$ort_ids" >&2
  exit 1
fi
echo "$model: the same $tokens greedy tokens as ONNX Runtime ($xonnx_ids)"
