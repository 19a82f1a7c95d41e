#include "sdk/cli/npy.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "platforms/posix/safe_open.h"

namespace xonnx {
namespace cli {
namespace {

struct NpyType {
  const char* descr;
  DataType dtype;
};
const NpyType kTypes[] = {
    {"<f4", DataType::kFloat},  {"<f8", DataType::kDouble}, {"<f2", DataType::kFloat16}, {"|i1", DataType::kInt8},
    {"|u1", DataType::kUint8},  {"<i2", DataType::kInt16},  {"<u2", DataType::kUint16},  {"<i4", DataType::kInt32},
    {"<u4", DataType::kUint32}, {"<i8", DataType::kInt64},  {"<u8", DataType::kUint64},  {"|b1", DataType::kBool},
};

// Value of `key` in the header dict, e.g. 'descr': '<f4' -> <f4.
std::string header_field(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t p = header.find(':', k);
  if (p == std::string::npos) return "";
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  if (p < header.size() && header[p] == '(') {
    const size_t e = header.find(')', p);
    return e == std::string::npos ? "" : header.substr(p + 1, e - p - 1);
  }
  if (p < header.size() && header[p] == '\'') {
    const size_t e = header.find('\'', p + 1);
    return e == std::string::npos ? "" : header.substr(p + 1, e - p - 1);
  }
  const size_t e = header.find_first_of(",}", p);
  return header.substr(p, e - p);
}

}  // namespace

Result<Tensor> read_npy(const std::string& path, int64_t max_bytes) {
  std::string bytes, error;
  UniqueFd fd = open_regular_file(path, &error);  // a FIFO fails instead of blocking
  if (!fd.valid()) return not_found(error);
  if (!read_whole_file(fd.get(), path, std::numeric_limits<int64_t>::max(), &bytes, &error)) {
    return io_error(error);
  }
  return parse_npy(bytes.data(), bytes.size(), path, max_bytes);
}

Result<Tensor> parse_npy(const void* data, size_t size, const std::string& path, int64_t max_bytes) {
  const std::string bytes(static_cast<const char*>(data), size);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    return invalid_argument(path, ": not a .npy file");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else {
    if (bytes.size() < 12) return invalid_argument(path, ": truncated .npy header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  }
  if (header_start + header_len > bytes.size()) return invalid_argument(path, ": truncated .npy header");
  const std::string header = bytes.substr(header_start, header_len);
  const std::string descr = header_field(header, "descr");
  if (header_field(header, "fortran_order").find("True") != std::string::npos) {
    return unsupported(path, ": Fortran-order arrays are not supported");
  }
  DataType dtype = DataType::kUndefined;
  for (const NpyType& t : kTypes) {
    if (descr == t.descr) dtype = t.dtype;
  }
  if (dtype == DataType::kUndefined) return unsupported(path, ": unsupported .npy dtype '", descr, "'");
  Shape shape;
  std::stringstream dims(header_field(header, "shape"));
  std::string item;
  while (std::getline(dims, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    try {
      const long long d = std::stoll(item);
      if (d < 0) return invalid_argument(path, ": negative dimension in .npy shape");
      shape.push_back(d);
    } catch (...) {
      return invalid_argument(path, ": bad .npy shape '", header_field(header, "shape"), "'");
    }
  }
  // The header's claim is checked against the data the file holds before anything is
  // allocated: an 82-byte file must not ask for gigabytes.
  const int64_t numel = shape_numel(shape);
  const int64_t needed = numel < 0 ? -1 : dtype_storage_bytes(dtype, numel);
  const size_t data_start = header_start + header_len;
  const size_t have = bytes.size() - data_start;
  if (needed < 0 || static_cast<uint64_t>(needed) != have) {
    return invalid_argument(path, ": data has ", have, " bytes, but shape ", shape_to_string(shape), " ",
                            dtype_name(dtype), " needs ",
                            needed < 0 ? std::string("more than 2^63") : std::to_string(needed));
  }
  if (needed > max_bytes) {
    return resource_exhausted(path, ": ", needed, " bytes of data, over the memory cap of ", max_bytes, " bytes");
  }
  XONNX_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, shape));
  if (t.nbytes()) std::memcpy(t.raw_data(), bytes.data() + data_start, t.nbytes());
  if (dtype == DataType::kBool) {  // numpy writes 0/1, but any other byte must still mean true
    auto* b = static_cast<uint8_t*>(t.raw_data());
    for (size_t i = 0; i < t.nbytes(); ++i) b[i] = b[i] != 0;
  }
  return t;
}

Status write_npy(const std::string& path, const Tensor& tensor) {
  const char* descr = nullptr;
  for (const NpyType& t : kTypes) {
    if (t.dtype == tensor.dtype()) descr = t.descr;
  }
  Tensor data = tensor;
  if (!descr && tensor.dtype() == DataType::kBFloat16) {
    // numpy has no bfloat16: widen to float32.
    XONNX_ASSIGN_OR_RETURN(data, Tensor::allocate(DataType::kFloat, tensor.shape()));
    for (int64_t i = 0; i < tensor.numel(); ++i) data.data<float>()[i] = static_cast<float>(tensor.get_as_double(i));
    descr = "<f4";
  }
  if (!descr) return unsupported("cannot write ", dtype_name(tensor.dtype()), " tensors as .npy");
  std::string shape = "(";
  for (size_t i = 0; i < data.rank(); ++i)
    shape += std::to_string(data.dim(i)) + (data.rank() == 1 ? ",)" : (i + 1 == data.rank() ? ")" : ", "));
  if (data.rank() == 0) shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out) return io_error("cannot write '", path, "'");
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data.raw_data()), static_cast<std::streamsize>(data.nbytes()));
  if (!out) return io_error("failed writing '", path, "'");
  return Status::ok();
}

}  // namespace cli
}  // namespace xonnx
