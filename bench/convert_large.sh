#!/bin/sh
# Times `xonnx convert` on a ~57 MB model (an MLP exported by torch, random weights) and
# reports wall time and peak RSS (/usr/bin/time -v). Targets: < 1 s, peak RSS < 2x model size.
#   bench/convert_large.sh [BUILD_DIR]      (default: build; needs BUILD_DIR/bin/xonnx)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
XONNX="$BUILD/bin/xonnx"
MODELS="$BUILD/bench-models"
MODEL="$MODELS/mlp57.onnx"
mkdir -p "$MODELS"
if [ ! -f "$MODEL" ]; then
  # 1024 -> 2048 -> 2048 -> 2048 -> 1792: 14.2 M float parameters = 56.6 MB.
  /usr/bin/python3 - "$MODEL" <<'PY'
import sys, torch
torch.manual_seed(0)
dims = [1024, 2048, 2048, 2048, 1792]
layers = []
for a, b in zip(dims, dims[1:]):
    layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
model = torch.nn.Sequential(*layers[:-1]).eval()
torch.onnx.export(model, torch.randn(1, dims[0]), sys.argv[1], input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                  opset_version=17)
PY
fi
SIZE=$(stat -c %s "$MODEL")
for level in 0 2; do
  OUT="$MODELS/mlp57-l$level.onnx"
  /usr/bin/time -v "$XONNX" convert "$MODEL" "$OUT" --level $level --report "$MODELS/mlp57-l$level.md" \
    > "$MODELS/convert.log" 2> "$MODELS/time.log" || { cat "$MODELS/convert.log" "$MODELS/time.log"; exit 1; }
  WALL=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$MODELS/time.log")
  RSS_KB=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$MODELS/time.log")
  awk -v l=$level -v w="$WALL" -v r="$RSS_KB" -v s="$SIZE" 'BEGIN {
    printf "level %d: model %.1f MB, wall %s, peak RSS %.1f MB (%.2fx model size)\n",
           l, s / 1048576, w, r / 1024, r * 1024 / s }'
done
# Same with external data (weights streamed to OUT.data, 4096-aligned).
/usr/bin/time -v "$XONNX" convert "$MODEL" "$MODELS/mlp57-ext.onnx" --external-data \
  > "$MODELS/convert.log" 2> "$MODELS/time.log"
WALL=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$MODELS/time.log")
RSS_KB=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$MODELS/time.log")
awk -v w="$WALL" -v r="$RSS_KB" -v s="$SIZE" 'BEGIN {
  printf "external data: wall %s, peak RSS %.1f MB (%.2fx model size)\n", w, r / 1024, r * 1024 / s }'
