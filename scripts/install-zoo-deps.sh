#!/usr/bin/env bash
# Installs what the model zoo's scripts need, only what is missing (apt): Debian's
# python3-torch / torchvision / onnx / numpy to export it (tools/export_zoo.py, ~1 GB),
# python3-matplotlib for the ratio chart (bench/zoo_report.py), and node + npm for ONNX Runtime
# (bench/ort/install.sh). Used by scripts/test-zoo.sh and `bench/compare_ort.sh --zoo`.
set -euo pipefail
missing=()
for p in python3-torch python3-torchvision python3-onnx python3-numpy python3-matplotlib; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
[ ${#missing[@]} -gt 0 ] || exit 0
echo "[zoo-deps] installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || echo "[zoo-deps] warning: apt-get update reported errors (continuing)" >&2
$SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
