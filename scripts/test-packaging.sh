#!/usr/bin/env bash
# The SDK as an application developer gets it (docs/packaging.md), tested from the build trees
# scripts/build.sh and scripts/test-arm.sh leave behind (no runtime is compiled again here):
#   bash scripts/test-packaging.sh [host] [aarch64] [armv7]      (default: the trees that exist)
# For each target:
#   - `cmake --install` into a prefix; tests/consumer/c (C only) and tests/consumer/cpp (C++)
#     built with find_package(xonnx CONFIG), app.c again with pkg-config (`--static`), and on the
#     host the shared libxonnx.so (find_package COMPONENTS shared; exports xonnx_* only) and the
#     genai component (tests/consumer/genai);
#   - the apps run (under qemu-user on ARM) on tests/models/mlp and must match torch's output;
#   - a selective build: app.c with only mobilenet_v2's op families (`xonnx info --ops`,
#     xonnx_select_ops) must give the full build's output and refuse a model outside the
#     selection by name; the stripped sizes of both go to build/packaging/sizes.txt; on the host
#     and aarch64 also the selective build of xonnx itself for mobilenet_v2's ops, linked
#     -static (scripts/measure-sizes.sh --selective: build/selective-<target>);
#   - CPack .debs (libxonnx-dev, xonnx): contents checked; on the host the amd64 ones are
#     installed with dpkg into a scratch root and an application is built against them;
#   - on the host, the minimal runtime (no XNNPACK, no graph-pass library: the build tree's own
#     objects) in a fully static app.c (xonnx_static_app): no shared library at all, the full
#     build's outputs on a raw and a converted file, a warning for the raw one; and the size table of the
#     mobilenet_v2-only static apps (scripts/measure-sizes.sh: relinks, and the selective build of
#     xonnx for mobilenet_v2's ops in build/selective-host, ~1.5 min).
# Prints the wall time of each step and of each target.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  [ -f build/CMakeCache.txt ] && TARGETS+=(host)
  [ -f build/linux-aarch64/CMakeCache.txt ] && TARGETS+=(aarch64)
  [ -f build/linux-armv7/CMakeCache.txt ] && TARGETS+=(armv7)
fi
OUT=$ROOT/build/packaging
MLP=(tests/models/mlp/model.onnx --input tests/consumer/mlp_input.bin --expect tests/consumer/mlp_expected.bin)
MNV2=tests/models/mobilenet_v2/model.onnx
SIZES=$OUT/sizes.txt
log() { echo "[packaging] $*"; }
fail() { echo "[packaging] FAILED: $*" >&2; exit 1; }
# step NAME COMMAND...: runs one step and prints its wall time.
step() {
  local name=$1 t0=$SECONDS
  shift
  "$@"
  log "  $name: $((SECONDS - t0)) s"
}

# configure + build one consumer project: consumer NAME SOURCE_DIR CMAKE_ARGS...
consumer() {
  local name=$1 src=$2
  shift 2
  rm -rf "$OUT/$name"
  cmake -S "$src" -B "$OUT/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >"$OUT/$name.log" 2>&1 ||
    { cat "$OUT/$name.log"; fail "configure $name"; }
  cmake --build "$OUT/$name" >>"$OUT/$name.log" 2>&1 || { cat "$OUT/$name.log"; fail "build $name"; }
}

# run EMULATOR... -- PROGRAM ARGS: the program must print "ok" and exit 0.
run_app() {
  local out
  out=$("$@" 2>&1) || { echo "$out"; fail "$*"; }
  grep -qx ok <<<"$out" || { echo "$out"; fail "$* did not print ok"; }
}

# size_row TARGET WHAT FILE STRIP: one line of the size table (stripped bytes).
size_row() {
  local stripped=$OUT/stripped.tmp
  "$4" -o "$stripped" "$3" || fail "$4 $3"
  printf '%-8s %-44s %9d\n' "$1" "$2" "$(stat -c %s "$stripped")" | tee -a "$SIZES"
  rm -f "$stripped"
}

