// Opens the external data files a model names, safely: relative to a descriptor of the
// model's folder, never through a symbolic link, "..", an absolute path or a NUL byte, only
// regular files with a single hard link (platforms/posix/safe_open.h), and maps the very
// descriptor it checked, so no name can be swapped between the check and the read.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "platforms/posix/mapped_file.h"
#include "platforms/posix/safe_open.h"
#include "runtime/core/status.h"
#include "runtime/ir/graph.h"

namespace xonnx {

struct LoadOptions;

// A file by identity (what fstat said of the descriptor read), so a later check compares the
// very file that was read, not whatever its name points to now.
struct FileIdentity {
  std::string path;
  uint64_t device = 0;
  uint64_t inode = 0;
};

// load_model (loader.h) that also lists every file it read: the model file first, then each
// external data file, whichever tensor named it (initializer, Constant or other attribute,
// subgraph, function body, sparse tensor). The converter refuses to write over any of them.
Result<Model> load_model_listing_files(const std::string& path, const LoadOptions& options,
                                       std::vector<FileIdentity>* files_read);

// One per load; not thread-safe. Each location is opened and mapped once.
class ExternalDataResolver {
 public:
  // base_dir empty: external data is rejected (model loaded from memory).
  explicit ExternalDataResolver(std::string base_dir) : base_dir_(std::move(base_dir)) {}
  // The mapping of `location`, a name relative to the model's folder.
  Result<std::shared_ptr<const MappedFile>> open(const std::string& location);
  // Every file opened so far, in order ("folder/location", device, inode).
  const std::vector<FileIdentity>& files() const { return identities_; }

 private:
  std::string base_dir_;
  UniqueFd base_fd_;
  std::map<std::string, std::shared_ptr<const MappedFile>> files_;
  std::vector<FileIdentity> identities_;
};

}  // namespace xonnx
