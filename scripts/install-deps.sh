#!/usr/bin/env bash
# Installs the Debian packages xonnx needs to build and test (only those missing).
# Run as root on Debian bookworm. Idempotent.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  protobuf-compiler libprotobuf-dev          # protoc + libprotobuf-lite.a (linked statically)
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev
  libonnx-dev                                # the ONNX checker the converter's output is tested with
  libre2-dev libutf8proc-dev                 # sdk/genai: tokenizer regexes, Unicode normalization
  libcpp-httplib-dev libssl-dev              # sdk/serve: the HTTP server (Debian builds it with OpenSSL)
  clang-14 libclang-rt-14-dev                # scripts/test-sanitizers.sh, scripts/fuzz.sh: ASan, UBSan, libFuzzer
  python3-onnx                               # tools/bad_models.py, scripts/fuzz-mutations.sh: hostile models
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "[deps] all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "[deps] installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || echo "[deps] warning: apt-get update reported errors (continuing)"
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "[deps] done"
