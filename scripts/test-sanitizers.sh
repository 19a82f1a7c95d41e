#!/usr/bin/env bash
# The sanitizer tiers (docs/security.md), in a clang 14 tree (preset `sanitize`: ASan + UBSan
# without recovery, -O1, libFuzzer coverage) that builds only what the tier runs.
# XONNX_SANITIZE_TIER picks one:
#   quick (CI's default run, scripts/test.sh): the fuzz targets, their replay tool and the
#     hostile-input unit tests (the runtime and the converter; no CLI, no other unit tests), then
#       1. ctest hardening, bad-models and bad-genai-files: every crafted hostile model, input and
#          output path of docs/security.md's classes, and every input a fuzzer ever crashed on,
#          through every target (tests/bad_genai: chat templates, tokenizers, genai configs);
#       2. each fuzz target for XONNX_SANITIZE_FUZZ_SECONDS (default 20) with a fixed seed; each
#          first runs all of its seeds (the test models: session creation and a run of each
#          under ASan + UBSan; the backend node tests when present; tests/bad_models; the
#          chat templates, tokenizers and genai configs under tests/ for the LLM-folder targets);
#       3. semantic mutations (scripts/fuzz-mutations.sh): every 4th mutant of the ONNX node
#          tests and of the test models under 1 MB (extreme attributes, integer inputs near 2^63)
#          through session_run, and of the tokenizer and genai_config seeds (extreme JSON values)
#          through their targets;
#       4. ThreadSanitizer (preset `tsan`, a second clang tree building only
#          xonnx_concurrency_tests): 8 threads x 200 runs on shared and per-thread sessions.
#   full (default here; the named slow tier, `bash scripts/test-sanitizers.sh`): also the unit
#     tests, the genai tests (tokenizer, chat templates), the concurrency test and the CLI under
#     ASan + UBSan, so step 1 is the unit, concurrent-runs, models, cli, convert-cli, genai,
#     bad-models and bad-genai-files ctests; then steps 2 to 4, step 3 over every mutant.
# Prints the wall time of each step. XONNX_SANITIZE_FUZZ_SECONDS=0 skips step 2,
# XONNX_SANITIZE_MUTATIONS_EVERY=0 step 3, XONNX_SANITIZE_TSAN=0 step 4.
set -euo pipefail
cd "$(dirname "$0")/.."
TIER=${XONNX_SANITIZE_TIER:-full}
FUZZ_SECONDS=${XONNX_SANITIZE_FUZZ_SECONDS:-20}
TSAN=${XONNX_SANITIZE_TSAN:-1}
MUTATIONS_EVERY=${XONNX_SANITIZE_MUTATIONS_EVERY:-$([ "$TIER" = quick ] && echo 4 || echo 1)}
BUILD=build/sanitize
times=()
step() {  # step NAME COMMAND...: runs and records the wall time
  local name=$1 t0=$(date +%s)
  shift
  echo "== sanitize: $name"
  "$@"
  times+=("$name $(( $(date +%s) - t0 )) s")
}
targets=(xonnx_fuzz_replay
         xonnx_fuzz_load_model xonnx_fuzz_tensor_readers xonnx_fuzz_session_run xonnx_fuzz_convert
         xonnx_fuzz_chat_template xonnx_fuzz_tokenizer xonnx_fuzz_genai_config xonnx_fuzz_serve_request)
tests='bad-models|bad-genai-files'
case $TIER in
  full) targets+=(xonnx xonnx_unit_tests xonnx_concurrency_tests xonnx_genai_tests)
        tests="unit|concurrent-runs|models|cli|convert-cli|genai|$tests" ;;
  quick) targets+=(xonnx_hardening_tests)
         tests="hardening|$tests" ;;
  *) echo "XONNX_SANITIZE_TIER must be quick or full, not '$TIER'" >&2; exit 2 ;;
esac
step configure cmake --preset sanitize
step build cmake --build "$BUILD" -j"$(nproc)" --target "${targets[@]}"
# detect_leaks: a leak is a bug too; the unit tests' gtest death tests need no fork server.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
step ctest ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" -R "^($tests)\$"
if [ "$FUZZ_SECONDS" != 0 ]; then
  step fuzz env XONNX_FUZZ_SEED=1 bash scripts/fuzz.sh "$FUZZ_SECONDS"
fi
if [ "$MUTATIONS_EVERY" != 0 ]; then
  step mutations bash scripts/fuzz-mutations.sh "$MUTATIONS_EVERY" 1
fi
if [ "$TSAN" != 0 ]; then
  # halt_on_error: a race fails the step. The suppressions file lists only third-party code
  # (uninstrumented Debian libraries) with the reason for each entry.
  step tsan-configure cmake --preset tsan
  step tsan-build cmake --build build/tsan -j"$(nproc)" --target xonnx_concurrency_tests
  step tsan-run env TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/concurrency/tsan.supp}" \
    build/tsan/bin/xonnx_concurrency_tests
fi
printf '[test-sanitizers] %s\n' "${times[@]}"