# selective TARGET RUN... : app.c with mobilenet_v2's op families only, built from the
# consumer tree "$TARGET-c" settings (CONSUMER_ARGS), against the full app's output.
selective() {
  local target=$1
  shift
  consumer "$target-c-mnv2" tests/consumer/c "${CONSUMER_ARGS[@]}" -DXONNX_APP_OPS="$OUT/mobilenet_v2.ops"
  run_app "$@" "$OUT/$target-c/app_c" "$MNV2" --write "$OUT/$target-mnv2-full.bin"
  run_app "$@" "$OUT/$target-c-mnv2/app_c" "$MNV2" --expect "$OUT/$target-mnv2-full.bin"
  # A model with ops outside the selection is refused at session creation, naming the op.
  local out
  if out=$("$@" "$OUT/$target-c-mnv2/app_c" tests/models/transformer_encoder/model.onnx 2>&1); then
    fail "the mobilenet_v2-only app ran transformer_encoder"
  fi
  grep -q "is not in this selective build" <<<"$out" || { echo "$out"; fail "no selective-build error for transformer_encoder"; }
}

check_deb() {  # check_deb FILE PATH... : the package holds these paths
  local deb=$1 listing
  shift
  [ -f "$deb" ] || fail "$deb was not built"
  listing=$(dpkg-deb -c "$deb")
  for p in "$@"; do
    grep -q -- "$p" <<<"$listing" || fail "$deb lacks $p"
  done
}

host_install() {
  local prefix=$OUT/prefix-host
  rm -rf "$prefix" "$OUT/prefix-host-shared"
  cmake --install build --prefix "$prefix" >/dev/null
  for f in include/xonnx/xonnx.h include/xonnx/xonnx.hpp include/xonnx/version.h lib/libxonnx.a \
           lib/cmake/xonnx/xonnxConfig.cmake lib/cmake/xonnx/xonnxConfigVersion.cmake lib/pkgconfig/xonnx.pc bin/xonnx; do
    [ -e "$prefix/$f" ] || fail "install lacks $f"
  done
  # The glibc floor the .deb's Depends and docs/deploy.md state is the newest symbol version the
  # CLI references.
  local floor newest
  floor=$(sed -n 's/^set(XONNX_GLIBC_FLOOR \(.*\))$/\1/p' CMakeLists.txt)
  newest=$(objdump -T "$prefix/bin/xonnx" | grep -o "GLIBC_[0-9.]*" | sed 's/GLIBC_//' | sort -uV | tail -1)
  [ "$newest" = "$floor" ] || fail "xonnx needs glibc $newest; XONNX_GLIBC_FLOOR in CMakeLists.txt says $floor"
  [ ! -e "$prefix/lib/libxonnx.so" ] || fail "the shared library must be installed only on request (--component shared)"
  # The one archive holds protobuf-lite: no other archive is needed to link.
  grep -q " T .*MessageLite.*ParseFrom" <<<"$(nm -A "$prefix/lib/libxonnx.a" 2>/dev/null)" ||
    fail "libxonnx.a lacks protobuf-lite's MessageLite"
}

host_consumers() {
  local prefix=$OUT/prefix-host
  CONSUMER_ARGS=(-DCMAKE_PREFIX_PATH="$prefix")
  consumer host-c tests/consumer/c "${CONSUMER_ARGS[@]}"
  consumer host-cpp tests/consumer/cpp "${CONSUMER_ARGS[@]}"
  run_app "$OUT/host-c/app_c" "${MLP[@]}"
  run_app "$OUT/host-cpp/app_cpp" tests/models/mlp/model.onnx tests/consumer/mlp_input.bin tests/consumer/mlp_expected.bin
}

host_selective() {
  local prefix=$OUT/prefix-host
  # The op selection of mobilenet_v2 (also used by the ARM targets: the families do not depend
  # on the architecture), and the selective build.
  "$prefix/bin/xonnx" info --ops "$MNV2" >"$OUT/mobilenet_v2.ops" || fail "xonnx info --ops $MNV2"
  selective host
  size_row x86-64 "xonnx CLI" "$prefix/bin/xonnx" strip
  size_row x86-64 "app.c, all op families" "$OUT/host-c/app_c" strip
  size_row x86-64 "app.c, mobilenet_v2's op families" "$OUT/host-c-mnv2/app_c" strip
}

