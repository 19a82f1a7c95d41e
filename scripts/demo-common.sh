# Shared part of scripts/demo-ocr.sh and scripts/demo-vad.sh (sourced, not run).

# demo_args "$@": parses [INPUT] [--aarch64] [-- PROGRAM OPTIONS] into DEMO_INPUT, DEMO_ARCH
# (host or aarch64) and DEMO_EXTRA; --help prints the comment block at the top of $0.
demo_args() {
  DEMO_INPUT="" DEMO_ARCH=host DEMO_EXTRA=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --aarch64) DEMO_ARCH=aarch64; shift ;;
      --) shift; DEMO_EXTRA=("$@"); break ;;
      -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
      -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
      *) DEMO_INPUT=$1; shift ;;
    esac
  done
  [ -z "$DEMO_INPUT" ] || [ -f "$DEMO_INPUT" ] || { echo "no such file: $DEMO_INPUT" >&2; exit 2; }
}

# demo_build TARGET PROGRAM NAME ARCH: builds one demo program for the host or, for aarch64,
# cross-built and run under qemu-user. Sets DEMO_RUN (the command that runs the program) and
# DEMO_OUT (the output folder).
demo_build() {
  local target=$1 program=$2 name=$3 arch=$4
  if [ "$arch" = aarch64 ]; then
    bash scripts/install-cross-deps.sh aarch64 >&2
    cmake --preset linux-aarch64 >/dev/null
    cmake --build --preset linux-aarch64 --target "$target" >&2
    # The linux-aarch64 preset's emulator (toolchains/aarch64-linux-gnu.cmake): a Raspberry Pi 4's CPU.
    DEMO_RUN=(qemu-aarch64 -L build/sysroot-aarch64 -cpu cortex-a72 "build/linux-aarch64/bin/$program")
    DEMO_OUT=build/demos/$name-aarch64
  else
    bash scripts/install-deps.sh >&2
    cmake --preset release >/dev/null
    cmake --build --preset release --target "$target" >&2
    DEMO_RUN=("build/bin/$program")
    DEMO_OUT=build/demos/$name
  fi
  mkdir -p "$DEMO_OUT"
}
