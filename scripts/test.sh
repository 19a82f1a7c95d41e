#!/usr/bin/env bash
# The whole test suite on a fresh machine: check the include rules (scripts/check-includes.sh,
# first: it takes a second and fails on a forbidden include), install dependencies, build, run ctest
# (unit tests, model fixtures, ONNX conformance suites against their manifests, CLI checks),
# then the ARM cross builds (aarch64, armv7) with their tests under qemu-user
# (scripts/test-arm.sh), then the SDK as an application gets it: install, find_package,
# pkg-config, .debs, selective builds (scripts/test-packaging.sh: the host tree, ~3 min, and the
# aarch64 one, consumers under qemu-user and its selective static app, ~5 min; estimated).
# Every host build replays tests/bad_models (inputs fuzzers crashed on) through every fuzz
# target (ctest bad-models). Between the host ctest and ARM, the quick sanitizer tier
# (scripts/test-sanitizers.sh, XONNX_SANITIZE_TIER=quick: a clang tree with ASan + UBSan builds
# the runtime, the converter and the fuzz targets, replays tests/bad_models and runs each fuzz
# target for 20 s after its seeds, the test models among them; then a second clang tree with
# TSan (-O0: half the build time of -O1) builds and runs the concurrency test; ~11 + ~3 min cold
# on 2 cores, measured 2026-12-02).
# XONNX_SANITIZERS=full runs the named slow tier instead (also the unit, concurrency, model and
# CLI tests under ASan + UBSan; ~30 min cold), =0 none
# (docs/security.md).
# XONNX_SKIP_ARM=1 runs the host part only.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
bash scripts/check-includes.sh
bash scripts/build.sh
ctest --preset release --output-on-failure | tee "$logs/host.log"
case "${XONNX_SANITIZERS:-quick}" in
  0) ;;
  quick) XONNX_SANITIZE_TIER=quick bash scripts/test-sanitizers.sh | tee "$logs/sanitize.log" ;;
  1|full) XONNX_SANITIZE_TIER=full bash scripts/test-sanitizers.sh | tee "$logs/sanitize.log" ;;
  *) echo "XONNX_SANITIZERS must be quick, full or 0" >&2; exit 2 ;;
esac
if [ "${XONNX_SKIP_ARM:-0}" != 1 ]; then
  bash scripts/test-arm.sh | tee "$logs/arm.log"
fi
if [ "${XONNX_SKIP_ARM:-0}" != 1 ]; then
  bash scripts/test-packaging.sh host aarch64
else
  bash scripts/test-packaging.sh host
fi
# One closing line over every ctest run above (each ended with "... tests failed out of N").
sed -nE 's/^[0-9]+% tests passed, ([0-9]+) tests? failed out of ([0-9]+)$/\1 \2/p' "$logs"/*.log |
  awk '{failed += $1; total += $2} END {printf "total: %d passed, %d failed\n", total - failed, failed}'
