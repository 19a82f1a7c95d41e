#include "converter/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "converter/proto_builder.h"

namespace xonnx {
namespace convert {
namespace {

// Wire-format tags (field << 3 | length-delimited) the writer emits by hand.
constexpr uint8_t kModelGraphTag = (7 << 3) | 2;
constexpr uint8_t kGraphInitializerTag = (5 << 3) | 2;
constexpr uint8_t kTensorRawDataTag = (9 << 3) | 2;

int64_t varint_size(uint64_t v) {
  int64_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

int64_t field_size(int64_t payload) { return 1 + varint_size(static_cast<uint64_t>(payload)) + payload; }

// Where serialized bytes go: a string, or a file descriptor through a buffer.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual Status write(const void* data, size_t size) = 0;
  virtual Status flush() { return Status::ok(); }

  Status varint(uint64_t v) {
    uint8_t buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<uint8_t>(v);
    return write(buf, n);
  }
  Status tag(uint8_t t) { return write(&t, 1); }
  Status zeros(size_t n) {
    static const char kZeros[4096] = {};
    while (n) {
      const size_t k = std::min(n, sizeof(kZeros));
      XONNX_RETURN_IF_ERROR(write(kZeros, k));
      n -= k;
    }
    return Status::ok();
  }
  int64_t written() const { return written_; }

 protected:
  int64_t written_ = 0;
};

class StringSink : public Sink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status write(const void* data, size_t size) override {
    out_->append(static_cast<const char*>(data), size);
    written_ += static_cast<int64_t>(size);
    return Status::ok();
  }

 private:
  std::string* out_;
};

class FileSink : public Sink {
 public:
  FileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) { buffer_.reserve(kBuffer); }
  Status write(const void* data, size_t size) override {
    written_ += static_cast<int64_t>(size);
    if (buffer_.size() + size <= kBuffer) {
      buffer_.append(static_cast<const char*>(data), size);
      return Status::ok();
    }
    XONNX_RETURN_IF_ERROR(flush());
    if (size < kBuffer) {
      buffer_.append(static_cast<const char*>(data), size);
      return Status::ok();
    }
    return write_fully(data, size);  // large tensors go straight from their storage
  }
  Status flush() override {
    Status s = write_fully(buffer_.data(), buffer_.size());
    buffer_.clear();
    return s;
  }

 private:
  static constexpr size_t kBuffer = 1 << 20;
  Status write_fully(const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size) {
      const ssize_t w = ::write(fd_, p, std::min<size_t>(size, size_t{1} << 30));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return io_error("cannot write '", path_, "': ", std::strerror(errno));
      p += w;
      size -= static_cast<size_t>(w);
    }
    return Status::ok();
  }
  int fd_;
  std::string path_;
  std::string buffer_;
};

// One top-level initializer: its TensorProto without data, and where its bytes go.
struct InitializerPlan {
  std::string header;  // serialized TensorProto without raw_data
  const Tensor* tensor = nullptr;
  bool inline_raw = false;  // raw_data follows the header
  bool external = false;
  int64_t offset = 0;       // in the data file
  int64_t field_bytes = 0;  // payload size of the initializer field
};

struct ModelPlan {
  std::string header;        // ModelProto without graph
  std::string graph_header;  // GraphProto without initializers
  std::vector<InitializerPlan> inits;
  int64_t graph_bytes = 0;
  int64_t total_bytes = 0;
  int64_t external_bytes = 0;
  int64_t external_tensors = 0;
};

bool wants_external(const Tensor& t, int64_t min_bytes) {
  return t.dtype() != DataType::kString && static_cast<int64_t>(t.nbytes()) >= min_bytes && t.nbytes() > 0;
}

