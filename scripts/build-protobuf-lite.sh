#!/usr/bin/env bash
# protobuf-lite for the size-optimized selective builds: Debian's own protobuf source package
# (the version of the installed libprotobuf-dev, whose headers the generated ONNX code was
# compiled against), built for TARGET with one section per function and data item, -Os.
#   bash scripts/build-protobuf-lite.sh TARGET      (host, aarch64, armv7)
# Prints the archive's path: build/protobuf-lite-TARGET/libprotobuf-lite.a.
#
# Why: Debian's libprotobuf-lite.a is compiled without -ffunction-sections, so an application
# that links any of message_lite.o keeps its ParseFromIstream / SerializeToOstream and, through
# them, libstdc++'s locale and stream machinery (~0.35 MB of a 2 MB mobilenet_v2 application);
# extension_set.o (130 KB) stays whole although ONNX declares no extensions. Compiled with
# cmake/no_iostream_init.h as XONNX_OPTIMIZE_SIZE compiles the runtime.
# The source comes with apt-get from the deb-src entries of the host's own Debian sources
# (a private apt state under build/, the system's apt configuration is not touched); dpkg-source
# (dpkg-dev, with build-essential from scripts/install-deps.sh) applies Debian's patches.
# Idempotent: a second run reuses the built archive.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:?usage: $0 host|aarch64|armv7}
ROOT=$PWD
OUT=$ROOT/build/protobuf-lite-$TARGET
SRC=$ROOT/build/protobuf-src
VERSION=$(dpkg-query -W -f='${Version}' libprotobuf-dev)
log() { echo "[protobuf-lite] $*" >&2; }

cross=()
case $TARGET in
  host) ;;
  aarch64) cross=(-DCMAKE_TOOLCHAIN_FILE="$ROOT/toolchains/aarch64-linux-gnu.cmake") ;;
  armv7) cross=(-DCMAKE_TOOLCHAIN_FILE="$ROOT/toolchains/arm-linux-gnueabihf.cmake") ;;
  *) echo "usage: $0 host|aarch64|armv7" >&2; exit 2 ;;
esac

if [ -f "$OUT/libprotobuf-lite.a" ] && [ "$(cat "$OUT/version" 2>/dev/null)" = "$VERSION" ]; then
  echo "$OUT/libprotobuf-lite.a"
  exit 0
fi

if [ "$(cat "$SRC/version" 2>/dev/null)" != "$VERSION" ]; then
  apt_dir=$ROOT/build/apt-src
  rm -rf "$SRC" "$apt_dir"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts" "$apt_dir/fetch"
  # The host's deb822 and one-line sources, turned into deb-src entries.
  for f in /etc/apt/sources.list.d/*.sources; do
    if [ -e "$f" ]; then sed 's/^Types: .*/Types: deb-src/' "$f" >"$apt_dir/parts/$(basename "$f")"; fi
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    if [ -e "$f" ]; then sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >"$apt_dir/parts/$(basename "$f" .list).list"; fi
  done
  apt_opts=(-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/parts"
    -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" -o APT::Sandbox::User=root)
  log "fetching Debian's protobuf $VERSION source package"
  apt-get -qq "${apt_opts[@]}" update >&2
  (cd "$apt_dir/fetch" && apt-get -qq "${apt_opts[@]}" source --download-only "protobuf=$VERSION" >&2)
  # --no-check: apt-get verified the files against the signed Sources index.
  dpkg-source --no-check -x "$apt_dir"/fetch/protobuf_*.dsc "$SRC" >/dev/null
  echo "$VERSION" >"$SRC/version"
  # dpkg-source leaves a link to the upstream tarball beside the tree it unpacked.
  rm -rf "$apt_dir" "$(dirname "$SRC")"/protobuf_*.orig.tar.*
fi

log "building libprotobuf-lite.a for $TARGET (-Os, one section per function)"
rm -rf "$OUT"
cmake -S "$SRC/cmake" -B "$OUT/tree" -G Ninja -DCMAKE_BUILD_TYPE=MinSizeRel "${cross[@]}" \
  -Dprotobuf_BUILD_TESTS=OFF -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_WITH_ZLIB=OFF \
  -Dprotobuf_BUILD_PROTOC_BINARIES=OFF -Dprotobuf_BUILD_LIBPROTOC=OFF \
  -DCMAKE_CXX_FLAGS="-ffunction-sections -fdata-sections -include $ROOT/cmake/no_iostream_init.h" >"$OUT.configure.log" 2>&1 ||
  { cat "$OUT.configure.log" >&2; exit 1; }
cmake --build "$OUT/tree" --target libprotobuf-lite >"$OUT.build.log" 2>&1 || { tail -30 "$OUT.build.log" >&2; exit 1; }
cp "$OUT/tree/libprotobuf-lite.a" "$OUT/libprotobuf-lite.a"
rm -rf "$OUT/tree" "$OUT.configure.log" "$OUT.build.log"
echo "$VERSION" >"$OUT/version"
echo "$OUT/libprotobuf-lite.a"