host_genai() {
  local prefix=$OUT/prefix-host
  # The optional genai component (tokenizer): ids as the tokenizer's trainer wrote them.
  consumer host-genai tests/consumer/genai "${CONSUMER_ARGS[@]}"
  local case_text case_ids out
  case_text=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[1]["text"])' tests/models_llm/tiny/tokenizer_cases.json)
  case_ids=$(/usr/bin/python3 -c 'import json,sys; print(*json.load(open(sys.argv[1]))[1]["ids"])' tests/models_llm/tiny/tokenizer_cases.json)
  out=$("$OUT/host-genai/app_genai" tests/models_llm/tiny/genai_fp32 "$case_text") || { echo "$out"; fail "app_genai"; }
  [ "$(head -1 <<<"$out")" = "$case_ids" ] || fail "app_genai: ids $(head -1 <<<"$out"), expected $case_ids"
  # A version the package does not satisfy is refused by its version file.
  mkdir -p "$OUT/host-badversion"
  printf 'cmake_minimum_required(VERSION 3.22)\nproject(v NONE)\nfind_package(xonnx 9.0 CONFIG REQUIRED)\n' \
    >"$OUT/host-badversion/CMakeLists.txt"
  if cmake -S "$OUT/host-badversion" -B "$OUT/host-badversion/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null 2>&1; then
    fail "find_package(xonnx 9.0) must fail against $prefix"
  fi
}

host_pkgconfig() {
  local prefix=$OUT/prefix-host
  # pkg-config, static: Libs.private carries what libxonnx.a needs.
  local pc_flags
  pc_flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --static --cflags --libs xonnx)
  cc -O2 -o "$OUT/host-pkgconfig-app" tests/consumer/app.c $pc_flags || fail "cc app.c \$(pkg-config --static xonnx)"
  run_app "$OUT/host-pkgconfig-app" "${MLP[@]}"
  [ "$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion xonnx)" = "$(sed -n 's/^#define XONNX_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/xonnx/version.h")" ] ||
    fail "xonnx.pc and version.h disagree on the version"
}

host_shared() {
  # libxonnx.so: the C API only.
  local shared=$OUT/prefix-host-shared
  cmake --install build --prefix "$shared" >/dev/null
  cmake --install build --prefix "$shared" --component shared >/dev/null
  local so
  so=$(readlink -f "$shared/lib/libxonnx.so")
  local others
  others=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^xonnx_' || true)
  [ -z "$others" ] || fail "libxonnx.so exports more than the C API: $(head -5 <<<"$others")"
  consumer host-shared tests/consumer/c -DCMAKE_PREFIX_PATH="$shared" -DXONNX_CONSUMER=shared
  grep -q "libxonnx.so" <<<"$(readelf -d "$OUT/host-shared/app_c")" || fail "app_c (shared) does not need libxonnx.so"
  run_app env LD_LIBRARY_PATH="$shared/lib" "$OUT/host-shared/app_c" "${MLP[@]}"
}

