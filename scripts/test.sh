#!/usr/bin/env bash
# The whole test suite on a fresh machine: install dependencies, build, run ctest
# (unit tests, model fixtures, ONNX conformance suites against their manifests, CLI checks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --preset release --output-on-failure
