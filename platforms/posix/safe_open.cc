#include "platforms/posix/safe_open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#if defined(__linux__) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define XONNX_HAVE_OPENAT2 1
#endif

namespace xonnx {
namespace {

constexpr long kProcSuperMagic = 0x9fa0;  // linux/magic.h PROC_SUPER_MAGIC

std::string os_error(const std::string& what, const std::string& name) {
  return "cannot open " + what + " '" + name + "': " + std::strerror(errno);
}

// Splits `relative` into components, rejecting what may leave the folder. "." and empty
// components ("a//b") are dropped.
bool split_components(const std::string& relative, std::vector<std::string>* parts, std::string* error) {
  if (relative.empty()) {
    *error = "the file name is empty";
    return false;
  }
  if (relative.find('\0') != std::string::npos) {
    *error = "the file name contains a NUL byte";
    return false;
  }
  if (relative[0] == '/') {
    *error = "'" + relative + "' is absolute; it must be relative to the model's folder";
    return false;
  }
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    const std::string part = relative.substr(start, end - start);
    if (part == "..") {
      *error = "'" + relative + "' contains '..'; it must stay inside the model's folder";
      return false;
    }
    if (!part.empty() && part != ".") parts->push_back(part);
    start = end + 1;
  }
  if (parts->empty()) {
    *error = "'" + relative + "' names no file";
    return false;
  }
  return true;
}

// The reason an open of an untrusted name failed, in words.
std::string beneath_error(const std::string& relative, int err) {
  switch (err) {
    case ELOOP:
    case EXDEV:
    case ENOTDIR: return "'" + relative + "' goes through a symbolic link or a non-folder (links are not followed)";
    case ENOENT: return "'" + relative + "' does not exist in the model's folder";
    default: return "cannot open '" + relative + "': " + std::strerror(err);
  }
}

#ifdef XONNX_HAVE_OPENAT2
// -1 with errno ENOSYS / E2BIG where the kernel has no openat2: the caller walks instead.
int openat2_beneath(int dir_fd, const std::string& relative) {
  struct open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, dir_fd, relative.c_str(), &how, sizeof how));
}
#endif

int openat_walk(int dir_fd, const std::vector<std::string>& parts) {
  UniqueFd dir;
  int at = dir_fd;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    const int next = ::openat(at, parts[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return -1;
    dir = UniqueFd(next);
    at = next;
  }
  return ::openat(at, parts.back().c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
}

}  // namespace

void UniqueFd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

UniqueFd open_regular_file(const std::string& path, std::string* error) {
  if (path.find('\0') != std::string::npos) {
    *error = "the file name contains a NUL byte";
    return UniqueFd();
  }
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (!fd.valid()) {
    *error = os_error("file", path);
    return fd;
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = "'" + path + "' is not a regular file";
    return UniqueFd();
  }
  return fd;
}

UniqueFd open_directory(const std::string& path, std::string* error) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) *error = os_error("folder", path);
  return fd;
}

UniqueFd open_beneath(int dir_fd, const std::string& relative, std::string* error) {
  std::vector<std::string> parts;
  if (!split_components(relative, &parts, error)) return UniqueFd();
  int fd = -1;
#ifdef XONNX_HAVE_OPENAT2
  fd = openat2_beneath(dir_fd, relative);
  if (fd < 0 && (errno == ENOSYS || errno == E2BIG || errno == EPERM)) fd = openat_walk(dir_fd, parts);
#else
  fd = openat_walk(dir_fd, parts);
#endif
  if (fd < 0) {
    const int err = errno;
    *error = beneath_error(relative, err);
    errno = err;
    return UniqueFd();
  }
  UniqueFd file(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *error = "cannot inspect '" + relative + "': " + std::strerror(errno);
    return UniqueFd();
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "'" + relative + "' is not a regular file";
    return UniqueFd();
  }
  if (st.st_nlink != 1) {
    *error = "'" + relative + "' has " + std::to_string(st.st_nlink) +
             " hard links; a linked file may live outside the model's folder";
    return UniqueFd();
  }
  struct statfs fs;
  if (::fstatfs(fd, &fs) == 0 && static_cast<long>(fs.f_type) == kProcSuperMagic) {
    *error = "'" + relative + "' is on /proc";
    return UniqueFd();
  }
  return file;
}

bool read_whole_file(int fd, const std::string& name, int64_t max_bytes, std::string* out, std::string* error) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    *error = "cannot inspect '" + name + "': " + std::strerror(errno);
    return false;
  }
  if (st.st_size > max_bytes) {
    *error =
        "'" + name + "' has " + std::to_string(st.st_size) + " bytes, over the limit of " + std::to_string(max_bytes);
    return false;
  }
  out->clear();
  out->reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read '" + name + "': " + std::strerror(errno);
      return false;
    }
    if (n == 0) return true;
    if (static_cast<int64_t>(out->size()) + n > max_bytes) {
      *error = "'" + name + "' grew past the limit of " + std::to_string(max_bytes) + " bytes";
      return false;
    }
    out->append(buf, static_cast<size_t>(n));
  }
}

}  // namespace xonnx
