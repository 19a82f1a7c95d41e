#!/usr/bin/env bash
# Side-by-side latency / init / memory of xonnx and ONNX Runtime (onnxruntime-node, CPU EP).
#
#   bench/compare_ort.sh [options] [MODEL [--shape NAME=d0,d1,...]...]...
#
# Each --shape applies to the MODEL before it (fixes symbolic dims; both engines get it).
# Without models, runs the fixture suite in tests/models (see bench/README.md).
# Options:
#   --full            the issue's full-size models instead (224x224 CNNs, encoder seq 128,
#                     6-layer decoder step with 127 cached tokens), in build/slow-models
#   --quantized       the quantization targets instead: full-size mobilenet_v2 and resnet18 in
#                     fp32 and int8 (static QDQ, 4 random calibration samples) and the decoder
#                     step in fp32 and int4 (accuracy_level 4), all converted by this xonnx into
#                     build/slow-models
#   --zoo             the model zoo (tools/export_zoo.py, exported if missing) at its manifest's
#                     shapes; also profiles xonnx once per model and thread count, and writes
#                     the table, the per-model profile figures and the ratio chart into
#                     docs/performance.md and docs/img/zoo_ratio.png (bench/zoo_report.py)
#   --zoo-dir DIR     the zoo's folder (default: $XONNX_ZOO_DIR or ~/.cache/xonnx-zoo)
#   --zoo-only a,b    only these zoo models (the docs are then not rewritten unless --doc is given)
#   --doc FILE        where --zoo writes its table (default docs/performance.md; "-" = nowhere)
#   --threads "1 2"   thread counts to run (default "1 2")
#   --iters N         timed runs (default 50; with --zoo at most N, fewer for slow models: about
#                     --budget-ms of timed runs per engine, at least 5)
#   --warmup N        untimed runs (default 5)
#   --budget-ms MS    --zoo's timed-run budget per engine and run (default 2000)
#   --rounds N        run each engine N times per model and thread count, alternating, and
#                     report the median of the rounds' figures (default 1): a host's bursts
#                     of noise then hit both engines alike
#   --xonnx PATH      xonnx binary (default: $XONNX or build/bin/xonnx)
#   --ort-dir DIR     where onnxruntime-node is installed (default: $XONNX_ORT_DIR or ~/.cache/xonnx-ort)
#   --out FILE        keep the raw JSON lines (default: a temporary file; --zoo's profile runs go
#                     to FILE.profile)
#   --cpu N           run both engines' 1-thread runs on CPU N (taskset; default: the last CPU
#                     this script may use; "any" = no pinning): a VM's cores need not be alike
#                     (bench/README.md)
# Runs one benchmark at a time. Prints a markdown table; ratios are xonnx / ORT.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ORT_DIR="${XONNX_ORT_DIR:-$HOME/.cache/xonnx-ort}"
XONNX="${XONNX:-$ROOT/build/bin/xonnx}"
THREADS="1 2"
ITERS=50
WARMUP=5
ROUNDS=1
OUT=""
FULL=0
ZOO_DIR="${XONNX_ZOO_DIR:-$HOME/.cache/xonnx-zoo}"
ZOO_ONLY=""
DOC=""
BUDGET_MS=2000
CPU=""
MODELS=()
SHAPES=()  # per model: space-separated "--shape NAME=dims" arguments

