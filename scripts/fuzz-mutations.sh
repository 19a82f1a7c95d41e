#!/usr/bin/env bash
# Semantic fuzzing (tools/mutate_node_tests.py): the ONNX backend node tests with extreme
# attribute values, integer inputs made constant with values near 2^31 / 2^63, declared shapes
# of other ranks and other element types, each through session creation and a run under ASan +
# UBSan (the `sanitize` tree's xonnx_fuzz_replay), then the same for the test models under 1 MB,
# then the JSON an LLM folder brings (tools/mutate_json.py: tokenizer.json + tokenizer_config.json
# and genai_config.json with extreme values, through their own targets):
#   bash scripts/fuzz-mutations.sh [EVERY] [SEED]    (every EVERY-th mutant, default all 116,638:
#                                                     4.5 minutes on 2 cores; tests/models'
#                                                     6,364: about 2 minutes; the 5,529 JSON
#                                                     files: under a minute)
# The quick sanitizer tier (scripts/test-sanitizers.sh) runs every 4th with seed 1. Failures
# are left in build/sanitize/mutations{,-models,-tokenizer,-genai-config,-serve-request}/failures/
# with their logs; exit status 1 says so.
set -euo pipefail
cd "$(dirname "$0")/.."
EVERY=${1:-1}
SEED=${2:-1}
BUILD=build/sanitize
if [ ! -f "$BUILD/build.ninja" ]; then cmake --preset sanitize >/dev/null; fi
cmake --build "$BUILD" -j"$(nproc)" --target xonnx_fuzz_replay
node=$(sed -n 's/^XONNX_BACKEND_TESTS_DIR:PATH=//p' "$BUILD/CMakeCache.txt")/node
if [ ! -d "$node" ]; then
  echo "[mutations] skipped: no ONNX backend node tests at $node"
  exit 0
fi
status=0
/usr/bin/python3 tools/mutate_node_tests.py "$node" "$BUILD/mutations" --seed "$SEED" --every "$EVERY" \
  --replay "$BUILD/bin/xonnx_fuzz_replay" --jobs "$(nproc)" || status=1
# The multi-node test models under 1 MB (the passes' fusions, kernel choices over many layers).
/usr/bin/python3 tools/mutate_node_tests.py tests/models "$BUILD/mutations-models" --seed "$SEED" --every "$EVERY" \
  --max-model-bytes 1000000 --replay "$BUILD/bin/xonnx_fuzz_replay" --jobs "$(nproc)" || status=1
# Tokenizers (tokenizer.json + tokenizer_config.json: a folder, or one file with a NUL between),
# genai configs and request bodies to the server.
mutate_json() {  # TARGET OUT_DIR SOURCE...
  python3 tools/mutate_json.py "$@" --seed "$SEED" --every "$EVERY" --replay "$BUILD/bin/xonnx_fuzz_replay" \
    --jobs "$(nproc)" || status=1
}
mutate_json tokenizer "$BUILD/mutations-tokenizer" tests/fuzz/seeds_genai/tokenizer/*.json \
  tests/models_llm/tiny/genai_fp32 tests/models_embedding/tiny_encoder
mutate_json genai_config "$BUILD/mutations-genai-config" $(find tests -name genai_config.json | sort)
mutate_json serve_request "$BUILD/mutations-serve-request" tests/fuzz/seeds_genai/serve_request/*.json
exit $status
