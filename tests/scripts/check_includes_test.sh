#!/usr/bin/env bash
# scripts/check-includes.sh catches what it must: on a scratch repository with a clean include,
# a back-arrow (a kernel including the executor), a backend including another backend and a
# file in an unknown layer, it passes the first and fails each of the others naming the file.
set -euo pipefail
script="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check-includes.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check NAME EXPECTED_RC PATH INCLUDE [EXPECTED_OUTPUT]: a repository holding one file.
check() {
  local name=$1 want=$2 path=$3 include=$4 expect=${5:-}
  local repo="$work/$name"
  mkdir -p "$repo/$(dirname "$path")"
  printf '#include "%s"\n' "$include" >"$repo/$path"
  git -C "$repo" init -q && git -C "$repo" add -A
  local rc=0 out
  out=$(bash "$script" "$repo" 2>&1) || rc=$?
  if [[ $rc != "$want" ]]; then
    echo "FAIL $name: exit $rc, want $want; output:"; echo "$out"; exit 1
  fi
  if [[ -n "$expect" && "$out" != *"$expect"* ]]; then
    echo "FAIL $name: output lacks '$expect':"; echo "$out"; exit 1
  fi
  echo "ok   $name"
}

check clean 0 runtime/ops/ref/a.cc runtime/ops/common/conv_geometry.h "include rules hold"
check fast-uses-ref 0 runtime/ops/xnnpack/a.cc runtime/ops/ref/gemm.h
check kernel-to-exec 1 runtime/ops/ref/a.cc runtime/exec/subgraph.h \
  "runtime/ops/ref/a.cc:1: runtime/ops/ref must not include runtime/exec"
check backend-to-backend 1 runtime/ops/xnnpack/a.cc runtime/ops/optimized/kernels.h \
  "runtime/ops/xnnpack must not include runtime/ops/optimized"
check pass-to-backend 1 runtime/passes/a.cc runtime/ops/optimized/qgemm.h "1 forbidden include"
check loader-to-ops 1 runtime/onnx/a.cc runtime/ops/registry.h "runtime/onnx must not include runtime/ops"
check runtime-to-converter 1 runtime/exec/a.cc converter/graph_util.h "must not include converter"
check unknown-layer 1 runtime/newfolder/a.cc runtime/core/status.h "is not in scripts/check-includes.sh"