// Lays out the model; `location` non-empty puts large initializers in that data file.
Result<ModelPlan> plan_model(const Model& model, const std::string& location, int64_t min_bytes) {
  ModelPlan plan;
  onnxpb::ModelProto header;
  XONNX_RETURN_IF_ERROR(model_header_to_proto(model, &header));
  plan.header = header.SerializeAsString();
  onnxpb::GraphProto graph;
  XONNX_RETURN_IF_ERROR(graph_to_proto(model.graph, false, model.ir_version, &graph));
  plan.graph_header = graph.SerializeAsString();
  plan.graph_bytes = static_cast<int64_t>(plan.graph_header.size());
  for (const NamedTensor& init : model.graph.initializers) {
    InitializerPlan ip;
    ip.tensor = &init.tensor;
    onnxpb::TensorProto t;
    const std::string what = "initializer '" + init.name + "': ";
    const bool is_string = init.tensor.dtype() == DataType::kString;
    XONNX_RETURN_IF_ERROR(tensor_to_proto(init.tensor, init.name, is_string, &t).with_context(what));
    if (!location.empty() && wants_external(init.tensor, min_bytes)) {
      ip.external = true;
      ip.offset = (plan.external_bytes + kExternalDataAlignment - 1) / kExternalDataAlignment * kExternalDataAlignment;
      plan.external_bytes = ip.offset + static_cast<int64_t>(init.tensor.nbytes());
      ++plan.external_tensors;
      t.set_data_location(onnxpb::TensorProto::EXTERNAL);
      auto add = [&t](const char* k, const std::string& v) {
        auto* e = t.add_external_data();
        e->set_key(k);
        e->set_value(v);
      };
      add("location", location);
      add("offset", std::to_string(ip.offset));
      add("length", std::to_string(init.tensor.nbytes()));
    } else {
      ip.inline_raw = !is_string;
    }
    ip.header = t.SerializeAsString();
    ip.field_bytes = static_cast<int64_t>(ip.header.size()) +
                     (ip.inline_raw ? field_size(static_cast<int64_t>(init.tensor.nbytes())) : 0);
    plan.graph_bytes += field_size(ip.field_bytes);
    plan.inits.push_back(std::move(ip));
  }
  plan.total_bytes = static_cast<int64_t>(plan.header.size()) + field_size(plan.graph_bytes);
  return plan;
}

Status emit_model(const ModelPlan& plan, Sink& sink) {
  XONNX_RETURN_IF_ERROR(sink.write(plan.header.data(), plan.header.size()));
  XONNX_RETURN_IF_ERROR(sink.tag(kModelGraphTag));
  XONNX_RETURN_IF_ERROR(sink.varint(static_cast<uint64_t>(plan.graph_bytes)));
  XONNX_RETURN_IF_ERROR(sink.write(plan.graph_header.data(), plan.graph_header.size()));
  for (const InitializerPlan& ip : plan.inits) {
    XONNX_RETURN_IF_ERROR(sink.tag(kGraphInitializerTag));
    XONNX_RETURN_IF_ERROR(sink.varint(static_cast<uint64_t>(ip.field_bytes)));
    XONNX_RETURN_IF_ERROR(sink.write(ip.header.data(), ip.header.size()));
    if (ip.inline_raw) {
      const size_t n = ip.tensor->nbytes();
      XONNX_RETURN_IF_ERROR(sink.tag(kTensorRawDataTag));
      XONNX_RETURN_IF_ERROR(sink.varint(n));
      if (n) XONNX_RETURN_IF_ERROR(sink.write(ip.tensor->raw_data(), n));
    }
  }
  return sink.flush();
}

