#include "sdk/serve/connection_probe.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <httplib.h>

namespace xonnx::serve {

namespace {

// The numeric host and port of a socket address.
bool endpoint_of(const sockaddr_storage& addr, std::string& host, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    if (!::inet_ntop(AF_INET, &a.sin_addr, buf, sizeof(buf))) return false;
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    if (!::inet_ntop(AF_INET6, &a.sin6_addr, buf, sizeof(buf))) return false;
    port = ntohs(a.sin6_port);
  } else {
    return false;
  }
  host = buf;
  return true;
}

bool same_ends(int fd, const httplib::Request& req) {
  sockaddr_storage local{}, remote{};
  socklen_t local_len = sizeof(local), remote_len = sizeof(remote);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return false;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&remote), &remote_len) != 0) return false;
  std::string local_host, remote_host;
  int local_port = -1, remote_port = -1;
  return endpoint_of(local, local_host, local_port) && endpoint_of(remote, remote_host, remote_port) &&
         local_port == req.local_port && remote_port == req.remote_port && remote_host == req.remote_addr;
}

}  // namespace

ConnectionProbe::ConnectionProbe(const httplib::Request& req) {
  if (req.remote_port <= 0 || req.local_port <= 0) return;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    if (same_ends(static_cast<int>(fd), req)) {
      fd_ = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(dir);
}

bool ConnectionProbe::closed() const {
  if (fd_ < 0) return false;
  pollfd p{};
  p.fd = fd_;
  p.events = POLLRDHUP;
  if (::poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace xonnx::serve
