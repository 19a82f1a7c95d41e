// Read-only memory mapping of a whole file. Model weights stay views into this mapping.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace xonnx {

class MappedFile {
 public:
  // Maps `path` read-only. On failure returns nullptr and sets *error to a message naming the
  // file and the OS error.
  static std::shared_ptr<const MappedFile> open(const std::string& path, std::string* error);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace xonnx
