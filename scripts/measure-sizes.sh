#!/usr/bin/env bash
# Stripped sizes of a tiny C application (tests/consumer/app.c) on the minimal runtime (no
# XNNPACK, no graph passes), linked fully statically:
#   bash scripts/measure-sizes.sh [BUILD_DIR] [--selective TARGET...]
# From the build tree scripts/build.sh leaves (default build; nothing of the runtime is compiled
# again: these variants differ only in their link line): the CLI (dynamic XNNPACK), app.c with
# every op family, with mobilenet_v2's op families only (xonnx info --ops, the xonnx_select_ops
# file), and that with -Wl,--gc-sections; then what the smallest one is made of (bytes of code
# and data per library, from the linker map).
# --selective TARGET... (host, aarch64, armv7): also a selective build of xonnx itself per
# target, build/selective-<target> (-DXONNX_OPS=mobilenet_v2's ops: only those ops registered,
# one section per function, --gc-sections; -DXONNX_OPTIMIZE_SIZE: all but the kernels -Os;
# protobuf-lite rebuilt from Debian's source with one section per function,
# scripts/build-protobuf-lite.sh; the ARM ones cross-compiled with the sysroots of
# scripts/install-cross-deps.sh and run under qemu-user), and what its app is made of.
# Each application must run mobilenet_v2 and give the full build's output; on the host the
# full and the selective app also report their median latency over 50 runs (1 thread).
# The aarch64 selective app must stay within XONNX_SIZE_BUDGET bytes besides libc (default
# 1,000,000: issue 19's target; the stripped size less what the map shows of libc.a).
# Prints a table and writes BUILD_DIR/sizes/sizes.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build
SELECTIVE=()
while [ $# -gt 0 ]; do
  case $1 in
    --selective) shift; SELECTIVE=("$@"); break ;;
    *) BUILD=$1; shift ;;
  esac
done
OUT=$BUILD/sizes
MNV2=tests/models/mobilenet_v2/model.onnx
mkdir -p "$OUT"
fail() { echo "[sizes] FAILED: $*" >&2; exit 1; }

for t in bin/xonnx bin/xonnx_static_app package/xonnx_select_ops.cmake; do
  [ -e "$BUILD/$t" ] || fail "$BUILD/$t is missing: build the tree first (scripts/build.sh)"
done
# The static app's link line, as CMake wrote it (ninja -t commands: the last command).
link=$(ninja -C "$BUILD" -t commands xonnx_static_app | tail -1)
grep -q -- "-static" <<<"$link" || fail "xonnx_static_app is not linked with -static: $link"

"$BUILD/bin/xonnx" info --ops "$MNV2" >"$OUT/mobilenet_v2.ops" || fail "xonnx info --ops"
cmake -DOPS="$OUT/mobilenet_v2.ops" -DOUT="$OUT/mobilenet_v2_ops.cc" -P "$BUILD/package/xonnx_select_ops.cmake"
c++ -O2 -c "$OUT/mobilenet_v2_ops.cc" -o "$OUT/mobilenet_v2_ops.o"

# relink NAME EXTRA...: the app's link line with extra objects / flags before its libraries
# (an object there replaces the archive's definition), run inside BUILD.
relink() {
  local name=$1
  shift
  local cmd=${link/-o bin\/xonnx_static_app/-o sizes\/$name $*}
  [ "$cmd" != "$link" ] || fail "cannot rename the output in: $link"
  (cd "$BUILD" && eval "$cmd") || fail "link $name"
}
relink app_all_ops
relink app_mnv2 sizes/mobilenet_v2_ops.o
relink app_mnv2_gc sizes/mobilenet_v2_ops.o -Wl,--gc-sections -Wl,-Map=sizes/app_mnv2_gc.map

for app in app_all_ops app_mnv2 app_mnv2_gc; do
  file -L "$OUT/$app" | grep -q "statically linked" || fail "$app is not statically linked"
