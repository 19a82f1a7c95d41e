// Force-included (-include) by the size-optimized builds (XONNX_OPTIMIZE_SIZE) into the runtime,
// the generated ONNX code and scripts/build-protobuf-lite.sh's protobuf-lite: <iostream> without
// its per-file static std::ios_base::Init object. protobuf's stubs/common.h includes <iostream>
// although nothing on Linux writes to std::cout / std::cerr; with GCC 12's libstdc++ that object
// alone links the standard streams and the whole locale machinery (~0.4 MB) into a static
// application. Marking <iostream> as already included keeps <istream> and <ostream> (which
// protobuf does use); code that names std::cout or std::cerr then fails to compile, it cannot
// run on uninitialized streams.
#pragma once
#include <istream>
#include <ostream>
#ifdef __GLIBCXX__
#define _GLIBCXX_IOSTREAM 1
#endif
