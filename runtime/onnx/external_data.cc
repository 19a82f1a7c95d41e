#include "runtime/onnx/external_data.h"

#include <cerrno>

namespace xonnx {

Result<std::shared_ptr<const MappedFile>> ExternalDataResolver::open(const std::string& location) {
  if (base_dir_.empty()) {
    return invalid_model("external data '", location, "' cannot be resolved: the model was not loaded from a file");
  }
  auto it = files_.find(location);
  if (it != files_.end()) return it->second;
  std::string error;
  if (!base_fd_.valid()) {
    base_fd_ = open_directory(base_dir_, &error);
    if (!base_fd_.valid()) return not_found("model folder: ", error);
  }
  UniqueFd fd = open_beneath(base_fd_.get(), location, &error);
  if (!fd.valid()) {
    if (errno == ENOENT) return not_found("external data file: ", error);
    return invalid_model("external data location: ", error);
  }
  const std::string path = base_dir_ + "/" + location;
  auto file = MappedFile::map(fd.get(), path, &error);
  if (!file) return io_error("external data: ", error);
  files_[location] = file;
  identities_.push_back({path, file->device(), file->inode()});
  return file;
}

}  // namespace xonnx
