#!/usr/bin/env bash
# Configures and builds xonnx (Release) into build/ with the "release" preset.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j"$(nproc)"
