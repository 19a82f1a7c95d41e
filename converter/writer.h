// IR -> ONNX ModelProto bytes: the inverse of runtime/onnx/loader. Top-level initializer
// bytes are streamed straight from the tensors' storage (never copied into a protobuf
// message), so writing a model costs little more memory than holding it. Large tensors can go
// to an external data file with 4096-byte-aligned offsets the loader maps without copying.
// Node names are unique within each graph and function body of every file written (a repeated
// name gets a "_N" suffix; the IR is not changed), as ONNX Runtime requires.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/ir/graph.h"
#include "runtime/onnx/external_data.h"

namespace xonnx {
namespace convert {

// Protobuf cannot parse messages of 2 GB or more: above this, external data is forced.
constexpr int64_t kMaxInlineProtoBytes = (int64_t{2} << 30) - (int64_t{64} << 20);
constexpr int64_t kExternalDataAlignment = 4096;

struct WriteOptions {
  // Put initializers of at least `external_min_bytes` in OUT's data file (OUT + ".data").
  // Forced when the inline model would not fit in a protobuf message.
  bool external_data = false;
  int64_t external_min_bytes = 1024;
  // Files that must not be overwritten (the input model and its external data files):
  // writing refuses if OUT or its data file is one of them (same inode, not just same path).
  std::vector<std::string> protected_paths;
  // The same by identity: the files the loader read (load_model_listing_files), compared with
  // what OUT and its data file resolve to.
  std::vector<FileIdentity> protected_files;
};

struct WriteStats {
  int64_t model_bytes = 0;       // size of the .onnx file (or buffer)
  int64_t external_bytes = 0;    // size of the .data file (0: none written)
  int64_t external_tensors = 0;  // initializers stored externally
  std::string external_path;     // the data file, when written
  bool external_forced = false;  // external data chosen because the model is over 2 GB
};

// Serializes `model` (all initializers inline) into a buffer. Fails over 2 GB.
Result<std::string> serialize_model(const Model& model, WriteStats* stats = nullptr);

// Writes `model` to `path` (and `path` + ".data" with external data). Each file is written to
// a new temporary file in the same folder and renamed into place, so an existing OUT or
// OUT.data (or a symbolic link planted there) is replaced, never written through, and a file
// still mapped by a reader is never truncated. Nothing is left behind on failure.
Status write_model(const Model& model, const std::string& path, const WriteOptions& options,
                   WriteStats* stats = nullptr);

// The checks write_model makes before writing anything, to run before a long conversion:
// OUT is not a folder, its folder exists, and neither OUT nor its data file is (or resolves
// to) a protected file.
Status check_output_path(const std::string& path, const std::vector<std::string>& protected_paths,
                         const std::vector<FileIdentity>& protected_files = {});

// The data file write_model uses for `path`, and its `location` (relative to path's folder).
std::string external_data_path(const std::string& path);

// True if `a` and `b` name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);

}  // namespace convert
}  // namespace xonnx