die() { echo "compare_ort.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --full) FULL=1; shift ;;
    --quantized) FULL=2; shift ;;
    --zoo) FULL=3; shift ;;
    --zoo-dir) ZOO_DIR="${2:?--zoo-dir needs a value}"; shift 2 ;;
    --zoo-only) ZOO_ONLY="${2:?--zoo-only needs a value}"; shift 2 ;;
    --doc) DOC="${2:?--doc needs a value}"; shift 2 ;;
    --cpu) CPU="${2:?--cpu needs a value}"; shift 2 ;;
    --budget-ms) BUDGET_MS="${2:?--budget-ms needs a value}"; shift 2 ;;
    --threads) THREADS="${2:?--threads needs a value}"; shift 2 ;;
    --iters) ITERS="${2:?--iters needs a value}"; shift 2 ;;
    --rounds) ROUNDS="${2:?--rounds needs a value}"; shift 2 ;;
    --warmup) WARMUP="${2:?--warmup needs a value}"; shift 2 ;;
    --xonnx) XONNX="${2:?--xonnx needs a value}"; shift 2 ;;
    --ort-dir) ORT_DIR="${2:?--ort-dir needs a value}"; shift 2 ;;
    --out) OUT="${2:?--out needs a value}"; shift 2 ;;
    --shape)
      [ ${#MODELS[@]} -gt 0 ] || die "--shape must follow a MODEL"
      SHAPES[${#MODELS[@]}-1]+=" --shape ${2:?--shape needs NAME=d0,d1,...}"; shift 2 ;;
    -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) MODELS+=("$1"); SHAPES+=(""); shift ;;
  esac
done

decode_shapes() {  # one new token after 127 cached ones, 6 layers
  local past="1,6,127,64" shapes="--shape input_ids=1,1"
  for l in 0 1 2 3 4 5; do shapes+=" --shape past_key_$l=$past --shape past_value_$l=$past"; done
  echo "$shapes"
}

if [ "$FULL" = 3 ]; then
  bash "$ROOT/scripts/install-zoo-deps.sh"  # torch to export the zoo, matplotlib for the chart
  /usr/bin/python3 "$ROOT/tools/export_zoo.py" --out "$ZOO_DIR" ${ZOO_ONLY:+--only "$ZOO_ONLY"} >&2 ||
    echo "compare_ort.sh: some zoo models did not export; comparing the others" >&2
  [ -n "$DOC" ] || { [ -n "$ZOO_ONLY" ] && DOC=- || DOC="$ROOT/docs/performance.md"; }
  # One "model<TAB>--shape NAME=dims ..." line per manifest entry: both engines get every shape.
  while IFS=$'\t' read -r model shapes; do
    MODELS+=("$model"); SHAPES+=("$shapes")
  done < <(/usr/bin/python3 -c "import json, os, sys
only = set(filter(None, sys.argv[2].split(',')))
for m in json.load(open(os.path.join(sys.argv[1], 'manifest.json')))['models']:
    if not only or m['name'] in only:
        shapes = ' '.join('--shape %s=%s' % (i['name'], ','.join(map(str, i['shape']))) for i in m['inputs'])
        print('%s\t%s' % (os.path.join(sys.argv[1], m['name'], 'model.onnx'), shapes))" "$ZOO_DIR" "$ZOO_ONLY")
elif [ "$FULL" = 2 ]; then
  M="$ROOT/build/slow-models"
  for m in mobilenet_v2 resnet18 gpt_decoder; do
    [ -f "$M/$m/model.onnx" ] || /usr/bin/python3 "$ROOT/tools/export_fixtures.py" --slow "$M" --only "$m" >&2
  done
  for m in mobilenet_v2 resnet18; do
    if [ ! -f "$M/$m/int8.onnx" ] || [ "$M/$m/int8.onnx" -ot "$XONNX" ]; then
      rm -rf "$M/$m/calibration"
      /usr/bin/python3 -c "import numpy as np, os, sys
rng = np.random.default_rng(0)
for k in range(4):
    d = os.path.join(sys.argv[1], 's%d' % k); os.makedirs(d)
    np.save(os.path.join(d, 'input.npy'), rng.uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32))" "$M/$m/calibration"
      "$XONNX" convert "$M/$m/model.onnx" "$M/$m/int8.onnx" --quantize int8 --calibration-data "$M/$m/calibration" >&2
    fi
    MODELS+=("$M/$m/model.onnx" "$M/$m/int8.onnx"); SHAPES+=("" "")
  done
  if [ ! -f "$M/gpt_decoder/int4.onnx" ] || [ "$M/gpt_decoder/int4.onnx" -ot "$XONNX" ]; then
    "$XONNX" convert "$M/gpt_decoder/model.onnx" "$M/gpt_decoder/int4.onnx" --quantize int4 --accuracy-level 4 >&2
  fi
  MODELS+=("$M/gpt_decoder/model.onnx" "$M/gpt_decoder/int4.onnx"); SHAPES+=("$(decode_shapes)" "$(decode_shapes)")
elif [ "$FULL" = 1 ]; then
  # The issue's targets: full-size models (tools/export_fixtures.py --slow, made if missing).
  M="$ROOT/build/slow-models"
  for m in mobilenet_v2 resnet18 squeezenet1_1 mobilenet_v3_small efficientnet_b0 transformer_encoder gpt_decoder; do
    [ -f "$M/$m/model.onnx" ] || /usr/bin/python3 "$ROOT/tools/export_fixtures.py" --slow "$M" --only "$m" >&2
  done
  for m in mobilenet_v2 resnet18 squeezenet1_1 mobilenet_v3_small efficientnet_b0; do
    MODELS+=("$M/$m/model.onnx"); SHAPES+=("")
  done
  MODELS+=("$M/transformer_encoder/model.onnx"); SHAPES+=("--shape x=1,128,256")
  MODELS+=("$M/gpt_decoder/model.onnx"); SHAPES+=("$(decode_shapes)")
elif [ ${#MODELS[@]} -eq 0 ]; then
  M="$ROOT/tests/models"
  for m in mobilenet_v2 resnet18 squeezenet1_1 mobilenet_v3_small efficientnet_b0; do
    MODELS+=("$M/$m/model.onnx"); SHAPES+=("")
  done
  MODELS+=("$M/transformer_encoder/model.onnx"); SHAPES+=("--shape x=1,64,64")
  past="1,4,63,16"  # decode one token after 63 cached ones
  MODELS+=("$M/gpt_decoder/model.onnx")
  SHAPES+=("--shape input_ids=1,1 --shape past_key_0=$past --shape past_value_0=$past --shape past_key_1=$past --shape past_value_1=$past")
fi

[ -x "$XONNX" ] || die "xonnx binary not found at $XONNX (build first, or pass --xonnx)"

# The CPU of the 1-thread runs: --cpu, else the last one of this script's affinity list
# ("0-3,8,10-11" -> 11). Without taskset (util-linux) the runs are not pinned.
if [ "$CPU" = any ]; then
  CPU=""
elif ! command -v taskset > /dev/null; then
  [ -z "$CPU" ] || die "--cpu $CPU needs taskset (util-linux)"
elif [ -z "$CPU" ]; then
  cpus="$(taskset -pc $$ 2> /dev/null)" || cpus=""
  cpus="${cpus##*: }"
  cpus="${cpus##*,}"
  CPU="${cpus##*-}"
fi
case "$CPU" in *[!0-9]*) die "--cpu must be a CPU number or any, got '$CPU'" ;; esac
[ -z "$CPU" ] || taskset -c "$CPU" true 2> /dev/null || die "--cpu $CPU: this script may not run on that CPU"
# The command prefix that pins a run of $1 threads (1-thread runs only: more threads use the
# cores the scheduler gives both engines alike).
pin_for() { if [ -n "$CPU" ] && [ "$1" = 1 ]; then echo "taskset -c $CPU"; fi; }
bash "$ROOT/bench/ort/install.sh" "$ORT_DIR" || die "onnxruntime-node is not usable"
export XONNX_ORT_DIR="$(cd "$ORT_DIR" && pwd)"

if [ -z "$OUT" ]; then OUT="$(mktemp)"; trap 'rm -f "$OUT" "$OUT.profile"' EXIT; fi
: > "$OUT"
: > "$OUT.profile"

# --zoo: timed runs per engine for about BUDGET_MS, from one short xonnx run (5 to ITERS runs).
iters_for() {
  local model="$1"; shift
  local probe
  probe="$("$XONNX" bench "$model" --warmup 1 --iters 3 --json "$@" 2>/dev/null | tail -1)" || probe=""
  node -e 'let ms = 0; try { ms = JSON.parse(process.argv[1]).median_ms } catch (e) {}
           const n = ms > 0 ? Math.ceil(Number(process.argv[2]) / ms) : 10;
           console.log(Math.max(5, Math.min(Number(process.argv[3]), n)))' "$probe" "$BUDGET_MS" "$ITERS"
}

# Runs one engine; appends its JSON (last output line) or an error record to $OUT, tagged
# with the model's position on the command line ("case").
run_one() {
  local engine="$1" idx="$2" model="$3" threads="$4"; shift 4
  local log rc=0
  log="$("$@" 2>&1)" || rc=$?
  local last="${log##*$'\n'}"
  if [ $rc -eq 0 ] && [ "${last:0:1}" = "{" ]; then
    echo "{\"case\":$idx,${last:1}" >> "$OUT"
  else
    local err
    err="$(printf '%s' "$log" | grep -m1 'error' || printf '%s' "$last")"
    node -e 'console.log(JSON.stringify({case: Number(process.argv[1]), engine: process.argv[2],
             model: process.argv[3], threads: Number(process.argv[4]), error: process.argv[5]}))' \
      "$idx" "$engine" "$model" "$threads" "${err:-exit status $rc}" >> "$OUT"
    echo "  $engine failed: ${err:-exit status $rc}" >&2
  fi
}

for i in "${!MODELS[@]}"; do
  model="${MODELS[$i]}"
  read -r -a shape_args <<< "${SHAPES[$i]}"
  iters="$ITERS" warmup="$WARMUP"
  if [ "$FULL" = 3 ]; then
    iters="$(iters_for "$model" "${shape_args[@]}")"
    warmup=$(( iters < WARMUP ? iters : WARMUP ))
  fi
  for t in $THREADS; do
    echo "== $(basename "$(dirname "$model")")/$(basename "$model") threads $t ($iters runs)" >&2
    for ((round = 0; round < ROUNDS; ++round)); do
      # Both engines start from a warm page cache: this machine pages out cold file pages within
      # seconds, so whichever engine ran first would otherwise also time reading the disk.
      cat -- "$model" > /dev/null
      run_one xonnx "$i" "$model" "$t" $(pin_for "$t") "$XONNX" bench "$model" --threads "$t" --warmup "$warmup" \
        --iters "$iters" --json "${shape_args[@]}"
      cat -- "$model" > /dev/null
      run_one onnxruntime "$i" "$model" "$t" $(pin_for "$t") node "$ROOT/bench/ort/bench.js" "$model" --threads "$t" \
        --warmup "$warmup" --iters "$iters" "${shape_args[@]}"
    done
    if [ "$FULL" = 3 ]; then  # where xonnx's time goes (a separate run: profiling adds overhead)
      OUT="$OUT.profile" run_one xonnx "$i" "$model" "$t" $(pin_for "$t") "$XONNX" bench "$model" --threads "$t" \
        --warmup "$warmup" --iters "$iters" --json --profile "${shape_args[@]}"
    fi
  done
done
echo
node "$ROOT/bench/ort/table.js" "$OUT"
if [ "$FULL" = 3 ] && [ "$DOC" != - ]; then
  node "$ROOT/bench/ort/table.js" "$OUT" --json > "$OUT.rows"
  /usr/bin/python3 "$ROOT/bench/zoo_report.py" --rows "$OUT.rows" --profiles "$OUT.profile" \
    --manifest "$ZOO_DIR/manifest.json" --rounds "$ROUNDS" --cpu "$CPU" --doc "$DOC" --png "$(dirname "$DOC")/img/zoo_ratio.png"
  rm -f "$OUT.rows"
fi
