#!/usr/bin/env bash
# Checks the include rules of docs/architecture.md (and that XONNX_* variables are read only in
# runtime/core/environment.cc): every #include "…" of a file under runtime/,
# platforms/, converter/ or sdk/ must point to its own layer or to one the layer may use.
# Prints each forbidden include (file:line, the two layers, what is allowed) and exits 1 if
# there is any. Tests, benchmarks and tools may include anything and are not checked.
#
# Usage: scripts/check-includes.sh [repo root]   (default: the repository holding this script)
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# Layers bottom-up; each may include itself and the layers after its colon, which must all be
# listed before it, so the allowed graph has no circles by construction (checked below).
# runtime/ops holds the backend-neutral op interface (kernel.h, registry, internal_ops.h, the
# op lists); the backends are its sub-folders.
LAYERS=(
  "platforms:"
  "runtime/core: platforms"
  "runtime/ir: runtime/core"
  "runtime/onnx: runtime/ir runtime/core platforms"
  "runtime/ops: runtime/ir runtime/core"
  "runtime/ops/common: runtime/ops runtime/ir runtime/core"
  "runtime/ops/ref: runtime/ops/common runtime/ops runtime/ir runtime/core"
  "runtime/ops/xnnpack: runtime/ops/ref runtime/ops/common runtime/ops runtime/ir runtime/core platforms"
  "runtime/ops/optimized: runtime/ops/ref runtime/ops/common runtime/ops runtime/ir runtime/core platforms"
  "runtime/passes: runtime/ops runtime/ir runtime/core"
  "runtime/exec: runtime/passes runtime/onnx runtime/ops runtime/ir runtime/core platforms"
  "converter: runtime/exec runtime/passes runtime/onnx runtime/ops runtime/ir runtime/core platforms"
  "sdk: converter runtime/exec runtime/passes runtime/onnx runtime/ops runtime/ir runtime/core platforms"
)

declare -A ALLOWED
seen=" "
for entry in "${LAYERS[@]}"; do
  layer=${entry%%:*}
  deps=${entry#*:}
  for d in $deps; do
    if [[ "$seen" != *" $d "* ]]; then
      echo "check-includes.sh: layer table: $layer lists $d, which is not below it" >&2
      exit 2
    fi
  done
  ALLOWED[$layer]=" $layer$deps "
  seen+="$layer "
done

# One awk pass over every quoted include. The layer of a path: runtime/ops/<backend>/… and
# runtime/<folder>/… by folder, other top-level folders as one layer each; paths outside the
# checked tree (generated headers such as onnx.pb.h, sibling includes) are not checked.
table=$(for layer in "${!ALLOWED[@]}"; do echo "$layer=${ALLOWED[$layer]}"; done)
sources() {  # the checked tree's files; without git (a source tarball) every file there
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -- runtime platforms converter sdk
  else
    find runtime platforms converter sdk -type f 2>/dev/null || true
  fi
}
includes() {  # file:line:#include "…" for every checked file
  sources | grep -E '\.(h|hpp|cc|c|inc)$' |
    xargs -r grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' || true
}
if ! includes |
  awk -v table="$table" '
    function layer_of(p,   parts, n) {
      n = split(p, parts, "/")
      if (parts[1] == "runtime" && parts[2] == "ops") return n > 3 ? "runtime/ops/" parts[3] : "runtime/ops"
      if (parts[1] == "runtime") return n > 2 ? "runtime/" parts[2] : ""
      if (parts[1] == "platforms" || parts[1] == "converter" || parts[1] == "sdk") return n > 1 ? parts[1] : ""
      return ""
    }
    BEGIN {
      n = split(table, rows, "\n")
      for (i = 1; i <= n; i++) { eq = index(rows[i], "="); allowed[substr(rows[i], 1, eq - 1)] = substr(rows[i], eq + 1) }
    }
    {
      # file:line:#include "target"
      c1 = index($0, ":"); file = substr($0, 1, c1 - 1); rest = substr($0, c1 + 1)
      c2 = index(rest, ":"); line = substr(rest, 1, c2 - 1)
      target = rest; sub(/^[^"]*"/, "", target); sub(/".*$/, "", target)
      to = layer_of(target); if (to == "") next
      from = layer_of(file)
      if (!(from in allowed)) { print file ":" line ": the layer \"" from "\" is not in scripts/check-includes.sh"; bad++; next }
      if (index(allowed[from], " " to " ") == 0) {
        print file ":" line ": " from " must not include " to " (" target "); it may include" allowed[from]
        bad++
      }
    }
    END {
      if (bad) { print "check-includes.sh: " bad " forbidden include(s); the rules are in docs/architecture.md"; exit 1 }
    }'; then
  exit 1
fi
# The environment is an input like any other: XONNX_* variables are read in one file only.
env_readers=$(sources | grep -E '\.(h|cc|c)$' | grep -v '^runtime/core/environment\.cc$' |
              xargs -r grep -nHE 'getenv\("XONNX_' || true)
if [ -n "$env_readers" ]; then
  echo "$env_readers"
  echo "check-includes.sh: XONNX_* environment variables are read in runtime/core/environment.cc only"
  exit 1
fi
echo "check-includes.sh: include rules hold; XONNX_* variables are read in one place"
