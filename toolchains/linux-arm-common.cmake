# Shared part of the ARM toolchain files (aarch64-linux-gnu.cmake, arm-linux-gnueabihf.cmake):
# Debian's cross g++ with its own libc, plus the target libraries that toolchains/make-sysroot.sh
# unpacked into XONNX_SYSROOT (default build/sysroot-<arch>; the CMake presets set it).
# The caller sets XONNX_TRIPLE, XONNX_SYSROOT_ARCH, XONNX_QEMU, XONNX_QEMU_CPU_DEFAULT and
# CMAKE_SYSTEM_PROCESSOR.
set(CMAKE_SYSTEM_NAME Linux)

if(NOT XONNX_SYSROOT AND DEFINED ENV{XONNX_SYSROOT})
  set(XONNX_SYSROOT "$ENV{XONNX_SYSROOT}")
endif()
if(NOT XONNX_SYSROOT)
  get_filename_component(XONNX_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../build/sysroot-${XONNX_SYSROOT_ARCH}" ABSOLUTE)
endif()
set(XONNX_SYSROOT "${XONNX_SYSROOT}" CACHE PATH "Target libraries unpacked by toolchains/make-sysroot.sh")
# try_compile projects re-read this file: hand them the sysroot too.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES XONNX_SYSROOT)
if(NOT EXISTS "${XONNX_SYSROOT}/usr/lib/${XONNX_TRIPLE}/libXNNPACK.so")
  message(FATAL_ERROR "No ${XONNX_SYSROOT_ARCH} sysroot at ${XONNX_SYSROOT}: run "
                      "`bash toolchains/make-sysroot.sh ${XONNX_SYSROOT_ARCH}` (or scripts/install-cross-deps.sh)")
endif()

find_program(XONNX_CROSS_CXX ${XONNX_TRIPLE}-g++)
find_program(XONNX_CROSS_CC ${XONNX_TRIPLE}-gcc)
if(NOT XONNX_CROSS_CXX OR NOT XONNX_CROSS_CC)
  message(FATAL_ERROR "${XONNX_TRIPLE}-g++ not found: run `bash scripts/install-cross-deps.sh` "
                      "(Debian's g++-${XONNX_TRIPLE})")
endif()
set(CMAKE_C_COMPILER ${XONNX_CROSS_CC})
set(CMAKE_CXX_COMPILER ${XONNX_CROSS_CXX})

# Libraries, headers and CMake packages come from the sysroot (and the cross libc); programs
# (protoc) from the host.
set(CMAKE_FIND_ROOT_PATH "${XONNX_SYSROOT}" /usr/${XONNX_TRIPLE})
set(CMAKE_LIBRARY_ARCHITECTURE ${XONNX_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The sources include <xnnpack.h>, <CLI/CLI.hpp>, ... as system headers; on the host they are
# in /usr/include, here in the sysroot's (which holds no libc headers, so no clash).
set(CMAKE_C_STANDARD_INCLUDE_DIRECTORIES "${XONNX_SYSROOT}/usr/include")
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${XONNX_SYSROOT}/usr/include")
# libXNNPACK.so names libcpuinfo/libpthreadpool/libgcc_s: let the linker find them there.
set(XONNX_RPATH_LINK "-Wl,-rpath-link,${XONNX_SYSROOT}/usr/lib/${XONNX_TRIPLE} -Wl,-rpath-link,${XONNX_SYSROOT}/lib/${XONNX_TRIPLE}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${XONNX_RPATH_LINK}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${XONNX_RPATH_LINK}")
# No RUNPATH into the build machine's sysroot: on the board the libraries are in the system
# paths, and under qemu `-L sysroot` maps those paths to the sysroot.
set(CMAKE_SKIP_RPATH ON)

# Tests (and anything CMake runs) go through qemu-user with the sysroot as the target's root.
# The emulated CPU is a real board's (XONNX_QEMU_CPU), not qemu's default "max", so the tests
# take the code paths (XNNPACK's and ours, chosen with cpuinfo) that board takes.
set(XONNX_QEMU_CPU "${XONNX_QEMU_CPU_DEFAULT}" CACHE STRING "CPU model qemu-user emulates for the tests")
find_program(XONNX_QEMU_PROGRAM ${XONNX_QEMU})
if(XONNX_QEMU_PROGRAM)
  set(CMAKE_CROSSCOMPILING_EMULATOR "${XONNX_QEMU_PROGRAM};-L;${XONNX_SYSROOT};-cpu;${XONNX_QEMU_CPU}")
else()
  message(WARNING "${XONNX_QEMU} not found (Debian's qemu-user): the build works, ctest cannot run")
endif()