Status emit_external(const ModelPlan& plan, Sink& sink) {
  for (const InitializerPlan& ip : plan.inits) {
    if (!ip.external) continue;
    XONNX_RETURN_IF_ERROR(sink.zeros(static_cast<size_t>(ip.offset - sink.written())));
    XONNX_RETURN_IF_ERROR(sink.write(ip.tensor->raw_data(), ip.tensor->nbytes()));
  }
  return sink.flush();
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A new file next to `path` (same folder, so rename is atomic), created exclusively: nothing
// that already exists there, link or not, is opened.
int create_temporary(const std::string& path, std::string* temp) {
  static std::atomic<unsigned> counter{0};
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  for (int attempt = 0; attempt < 100; ++attempt) {
    *temp = dir + "." + base_name(path) + ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    const int fd = ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Writes `emit`'s bytes to a temporary file next to `path`; *temp is its name. Removes it
// again if anything fails.
template <typename Emit>
Status write_temporary(const std::string& path, std::string* temp, Emit&& emit) {
  const int fd = create_temporary(path, temp);
  if (fd < 0) return io_error("cannot create a file next to '", path, "': ", std::strerror(errno));
  FileSink sink(fd, path);
  Status s = emit(sink);
  if (::close(fd) != 0 && s.is_ok()) s = io_error("cannot write '", path, "': ", std::strerror(errno));
  if (!s.is_ok()) ::unlink(temp->c_str());
  return s;
}

Status rename_into_place(const std::string& temp, const std::string& path) {
  if (::rename(temp.c_str(), path.c_str()) == 0) return Status::ok();
  const int err = errno;
  ::unlink(temp.c_str());
  return io_error("cannot rename the written file to '", path, "': ", std::strerror(err));
}

bool same_identity(const std::string& path, const FileIdentity& f) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_dev) == f.device &&
         static_cast<uint64_t>(st.st_ino) == f.inode;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

std::string external_data_path(const std::string& path) { return path + ".data"; }

Status check_output_path(const std::string& path, const std::vector<std::string>& protected_paths,
                         const std::vector<FileIdentity>& protected_files) {
  if (path.empty()) return invalid_argument("no output file given");
  const std::string data_path = external_data_path(path);
  for (const FileIdentity& f : protected_files) {
    if (same_identity(path, f)) {
      return invalid_argument("refusing to overwrite '", f.path, "', which the input model reads, with the output '",
                              path, "'");
    }
    if (same_identity(data_path, f)) {
      return invalid_argument("refusing to overwrite '", f.path,
                              "', which the input model reads, with the output's data file '", data_path, "'");
    }
  }
  for (const std::string& p : protected_paths) {
    if (same_file(path, p)) {
      return invalid_argument("refusing to overwrite the input '", p, "' with the output '", path, "'");
    }
    if (same_file(data_path, p)) {
      return invalid_argument("refusing to overwrite the input '", p, "' with the output's data file '", data_path,
                              "'");
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return invalid_argument("output '", path, "' is a directory");
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return not_found("output folder '", dir, "' does not exist");
  }
  return Status::ok();
}

Result<std::string> serialize_model(const Model& model, WriteStats* stats) {
  XONNX_ASSIGN_OR_RETURN(ModelPlan plan, plan_model(model, "", 0));
  if (plan.total_bytes > kMaxInlineProtoBytes) {
    return resource_exhausted("the model needs ", plan.total_bytes,
                              " bytes, over protobuf's 2 GB limit: write it with external data");
  }
  std::string out;
  out.reserve(static_cast<size_t>(plan.total_bytes));
  StringSink sink(&out);
  XONNX_RETURN_IF_ERROR(emit_model(plan, sink));
  if (static_cast<int64_t>(out.size()) != plan.total_bytes) {
    return internal_error("serialized ", out.size(), " bytes, planned ", plan.total_bytes);
  }
  if (stats) *stats = WriteStats{plan.total_bytes, 0, 0, "", false};
  return out;
}

Status write_model(const Model& model, const std::string& path, const WriteOptions& options, WriteStats* stats) {
  XONNX_RETURN_IF_ERROR(check_output_path(path, options.protected_paths, options.protected_files));
  const std::string data_path = external_data_path(path);
  bool external = options.external_data;
  bool forced = false;
  XONNX_ASSIGN_OR_RETURN(ModelPlan plan,
                         plan_model(model, external ? base_name(data_path) : "", options.external_min_bytes));
  if (!external && plan.total_bytes > kMaxInlineProtoBytes) {
    external = forced = true;
    XONNX_ASSIGN_OR_RETURN(plan, plan_model(model, base_name(data_path), options.external_min_bytes));
  }
  if (plan.total_bytes > kMaxInlineProtoBytes) {
    return resource_exhausted("'", path, "': the model without its weights still needs ", plan.total_bytes,
                              " bytes, over protobuf's 2 GB limit");
  }
  const bool write_data = external && plan.external_tensors > 0;
  std::string data_temp, model_temp;
  if (write_data) {
    XONNX_RETURN_IF_ERROR(write_temporary(data_path, &data_temp, [&](Sink& s) { return emit_external(plan, s); }));
  }
  Status s = write_temporary(path, &model_temp, [&](Sink& sink) { return emit_model(plan, sink); });
  if (!s.is_ok()) {
    if (write_data) ::unlink(data_temp.c_str());
    return s;
  }
  // The data file first: once OUT is in place, the data it names is complete.
  if (write_data) {
    s = rename_into_place(data_temp, data_path);
    if (!s.is_ok()) {
      ::unlink(model_temp.c_str());
      return s;
    }
  }
  XONNX_RETURN_IF_ERROR(rename_into_place(model_temp, path));
  if (stats) {
    *stats = WriteStats{plan.total_bytes, write_data ? plan.external_bytes : 0, plan.external_tensors,
                        write_data ? data_path : "", forced};
  }
  return Status::ok();
}

}  // namespace convert
}  // namespace xonnx
