# Cross build for 64-bit ARM Linux (armv8-a: NEON is part of the base ISA), e.g. a Raspberry Pi
# 3/4/5 on a 64-bit OS or any arm64 board. Compiler: Debian's g++-aarch64-linux-gnu.
# Target libraries: bash toolchains/make-sysroot.sh aarch64. Used by the linux-aarch64 preset.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(XONNX_TRIPLE aarch64-linux-gnu)
set(XONNX_SYSROOT_ARCH aarch64)
set(XONNX_QEMU qemu-aarch64)
set(XONNX_QEMU_CPU_DEFAULT cortex-a72)  # Raspberry Pi 4
include(${CMAKE_CURRENT_LIST_DIR}/linux-arm-common.cmake)
