#include "platforms/posix/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "platforms/posix/safe_open.h"

namespace xonnx {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, std::string* error) {
  UniqueFd fd = open_regular_file(path, error);
  if (!fd.valid()) return nullptr;
  return map(fd.get(), path, error);
}

std::shared_ptr<const MappedFile> MappedFile::map(int fd, const std::string& name, std::string* error) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = "'" + name + "' is not a regular file";
    return nullptr;
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->size_ = static_cast<size_t>(st.st_size);
  file->device_ = static_cast<uint64_t>(st.st_dev);
  file->inode_ = static_cast<uint64_t>(st.st_ino);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      *error = "cannot map '" + name + "': " + std::strerror(errno);
      return nullptr;
    }
    file->data_ = p;
    // Start reading the whole file now: the loader touches it piecemeal (tensor after tensor),
    // and a cold page cache would otherwise serve it one readahead window per fault.
    ::madvise(p, file->size_, MADV_WILLNEED);
  }
  return file;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

}  // namespace xonnx
