# .deb packages from a build tree (host or cross): `cpack --config <build>/CPackConfig.cmake`.
#   libxonnx-dev  headers, libxonnx.a (and the other components' archives), CMake and pkg-config
#                 files, docs
#   xonnx         the CLI
# Dependencies are written by hand: dpkg-shlibdeps cannot inspect a foreign-architecture binary.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(XONNX_DEB_ARCH amd64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64)$")
  set(XONNX_DEB_ARCH arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(armv7.*|arm|armhf)$")
  set(XONNX_DEB_ARCH armhf)
else()
  set(XONNX_DEB_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()

# Debian packages of the shared libraries the runtime needs (XONNX_RUNTIME_SYSTEM_LIBS).
set(_dev_depends "")
set(_run_depends "libc6 (>= ${XONNX_GLIBC_FLOOR})")
if(TARGET xonnx_serve)  # xonnx serve links Debian's shared cpp-httplib (bookworm: 0.11)
  string(APPEND _run_depends ", libcpp-httplib0.11")
endif()
if("XNNPACK" IN_LIST XONNX_RUNTIME_SYSTEM_LIBS)
  set(_dev_depends "libxnnpack-dev, libpthreadpool-dev, libcpuinfo-dev")
  string(APPEND _run_depends ", libxnnpack0, libpthreadpool0, libcpuinfo0")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME xonnx)
set(CPACK_PACKAGE_VENDOR "xonnx")
set(CPACK_PACKAGE_CONTACT "xonnx maintainers <xonnx@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Run ONNX models exported from PyTorch on edge devices")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/package)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL dev)
if(TARGET xonnx)
  list(APPEND CPACK_COMPONENTS_ALL cli)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${XONNX_DEB_ARCH})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libxonnx-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "${_dev_depends}")
set(CPACK_COMPONENT_DEV_DESCRIPTION
    "xonnx SDK for applications: C and C++ headers, libxonnx.a (runtime, protobuf-lite inside), CMake package (find_package(xonnx)) and xonnx.pc")
set(CPACK_DEBIAN_CLI_PACKAGE_NAME xonnx)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION science)
set(CPACK_DEBIAN_CLI_PACKAGE_DEPENDS "${_run_depends}")
set(CPACK_COMPONENT_CLI_DESCRIPTION
    "xonnx command-line tool: run, bench, convert, quantize and verify ONNX models")
include(CPack)
