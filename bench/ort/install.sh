#!/usr/bin/env bash
# Installs onnxruntime-node (CPU) from npm into a cache folder if it is missing, and checks that
# its native binding loads. Used by bench/compare_ort.sh and scripts/test-zoo.sh.
#   bench/ort/install.sh [DIR [VERSION]]   (DIR default: $XONNX_ORT_DIR or ~/.cache/xonnx-ort;
#   VERSION default: $XONNX_ORT_VERSION or 1.30.0). npm runs with --ignore-scripts: the
# package's install script downloads GPU binaries from a host that may be unreachable; the CPU
# library ships in the package itself.
set -euo pipefail
ORT_VERSION="${2:-${XONNX_ORT_VERSION:-1.30.0}}"
ORT_DIR="${1:-${XONNX_ORT_DIR:-$HOME/.cache/xonnx-ort}}"
command -v node >/dev/null || { echo "bench/ort/install.sh: node (v18+) is required" >&2; exit 2; }
mkdir -p "$ORT_DIR"
export XONNX_ORT_DIR="$(cd "$ORT_DIR" && pwd)"
installed="$(node -p "try { require(process.env.XONNX_ORT_DIR + '/node_modules/onnxruntime-node/package.json').version } catch (e) { '' }")"
if [ "$installed" != "$ORT_VERSION" ]; then
  echo "installing onnxruntime-node@$ORT_VERSION into $XONNX_ORT_DIR" >&2
  npm install --prefix "$XONNX_ORT_DIR" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "onnxruntime-node@$ORT_VERSION" >&2
fi
node -e "const o = require(require.resolve('onnxruntime-node', {paths: [process.env.XONNX_ORT_DIR]}));
         if (!o.listSupportedBackends().some((b) => b.name === 'cpu')) throw new Error('no cpu backend');" || {
  echo "bench/ort/install.sh: onnxruntime-node's native binding does not load from $XONNX_ORT_DIR" >&2
  exit 1
}