done
"$OUT/app_all_ops" "$MNV2" --write "$OUT/mnv2_full.bin" >/dev/null || fail "app_all_ops $MNV2"
for app in app_mnv2 app_mnv2_gc; do
  "$OUT/$app" "$MNV2" --expect "$OUT/mnv2_full.bin" >/dev/null || fail "$app $MNV2 differs from the full build"
done

row() {  # row WHAT FILE [STRIP]
  "${3:-strip}" -o "$OUT/stripped.tmp" "$2"
  printf '%-62s %9d\n' "$1" "$(stat -c %s "$OUT/stripped.tmp")"
  rm -f "$OUT/stripped.tmp"
}
latency() {  # latency WHAT APP: mobilenet_v2's median over 50 runs (1 thread)
  local median
  median=$("$2" "$MNV2" --runs 50 | sed -n 's/^median of 50 runs: //p')
  [ -n "$median" ] || fail "$2 --runs 50"
  printf '%-62s %12s\n' "  mobilenet_v2 latency, $1" "$median"
}
# breakdown MAP: what a static app is made of. Sums the input sections the linker kept that
# take file space (.text*, .rodata*, .data*, .tdata, .eh_frame, .gcc_except_table), per archive,
# and the runtime's largest objects.
breakdown() {
  /usr/bin/python3 - "$1" <<'EOF'
import collections, re, sys
sizes = collections.Counter()
section = None
kept = re.compile(r"^ (\.(?:text|rodata|data|tdata|eh_frame|gcc_except_table)\S*)(?:\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+))?$")
cont = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S+)$")
in_memory_map = False
for line in open(sys.argv[1], errors="replace"):
    if line.startswith("Linker script and memory map"):
        in_memory_map = True
        continue
    if not in_memory_map:
        continue
    m = kept.match(line)
    if m:
        section = m.group(1)
        if m.group(2):
            sizes[m.group(4)] += int(m.group(3), 16)
            section = None
        continue
    m = cont.match(line)
    if m and section:
        sizes[m.group(3)] += int(m.group(2), 16)
    section = None
by_lib = collections.Counter()
for path, size in sizes.items():
    lib = re.sub(r"\(.*\)$", "", path).rsplit("/", 1)[-1]
    if lib.startswith("libxonnx") or lib.endswith(".o"):
        lib = lib if lib.startswith("libxonnx") else "app objects"
    by_lib[lib] += size
for lib, size in by_lib.most_common(10):
    print(f"  {lib:<44} {size:>9}")
print(f"  {'all but libc.a and libm':<44} {sum(v for k, v in by_lib.items() if not k.startswith(('libc.a', 'libm'))):>9}")
members = collections.Counter()
for path, size in sizes.items():
    if "libxonnx_runtime" in path:
        members[path.rsplit("(", 1)[-1].rstrip(")")] += size
print("  largest runtime objects: " + ", ".join(f"{m.replace('.cc.o', '')} {s // 1024} KB" for m, s in members.most_common(8)))
isa = collections.Counter()
for path, size in sizes.items():
    m = re.search(r"\(([a-z0-9_]*_(avx512\w*|avx2|neon))\.cc\.o\)$", path)
    if m:
        isa[m.group(2)] += size
for name, size in sorted(isa.items()):
    print(f"  {'  of which ' + name + ' kernel objects':<44} {size:>9}")
EOF
}