host_debs() {
  local prefix=$OUT/prefix-host
  # .debs, installed with dpkg into a scratch root (its own database; the host's libraries
  # satisfy the dependencies, which apt checks exist).
  (cd build && cpack --config CPackConfig.cmake >/dev/null) || fail "cpack (host)"
  local version dev cli
  version=$(sed -n 's/^#define XONNX_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/xonnx/version.h")
  dev=build/package/libxonnx-dev_${version}_amd64.deb
  cli=build/package/xonnx_${version}_amd64.deb
  check_deb "$dev" ./usr/include/xonnx/xonnx.h ./usr/lib/libxonnx.a ./usr/lib/cmake/xonnx/xonnxConfig.cmake \
            ./usr/lib/pkgconfig/xonnx.pc ./usr/include/xonnx/cxx/sdk/genai/tokenizer.h
  check_deb "$cli" ./usr/bin/xonnx
  apt-get install -s "./$dev" "./$cli" >/dev/null 2>&1 || fail "apt cannot satisfy the .debs' dependencies: $(apt-get install -s "./$dev" "./$cli" 2>&1 | tail -3)"
  local root=$OUT/dpkg-root
  rm -rf "$root"
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
  touch "$root/var/lib/dpkg/status"
  dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless -i "$dev" "$cli" >/dev/null ||
    fail "dpkg -i $dev $cli"
  grep -q "Status: install ok installed" <<<"$(dpkg --root="$root" -s libxonnx-dev xonnx)" || fail "dpkg status"
  grep -q "$version" <<<"$("$root/usr/bin/xonnx" --version)" || fail "the packaged xonnx --version"
  consumer host-deb tests/consumer/c -DCMAKE_PREFIX_PATH="$root/usr"
  run_app "$OUT/host-deb/app_c" "${MLP[@]}"
}

host_static() {
  # The minimal device runtime, linked -static: own kernels only and no graph-pass library, as
  # -DXONNX_WITH_XNNPACK=OFF -DXONNX_WITH_PASSES=OFF builds it, from the tree's own objects (four
  # more compiles and a link in scripts/build.sh). It needs no shared library at all, and gives
  # the full build's outputs (mobilenet_v2: the full app's, written by host_selective) on raw
  # and on converted files; a raw file gets a warning that it runs unoptimized, a converted one
  # none.
  local app=build/bin/xonnx_static_app
  [ -x "$app" ] || fail "$app was not built"
  file -L "$app" | grep -q "statically linked" || fail "$app is not statically linked: $(file -L "$app")"
  [ -z "$(readelf -d "$app" 2>/dev/null | grep NEEDED)" ] || fail "$app needs shared libraries"
  ! nm "$app" | grep -qi " [TU] \(xnn_\|pthreadpool_\|cpuinfo_\)" || fail "$app links XNNPACK, pthreadpool or cpuinfo"
  run_app "$app" "${MLP[@]}"
  local out converted=$OUT/mobilenet_v2.converted.onnx
  out=$("$app" "$MNV2" --expect "$OUT/host-mnv2-full.bin" 2>&1) || { echo "$out"; fail "$app $MNV2"; }
  grep -q "was not optimized by .xonnx convert" <<<"$out" || { echo "$out"; fail "$app ran a raw export without saying it runs unoptimized"; }
  "$OUT/prefix-host/bin/xonnx" convert "$MNV2" "$converted" >/dev/null || fail "xonnx convert $MNV2"
  run_app "$OUT/host-c/app_c" "$converted" --write "$OUT/host-mnv2-converted.bin"
  out=$("$app" "$converted" --expect "$OUT/host-mnv2-converted.bin" 2>&1) || { echo "$out"; fail "$app $converted"; }
  ! grep -q "xonnx convert" <<<"$out" || { echo "$out"; fail "$app warned about a converted file"; }
  size_row x86-64 "app.c, minimal runtime, -static, all op families" "$app" strip
  # The mobilenet_v2-only static apps: the minimal runtime with mobilenet_v2's families and
  # --gc-sections, and the selective build of xonnx for its ops (build/selective-host).
  bash scripts/measure-sizes.sh build --selective host >"$OUT/host-measure-sizes.log" 2>&1 ||
    { cat "$OUT/host-measure-sizes.log"; fail "scripts/measure-sizes.sh"; }
  sed -n '/mobilenet_v2.s, --gc-sections/p' build/sizes/sizes.txt | awk '{printf "%-8s %-44s %9d\n", "x86-64", "app.c, minimal runtime, -static, mnv2, gc-sections", $NF}' | tee -a "$SIZES"
  sed -n '/mobilenet_v2.s ops, --gc-sections/p' build/sizes/sizes.txt | awk '{printf "%-8s %-44s %9d\n", "x86-64", "app.c, selective build (mnv2 ops), -static", $NF}' | tee -a "$SIZES"
}

host() {
  step install host_install
  step "find_package consumers" host_consumers
  step "selective build" host_selective
  step "genai component" host_genai
  step pkg-config host_pkgconfig
  step "libxonnx.so" host_shared
  step ".debs" host_debs
  step "static, minimal runtime" host_static
}

# ARM: the cross-built install, consumers cross-compiled with the same toolchain file, run
# under qemu-user with the sysroot as the target's root.
arm() {
  local arch=$1 triple deb_arch qemu
  case $arch in
    aarch64) triple=aarch64-linux-gnu deb_arch=arm64 qemu=qemu-aarch64 ;;
    armv7) triple=arm-linux-gnueabihf deb_arch=armhf qemu=qemu-arm ;;
  esac
  local tree=build/linux-$arch sysroot=$ROOT/build/sysroot-$arch prefix=$OUT/prefix-$arch
  rm -rf "$prefix"
  cmake --install "$tree" --prefix "$prefix" >/dev/null
  local cross=(-DCMAKE_TOOLCHAIN_FILE="$ROOT/toolchains/$triple.cmake" -DXONNX_SYSROOT="$sysroot"
               -Dxonnx_DIR="$prefix/lib/cmake/xonnx")
  CONSUMER_ARGS=("${cross[@]}")
  consumer "$arch-c" tests/consumer/c "${cross[@]}"
  consumer "$arch-cpp" tests/consumer/cpp "${cross[@]}"
  grep -q "ELF" <<<"$(file -L "$OUT/$arch-c/app_c")" || fail "app_c ($arch) is not an ELF file"
  run_app "$qemu" -L "$sysroot" "$OUT/$arch-c/app_c" "${MLP[@]}"
  [ -f "$OUT/mobilenet_v2.ops" ] || fail "$OUT/mobilenet_v2.ops is missing: run the host target first"
  selective "$arch" "$qemu" -L "$sysroot"
  size_row "$arch" "xonnx CLI" "$prefix/bin/xonnx" "$triple-strip"
  size_row "$arch" "app.c, all op families" "$OUT/$arch-c/app_c" "$triple-strip"
  size_row "$arch" "app.c, mobilenet_v2's op families" "$OUT/$arch-c-mnv2/app_c" "$triple-strip"
  if [ "$arch" = aarch64 ]; then
    # The selective build of xonnx for mobilenet_v2's ops, -static (build/selective-aarch64,
    # ~2.5 min; armv7's: bash scripts/measure-sizes.sh build --selective armv7).
    bash scripts/measure-sizes.sh build --selective aarch64 >"$OUT/aarch64-measure-sizes.log" 2>&1 ||
      { cat "$OUT/aarch64-measure-sizes.log"; fail "scripts/measure-sizes.sh --selective aarch64"; }
    sed -n '/mobilenet_v2.s ops, --gc-sections/p' build/sizes/sizes.txt | awk '{printf "%-8s %-44s %9d\n", "aarch64", "app.c, selective build (mnv2 ops), -static", $NF}' | tee -a "$SIZES"
  fi
  run_app "$qemu" -L "$sysroot" "$OUT/$arch-cpp/app_cpp" tests/models/mlp/model.onnx \
          tests/consumer/mlp_input.bin tests/consumer/mlp_expected.bin
  # pkg-config with the cross compiler: the target's libraries come from the sysroot.
  local libdir=$sysroot/usr/lib/$triple pc_flags
  pc_flags=$(PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" pkg-config --static --cflags --libs xonnx)
  "$triple-gcc" -O2 -o "$OUT/$arch-pkgconfig-app" tests/consumer/app.c $pc_flags -L"$libdir" \
    -Wl,-rpath-link,"$libdir" -Wl,-rpath-link,"$sysroot/lib/$triple" || fail "$triple-gcc app.c \$(pkg-config)"
  run_app "$qemu" -L "$sysroot" "$OUT/$arch-pkgconfig-app" "${MLP[@]}"
  (cd "$tree" && cpack --config CPackConfig.cmake >/dev/null) || fail "cpack ($arch)"
  local version
  version=$(sed -n 's/^#define XONNX_VERSION_STRING "\(.*\)"/\1/p' "$prefix/include/xonnx/version.h")
  check_deb "$tree/package/libxonnx-dev_${version}_${deb_arch}.deb" ./usr/lib/libxonnx.a ./usr/include/xonnx/xonnx.h
  check_deb "$tree/package/xonnx_${version}_${deb_arch}.deb" ./usr/bin/xonnx
  [ "$(dpkg-deb -f "$tree/package/xonnx_${version}_${deb_arch}.deb" Architecture)" = "$deb_arch" ] ||
    fail "xonnx_${version}_${deb_arch}.deb has the wrong Architecture"
}

mkdir -p "$OUT"
rm -f "$SIZES"
summary=()
for t in "${TARGETS[@]}"; do
  t0=$(date +%s)
  case $t in
    host) host ;;
    aarch64 | armv7) arm "$t" ;;
    *) echo "usage: $0 [host] [aarch64] [armv7]" >&2; exit 2 ;;
  esac
  summary+=("$t: $(($(date +%s) - t0)) s")
  log "$t: passed"
done
printf '[packaging] %s\n' "${summary[@]}"
echo "[packaging] stripped sizes (bytes, besides libc and the shared XNNPACK/pthreadpool/cpuinfo):"
cat "$SIZES"
