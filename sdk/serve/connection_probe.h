// Whether the client of a request still waits for its answer, for handlers that have written
// nothing yet (a non-streamed completion). cpp-httplib 0.11 gives a handler neither its socket
// nor a closed-connection check (Request::is_connection_closed came in 0.13), so the probe
// finds the connection's socket among the process's descriptors by its two ends (local and
// remote address and port, which the Request carries) and asks the kernel whether the peer
// closed it (poll's POLLRDHUP / POLLHUP). Linux only; elsewhere find() fails and the request
// runs to its end.
#pragma once

namespace httplib {
struct Request;
}

namespace xonnx::serve {

class ConnectionProbe {
 public:
  // Looks for the request's socket; closed() is false for ever when it was not found.
  explicit ConnectionProbe(const httplib::Request& req);
  bool found() const { return fd_ >= 0; }
  // The peer shut its side down (closed the connection or half-closed it: an HTTP client does
  // not half-close while it waits for a response) or the connection failed. Never blocks.
  bool closed() const;

 private:
  int fd_ = -1;  // owned by httplib's connection thread, which is the one running the handler
};

}  // namespace xonnx::serve
