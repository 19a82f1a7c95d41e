// Opening untrusted files by descriptor: never blocks on a FIFO or device, never follows a
// link out of the folder a model was loaded from, and gives the identity (device, inode) of
// exactly the file that was opened, so callers check and map the same descriptor.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace xonnx {

// Owns a file descriptor (closed on destruction). -1: none.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(o.release()) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Opens `path` read-only and requires a regular file. Symbolic links are followed (the caller
// named the file); a FIFO, socket or device fails at once instead of blocking. On failure the
// result is invalid and *error names the file and the reason.
UniqueFd open_regular_file(const std::string& path, std::string* error);

// Opens the folder `path` (for open_beneath).
UniqueFd open_directory(const std::string& path, std::string* error);

// Opens `relative` inside the folder `dir_fd` for reading, for a name an untrusted file chose
// (an ONNX external-data location). Refused: an empty or absolute name, a NUL byte, a ".."
// component, a symbolic link in any component, anything but a regular file, a file with more
// than one hard link (it may be a link to a file outside the folder), and files on /proc.
// Uses openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel has it and an openat
// walk with O_NOFOLLOW per component elsewhere. When the name does not exist, errno is ENOENT.
UniqueFd open_beneath(int dir_fd, const std::string& relative, std::string* error);

// Reads the whole regular file `fd` (at most `max_bytes`). False and *error on failure.
bool read_whole_file(int fd, const std::string& name, int64_t max_bytes, std::string* out, std::string* error);

}  // namespace xonnx
