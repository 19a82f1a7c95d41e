# Cross build for 32-bit ARM Linux, hard-float: armv7-a with NEON and VFPv4 (Cortex-A7/A15/A53
# in 32-bit mode, e.g. a Raspberry Pi 2/3/4 on 32-bit Raspberry Pi OS). Compiler: Debian's
# g++-arm-linux-gnueabihf. Target libraries: bash toolchains/make-sysroot.sh armv7.
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(XONNX_TRIPLE arm-linux-gnueabihf)
set(XONNX_SYSROOT_ARCH armv7)
set(XONNX_QEMU qemu-arm)
set(CMAKE_C_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard")
# -Wno-psabi: GCC notes that the ABI of some argument types changed in GCC 7.1; everything
# here is built by one compiler, so the note is noise (hundreds of lines per file).
set(CMAKE_CXX_FLAGS_INIT "-march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -Wno-psabi")
set(XONNX_QEMU_CPU_DEFAULT cortex-a7)  # Raspberry Pi 2: the oldest armv7-a core with NEON + VFPv4
include(${CMAKE_CURRENT_LIST_DIR}/linux-arm-common.cmake)
