#!/usr/bin/env bash
# Assembles the target libraries of an ARM cross build from Debian's arm64/armhf packages:
#   bash toolchains/make-sysroot.sh aarch64|armv7 [DEST]     (DEST: build/sysroot-<arch>)
# Packages are fetched with `apt-get download` and unpacked with `dpkg -x` (installing foreign
# packages with multiarch apt is fragile: versions skew). The result holds the target's
# XNNPACK/cpuinfo/pthreadpool, libprotobuf-lite.a, gtest, benchmark, libre2.a, libutf8proc.a,
# cpp-httplib (a shared library, with its OpenSSL / zlib / brotli dependencies), the header-only
# CLI11 and nlohmann-json, and libc/libstdc++ so qemu-user can run the tests
# with `-L DEST`.
# Idempotent: a second run with the same package versions only checks a stamp file.
# Needs root the first time (dpkg --add-architecture + apt-get update).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  aarch64) DEB_ARCH=arm64; TRIPLE=aarch64-linux-gnu ;;
  armv7) DEB_ARCH=armhf; TRIPLE=arm-linux-gnueabihf ;;
  *) echo "usage: $0 aarch64|armv7 [DEST]" >&2; exit 2 ;;
esac
ARCH=$1
DEST=${2:-build/sysroot-$ARCH}
CACHE=build/deb-cache/$DEB_ARCH
log() { echo "[sysroot-$ARCH] $*"; }

# Packages whose code the target build links or runs against. Those also installed on the host
# are pinned to the host's version: protoc's generated code must match libprotobuf's headers.
ARCH_PACKAGES=(
  libc6 libgcc-s1 libstdc++6
  libxnnpack0 libxnnpack-dev libcpuinfo0 libcpuinfo-dev libpthreadpool0 libpthreadpool-dev
  libprotobuf-dev
  libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
  libre2-dev libutf8proc-dev
  libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libssl3 zlib1g libbrotli1
)
# Header-only, architecture-independent.
ALL_PACKAGES=(libcli11-dev nlohmann-json3-dev)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# The package index of the foreign architecture: a mirror in mid-sync may fail one index file,
# which apt reports as an error though the others are usable, so failures here only warn.
apt_update() {
  $SUDO apt-get update -qq >/dev/null 2>&1 || log "warning: apt-get update reported errors (continuing)"
}
if ! dpkg --print-foreign-architectures | grep -qx "$DEB_ARCH"; then
  log "adding dpkg architecture $DEB_ARCH"
  $SUDO dpkg --add-architecture "$DEB_ARCH"
  apt_update
fi

host_version() {
  dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null | awk '/install ok installed/{print $4}'
}
candidate_version() {
  apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/{print $2}'
}

offered_version() {
  apt-cache policy "$1" 2>/dev/null | awk -v v="$2" '$1 == v || ($1 == "***" && $2 == v) { found = 1 } END { exit !found }'
}

# Resolve "name:arch=version" for every package (host version when the host has it).
resolve() {
  SPECS=()
  local p spec v
  for p in "${ARCH_PACKAGES[@]}" "${ALL_PACKAGES[@]}"; do
    spec=$p
    [[ " ${ALL_PACKAGES[*]} " == *" $p "* ]] || spec=$p:$DEB_ARCH
    v=$(host_version "$p")
    # A host version the index no longer offers (the host installed before a security update)
    # cannot be downloaded for the target: take the candidate then.
    if [ -n "$v" ] && ! offered_version "$spec" "$v"; then v=""; fi
    [ -n "$v" ] || v=$(candidate_version "$spec")
    if [ -z "$v" ] || [ "$v" = "(none)" ]; then return 1; fi
    SPECS+=("$spec=$v")
  done
}
if ! resolve; then
  apt_update
  resolve || { log "error: no candidate for some package in the $DEB_ARCH index (apt-cache policy)"; exit 1; }
fi

STAMP=$DEST/.xonnx-sysroot
WANT=$(printf '%s\n' "${SPECS[@]}")
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -e "$DEST/usr/lib/$TRIPLE/libXNNPACK.so" ]; then
  log "up to date ($DEST)"
  exit 0
fi

mkdir -p "$CACHE"
missing=()
for s in "${SPECS[@]}"; do
  name=${s%%=*}; name=${name%%:*}; ver=${s#*=}
  # apt-get download names files name_version_arch.deb with ':' in the version escaped as %3a.
  ls "$CACHE/${name}_${ver//:/%3a}_"*.deb >/dev/null 2>&1 || missing+=("$s")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "downloading ${#missing[@]} packages into $CACHE"
  if ! (cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "${missing[@]}" >/dev/null); then
    apt_update
    (cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "${missing[@]}" >/dev/null) || {
      log "error: apt-get download failed for: ${missing[*]}"
      log "the host's versions of these packages must also exist for $DEB_ARCH (apt-cache policy NAME:$DEB_ARCH)"
      exit 1
    }
  fi
fi

log "extracting into $DEST"
rm -rf "$DEST"
mkdir -p "$DEST"
for s in "${SPECS[@]}"; do
  name=${s%%=*}; name=${name%%:*}; ver=${s#*=}
  dpkg -x "$(ls "$CACHE/${name}_${ver//:/%3a}_"*.deb | head -n 1)" "$DEST"
done

rm -rf "$DEST/usr/share/doc" "$DEST/usr/share/man" "$DEST/usr/share/lintian"

# Absolute symlinks (libfoo.so -> /usr/lib/...) would point into the host: make them relative.
find "$DEST" -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$DEST$target")" "$link"
done

# Debian's CMake package files compute their prefix from their own location, so they work from
# the sysroot as they are; check the files the build needs are there.
for f in "usr/lib/$TRIPLE/libXNNPACK.so" "usr/lib/$TRIPLE/libcpuinfo.so" "usr/lib/$TRIPLE/libpthreadpool.so" \
         "usr/lib/$TRIPLE/libprotobuf-lite.a" "usr/lib/$TRIPLE/libgtest.a" "usr/include/xnnpack.h" \
         "usr/include/google/protobuf/message_lite.h" "usr/include/CLI/CLI.hpp" "usr/include/nlohmann/json.hpp" \
         "usr/lib/$TRIPLE/libre2.a" "usr/lib/$TRIPLE/libutf8proc.a" "usr/include/re2/re2.h" "usr/include/utf8proc.h" \
         "usr/include/httplib.h" "usr/lib/$TRIPLE/libcpp-httplib.so" "usr/include/openssl/ssl.h"; do
  [ -e "$DEST/$f" ] || { log "error: $f missing after extraction"; exit 1; }
done
printf '%s\n' "$WANT" > "$STAMP"
log "done: $(du -sh "$DEST" | cut -f1) in $DEST"
