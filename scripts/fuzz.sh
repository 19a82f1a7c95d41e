#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each (default 60), one after the other:
#   bash scripts/fuzz.sh [SECONDS] [TARGET ...]     (targets: load_model tensor_readers
#                                                    session_run convert chat_template
#                                                    tokenizer genai_config serve_request;
#                                                    default: all)
# Builds the targets in the `sanitize` tree (clang 14, ASan + UBSan) if needed, seeds each
# corpus from the test models (tests/models, the ONNX backend node tests when present, their
# .pb/.npy test data) and tests/bad_models (the LLM-folder targets: the chat templates,
# tokenizers and genai_config.json files under tests/; serve_request: the request bodies of
# tests/fuzz/seeds_genai; both also tests/bad_genai/TARGET), and keeps the
# corpus in build/sanitize/fuzz/ between runs. Prints execs, coverage and corpus size per
# target. A crash leaves its input in build/sanitize/fuzz/artifacts/: fix the bug, then copy
# the input into tests/bad_models/ or tests/bad_genai/TARGET/ (the bad-models and
# bad-genai-files ctests replay them in every build) and exit status 1 says so.
# XONNX_FUZZ_SEED=N makes the runs repeatable (CI: scripts/test-sanitizers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] ||
  TARGETS=(load_model tensor_readers session_run convert chat_template tokenizer genai_config serve_request)
BUILD=build/sanitize
WORK=$BUILD/fuzz
JOBS=${XONNX_FUZZ_BUILD_JOBS:-$(nproc)}

if [ ! -f "$BUILD/build.ninja" ]; then cmake --preset sanitize >/dev/null; fi
cmake --build "$BUILD" -j"$JOBS" --target $(printf 'xonnx_fuzz_%s ' "${TARGETS[@]}")

# Seeds: small models for the model targets, small .pb / .npy files for the readers.
seed_models=$WORK/seeds/models
seed_tensors=$WORK/seeds/tensors
if [ ! -d "$seed_models" ]; then
  mkdir -p "$seed_models" "$seed_tensors"
  backend=$(sed -n 's/^XONNX_BACKEND_TESTS_DIR:PATH=//p' "$BUILD/CMakeCache.txt")
  n=0
  while IFS= read -r f; do
    cp "$f" "$seed_models/$((n++)).onnx"
  done < <( { find tests/models tests/models_llm_ops -name '*.onnx' -size -256k 2>/dev/null
              [ -d "$backend/node" ] && find "$backend/node" -name model.onnx -size -8k | sort | awk 'NR % 8 == 0'
            } | sort)
  n=0
  while IFS= read -r f; do
    cp "$f" "$seed_tensors/$((n++)).${f##*.}"
  done < <( { find tests/models -name '*.pb' -size -64k; find tests -name '*.npy' -size -64k
              [ -d "$backend/node" ] && find "$backend/node" -name '*.pb' -size -4k | sort | awk 'NR % 16 == 0'
            } | sort)
  cp -r tests/fuzz/seeds/. "$seed_tensors/" 2>/dev/null || true
fi
# The LLM-folder targets: real templates (alone and as tokenizer_config.json), tokenizers
# (tokenizer.json, NUL, tokenizer_config.json) and genai configs.
seed_genai=$WORK/seeds/genai
if [ ! -d "$seed_genai" ]; then
  mkdir -p "$seed_genai"/{chat_template,tokenizer,genai_config,serve_request}
  cp tests/fuzz/seeds_genai/serve_request/*.json "$seed_genai/serve_request/"
  n=0
  for f in tests/genai/templates/*.jinja; do cp "$f" "$seed_genai/chat_template/$((n++)).jinja"; done
  cp tests/fuzz/seeds_genai/tokenizer/*.json "$seed_genai/tokenizer/"
  n=0
  while IFS= read -r f; do
    d=$(dirname "$f")
    { cat "$f"; [ -f "$d/tokenizer_config.json" ] && printf '\0' && cat "$d/tokenizer_config.json"; } \
      >"$seed_genai/tokenizer/$((n++)).json"
  done < <(find tests -name tokenizer.json -size -256k | sort)
  n=0
  while IFS= read -r f; do cp "$f" "$seed_genai/genai_config/$((n++)).json"; done \
    < <(find tests -name genai_config.json | sort)
fi

status=0
summary=()
for t in "${TARGETS[@]}"; do
  corpus=$WORK/corpus/$t
  mkdir -p "$corpus" "$WORK/artifacts"
  seeds=$seed_models
  bad=tests/bad_models
  [ "$t" = tensor_readers ] && seeds=$seed_tensors
  case $t in chat_template | tokenizer | genai_config | serve_request) seeds=$seed_genai/$t bad=tests/bad_genai/$t ;; esac
  log=$WORK/$t.log
  t0=$(date +%s)
  # -rss_limit_mb / -malloc_limit_mb: a 4 GiB cap (the issue's budget per input); -timeout: 20 s.
  if "$BUILD/bin/xonnx_fuzz_$t" "$corpus" "$seeds" "$bad" \
       -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=4096 -malloc_limit_mb=4096 \
       -max_len=262144 -print_final_stats=1 -artifact_prefix="$WORK/artifacts/$t-" \
       ${XONNX_FUZZ_SEED:+-seed=$XONNX_FUZZ_SEED} >"$log" 2>&1; then
    result=ok
  else
    result="CRASH (see $log; input in $WORK/artifacts/)"
    status=1
    tail -40 "$log"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  summary+=("$t: $result, $((  $(date +%s) - t0 )) s, ${execs:-?} execs, cov ${cov:-?}, corpus $(ls "$corpus" | wc -l)")
done
printf '[fuzz] %s\n' "${summary[@]}"
exit $status
