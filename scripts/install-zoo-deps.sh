#!/usr/bin/env bash
# Installs what the model zoo's scripts need, only what is missing (apt): Debian's
# python3-torch / torchvision / onnx / numpy to export it (tools/export_zoo.py, ~1 GB),
# python3-matplotlib for the ratio chart (bench/zoo_report.py), and node + npm for ONNX Runtime
# (bench/ort/install.sh). Used by scripts/test-zoo.sh and `bench/compare_ort.sh --zoo`.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install-missing.sh" zoo-deps \
  python3-torch python3-torchvision python3-onnx python3-numpy python3-matplotlib node
