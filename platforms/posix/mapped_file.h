// Read-only memory mapping of a whole file. Model weights stay views into this mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace xonnx {

class MappedFile {
 public:
  // Maps `path` read-only (opened with open_regular_file: a FIFO or device fails instead of
  // blocking). On failure returns nullptr and sets *error to a message naming the file and the
  // OS error.
  static std::shared_ptr<const MappedFile> open(const std::string& path, std::string* error);
  // Maps the regular file open at `fd` (the caller keeps and closes fd). `name` is for errors.
  static std::shared_ptr<const MappedFile> map(int fd, const std::string& name, std::string* error);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const void* data() const { return data_; }
  size_t size() const { return size_; }
  // Identity of the file mapped (what fstat said of the descriptor mapped).
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

 private:
  MappedFile() = default;
  void* data_ = nullptr;
  size_t size_ = 0;
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
};

}  // namespace xonnx