# selective TARGET: the selective build of xonnx for mobilenet_v2's ops (own kernels, no graph
# passes, -static, --gc-sections) in build/selective-TARGET; its app must give the full build's
# output and refuse a model with other ops, naming the op.
selective() {
  local target=$1 tree=build/selective-$1 cross=() run=() strip=strip
  case $target in
    host) ;;
    aarch64 | armv7)
      local triple=aarch64-linux-gnu qemu=qemu-aarch64
      [ "$target" = armv7 ] && triple=arm-linux-gnueabihf qemu=qemu-arm
      bash scripts/install-cross-deps.sh "$target" >/dev/null
      cross=(-DCMAKE_TOOLCHAIN_FILE="$PWD/toolchains/$triple.cmake")
      run=("$qemu" -L "$PWD/build/sysroot-$target")
      strip=$triple-strip
      ;;
    *) fail "unknown target $target (host, aarch64, armv7)" ;;
  esac
  mkdir -p "$tree"
  local protobuf
  protobuf=$(bash scripts/build-protobuf-lite.sh "$target") || fail "protobuf-lite for $target"
  cmake -S . -B "$tree" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cross[@]}" -DXONNX_OPS="$PWD/$OUT/mobilenet_v2.ops" \
    -DXONNX_OPTIMIZE_SIZE=ON -DPROTOBUF_LITE_STATIC="$protobuf" \
    -DXONNX_WITH_XNNPACK=OFF -DXONNX_WITH_PASSES=OFF -DXONNX_BUILD_CONVERTER=OFF -DXONNX_BUILD_CLI=OFF \
    -DXONNX_BUILD_TESTS=OFF -DXONNX_BUILD_BENCH=OFF -DXONNX_BUILD_EXAMPLES=OFF -DXONNX_BUILD_SHARED=OFF \
    -DXONNX_INSTALL=OFF -DCMAKE_EXE_LINKER_FLAGS="-Wl,-Map=$PWD/$tree/static_app.map" >"$tree/configure.log" 2>&1 ||
    { cat "$tree/configure.log"; fail "configure $tree"; }
  cmake --build "$tree" --target xonnx_static_app >"$tree/build.log" 2>&1 || { tail -30 "$tree/build.log"; fail "build $tree"; }
  local app=$tree/bin/xonnx_static_app out
  file -L "$app" | grep -q "statically linked" || fail "$app is not statically linked"
  "${run[@]}" "$app" "$MNV2" --expect "$OUT/mnv2_full.bin" >/dev/null || fail "$app $MNV2 differs from the full build"
  if out=$("${run[@]}" "$app" tests/models/transformer_encoder/model.onnx 2>&1); then
    fail "the mobilenet_v2-only $app ran transformer_encoder"
  fi
  grep -q "is not in this selective build" <<<"$out" || { echo "$out"; fail "$app: no selective-build error"; }
  echo "$target, selective build (XONNX_OPS: mobilenet_v2's ops, XONNX_OPTIMIZE_SIZE), stripped bytes"
  row "app.c, own kernels, -static, mobilenet_v2's ops, --gc-sections" "$app" "$strip"
  "$strip" -o "$OUT/selective-$target.stripped" "$app"
  [ "$target" != host ] || latency "app.c, selective, size-optimized" "$app"
  echo "by library (code + data, bytes; from the linker map):"
  local parts
  parts=$(breakdown "$tree/static_app.map")
  echo "$parts"
  local bytes libc besides
  bytes=$(stat -c %s "$OUT/selective-$target.stripped")
  libc=$(awk '$1 == "libc.a" { print $2 }' <<<"$parts")
  besides=$((bytes - libc))
  printf '%-62s %9d\n' "  stripped, besides libc" "$besides"
  if [ "$target" = aarch64 ] && [ "$besides" -gt "${XONNX_SIZE_BUDGET:-1000000}" ]; then
    fail "the aarch64 mobilenet_v2 app is $besides bytes besides libc, over the budget of ${XONNX_SIZE_BUDGET:-1000000}"
  fi
}

{
  echo "x86-64, stripped bytes"
  row "xonnx CLI (+ shared XNNPACK, pthreadpool, cpuinfo, libc)" "$BUILD/bin/xonnx"
  row "app.c, minimal runtime, -static, every op family" "$OUT/app_all_ops"
  row "app.c, minimal runtime, -static, mobilenet_v2's op families" "$OUT/app_mnv2"
  row "app.c, minimal runtime, -static, mobilenet_v2's, --gc-sections" "$OUT/app_mnv2_gc"
  latency "app.c, every op family" "$OUT/app_all_ops"
  echo "app_mnv2_gc by library (code + data, bytes; from the linker map):"
  breakdown "$OUT/app_mnv2_gc.map"
  for target in "${SELECTIVE[@]}"; do
    selective "$target"
  done
} | tee "$OUT/sizes.txt"
