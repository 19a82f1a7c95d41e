#!/usr/bin/env bash
# Installs what the ARM cross builds need on a Debian bookworm x86-64 host, then assembles the
# target sysroots: Debian's cross compilers, qemu-user (runs the tests), and
# build/sysroot-<arch> from Debian's arm64/armhf packages (toolchains/make-sysroot.sh).
#   bash scripts/install-cross-deps.sh [aarch64|armv7 ...]     (default: both)
# Run as root (or with sudo). Idempotent: a second run checks and returns in about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
ARCHES=("$@")
[ ${#ARCHES[@]} -gt 0 ] || ARCHES=(aarch64 armv7)
bash scripts/install-deps.sh   # host protoc and the host build's packages
PACKAGES=(qemu-user)
for a in "${ARCHES[@]}"; do
  case "$a" in
    aarch64) PACKAGES+=(g++-aarch64-linux-gnu) ;;
    armv7) PACKAGES+=(g++-arm-linux-gnueabihf) ;;
    *) echo "usage: $0 [aarch64|armv7 ...]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[cross-deps] installing: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # A mirror in mid-sync can fail one foreign index file; the host's are what matter here.
  $SUDO apt-get update -qq || echo "[cross-deps] warning: apt-get update reported errors (continuing)"
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "[cross-deps] compilers and qemu-user present"
for a in "${ARCHES[@]}"; do
  bash toolchains/make-sysroot.sh "$a"
done
