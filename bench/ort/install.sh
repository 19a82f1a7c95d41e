#!/usr/bin/env bash
# Installs onnxruntime-node (ONNX Runtime's CPU build for Node.js) from npm into DIR if that
# version is not there yet, and checks that its native binding loads.
#   bash bench/ort/install.sh DIR VERSION
# `npm install --ignore-scripts`: the package's install script downloads GPU binaries from a
# host this machine cannot reach; the CPU library ships inside the package itself.
set -euo pipefail
DIR=${1:?usage: install.sh DIR VERSION} VERSION=${2:?usage: install.sh DIR VERSION}
command -v node >/dev/null || { echo "node (v18+) is required" >&2; exit 2; }
mkdir -p "$DIR"
export XONNX_ORT_DIR="$(cd "$DIR" && pwd)"
installed="$(node -p "try { require(process.env.XONNX_ORT_DIR + '/node_modules/onnxruntime-node/package.json').version } catch (e) { '' }")"
if [ "$installed" != "$VERSION" ]; then
  echo "installing onnxruntime-node@$VERSION into $XONNX_ORT_DIR" >&2
  npm install --prefix "$XONNX_ORT_DIR" --ignore-scripts --no-audit --no-fund --loglevel=error \
    "onnxruntime-node@$VERSION" >&2
fi
node -e "const o = require(require.resolve('onnxruntime-node', {paths: [process.env.XONNX_ORT_DIR]}));
         if (!o.listSupportedBackends().some((b) => b.name === 'cpu')) throw new Error('no cpu backend');" \
  || { echo "onnxruntime-node's native binding does not load from $XONNX_ORT_DIR" >&2; exit 1; }
