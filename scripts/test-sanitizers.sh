#!/usr/bin/env bash
# The sanitizer tier, a named slow tier (scripts/test.sh runs it with XONNX_SANITIZERS=1;
# docs/security.md): one clang 14 tree
# (preset `sanitize`: ASan + UBSan without recovery, -O1, libFuzzer coverage) builds only what
# it runs — the unit tests, the CLI (model, cli and convert tests) and the fuzz targets — then
#   1. ctest under ASan+UBSan: unit, models, cli, convert-cli, bad-models (every input a fuzzer
#      ever crashed on);
#   2. each fuzz target for XONNX_SANITIZE_FUZZ_SECONDS (default 20) with a fixed seed.
# Prints the wall time of each step. XONNX_SANITIZE_FUZZ_SECONDS=0 skips step 2.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${XONNX_SANITIZE_FUZZ_SECONDS:-20}
BUILD=build/sanitize
times=()
step() {  # step NAME COMMAND...: runs and records the wall time
  local name=$1 t0=$(date +%s)
  shift
  echo "== sanitize: $name"
  "$@"
  times+=("$name $(( $(date +%s) - t0 )) s")
}
targets=(xonnx_unit_tests xonnx xonnx_fuzz_replay
         xonnx_fuzz_load_model xonnx_fuzz_tensor_readers xonnx_fuzz_session_run xonnx_fuzz_convert)
step configure cmake --preset sanitize
step build cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}"
# detect_leaks: a leak is a bug too; the unit tests' gtest death tests need no fork server.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
step ctest ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" -R '^(unit|models|cli|convert-cli|bad-models)$'
if [ "$FUZZ_SECONDS" != 0 ]; then
  step fuzz env XONNX_FUZZ_SEED=1 bash scripts/fuzz.sh "$FUZZ_SECONDS"
fi
printf '[test-sanitizers] %s\n' "${times[@]}"
