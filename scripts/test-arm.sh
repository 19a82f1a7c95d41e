#!/usr/bin/env bash
# The ARM cross builds and their tests under emulation, one command:
#   bash scripts/test-arm.sh [aarch64|armv7 ...]     (default: both)
# For each target: installs the cross toolchain, qemu-user and the sysroot if missing
# (scripts/install-cross-deps.sh), then `cmake --preset linux-<arch>`, `cmake --build --preset
# linux-<arch>` and `ctest --preset linux-<arch>` (unit tests, model fixtures, CLI checks and a
# conformance subset, all under qemu-user). Prints the wall time of each step.
set -euo pipefail
cd "$(dirname "$0")/.."
ARCHES=("$@")
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(aarch64 armv7)
bash scripts/install-cross-deps.sh "${ARCHES[@]}"
summary=()
for a in "${ARCHES[@]}"; do
  preset=linux-$a
  echo "== $preset: configure + build"
  t0=$(date +%s)
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j"$(nproc)"
  t1=$(date +%s)
  echo "== $preset: ctest (under qemu)"
  ctest --preset "$preset"
  t2=$(date +%s)
  summary+=("$preset: build $((t1 - t0)) s, tests $((t2 - t1)) s")
done
printf '[test-arm] %s\n' "${summary[@]}"
