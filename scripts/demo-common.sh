# Shared part of scripts/demo-ocr.sh and scripts/demo-vad.sh (sourced, not run): the build of
# one demo program for the host or, with --aarch64, for 64-bit ARM run under qemu-user.
# Sets DEMO_RUN (the command that runs the program) and DEMO_OUT (the output folder).
#   demo_build TARGET PROGRAM NAME ARCH
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
