/* xonnx version: the one version source. The top-level CMakeLists.txt reads these three numbers
 * for project(VERSION), from which the CMake package version, xonnx.pc and the .deb packages
 * take it. XONNX_VERSION_* describe the headers an application compiled against;
 * xonnx_version() (xonnx.h) gives the library it runs with. */
#ifndef XONNX_VERSION_H_
#define XONNX_VERSION_H_

#define XONNX_VERSION_MAJOR 0
#define XONNX_VERSION_MINOR 1
#define XONNX_VERSION_PATCH 0
#define XONNX_VERSION_STRING "0.1.0"
/* One integer that compares: (major * 10000 + minor * 100 + patch). */
#define XONNX_VERSION_NUMBER (XONNX_VERSION_MAJOR * 10000 + XONNX_VERSION_MINOR * 100 + XONNX_VERSION_PATCH)

#endif /* XONNX_VERSION_H_ */
