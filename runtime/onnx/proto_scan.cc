#include "runtime/onnx/proto_scan.h"

#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <limits>

namespace xonnx {
namespace {

constexpr int kModelGraphField = 7;
constexpr int kGraphInitializerField = 5;
constexpr int kTensorRawDataField = 9;
constexpr int kModelFunctionsField = 25;
constexpr int kGraphNodeField = 1;
constexpr int kFunctionNodeField = 7;
constexpr int kNodeAttributeField = 5;
constexpr int kAttributeGraphField = 6;
constexpr int kAttributeGraphsField = 11;

struct Field {
  uint32_t number = 0;
  int wire_type = 0;
  const uint8_t* begin = nullptr;    // start of the whole field (tag included)
  const uint8_t* payload = nullptr;  // for length-delimited fields: the bytes
  size_t payload_size = 0;
  const uint8_t* end = nullptr;
};

class WireReader {
 public:
  WireReader(const uint8_t* p, const uint8_t* end, const uint8_t* base) : p_(p), end_(end), base_(base) {}
  bool done() const { return p_ >= end_; }
  size_t offset() const { return static_cast<size_t>(p_ - base_); }

  // Reads the next field; false (with *error) on truncated or malformed bytes.
  bool next(Field* f, std::string* error) {
    f->begin = p_;
    uint64_t tag;
    if (!varint(&tag)) return fail(error, "truncated field tag");
    f->number = static_cast<uint32_t>(tag >> 3);
    f->wire_type = static_cast<int>(tag & 7);
    if (f->number == 0) return fail(error, "invalid field number 0");
    switch (f->wire_type) {
      case 0: {
        uint64_t v;
        if (!varint(&v)) return fail(error, "truncated varint");
        break;
      }
      case 1:
        if (end_ - p_ < 8) return fail(error, "truncated fixed64");
        p_ += 8;
        break;
      case 5:
        if (end_ - p_ < 4) return fail(error, "truncated fixed32");
        p_ += 4;
        break;
      case 2: {
        uint64_t len;
        if (!varint(&len)) return fail(error, "truncated length");
        if (len > static_cast<uint64_t>(end_ - p_)) {
          return fail(error, "length-delimited field " + std::to_string(f->number) + " of " + std::to_string(len) +
                                 " bytes runs past the end of its message");
        }
        f->payload = p_;
        f->payload_size = static_cast<size_t>(len);
        p_ += len;
        break;
      }
      default: return fail(error, "unsupported wire type " + std::to_string(f->wire_type));
    }
    f->end = p_;
    return true;
  }

 private:
  bool varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return false;
      const uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *out = v;
        return true;
      }
    }
    return false;
  }
  bool fail(std::string* error, const std::string& msg) {
    *error = msg + " at byte " + std::to_string(offset());
    return false;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* base_;
};

// The deepest graph nesting under a message whose nodes are field `node_field` (a GraphProto:
// 1, a FunctionProto: 7), counting this one as `depth`; stops looking past `limit` (so the
// recursion here stays shallow). Malformed bytes end the walk: the parse reports them.
int nesting_depth(const uint8_t* p, size_t n, uint32_t node_field, int depth, int limit) {
  if (depth > limit) return depth;
  int deepest = depth;
  std::string error;
  WireReader graph(p, p + n, p);
  Field node;
  while (!graph.done() && graph.next(&node, &error)) {
    if (node.number != node_field || node.wire_type != 2) continue;
    WireReader node_reader(node.payload, node.payload + node.payload_size, p);
    Field attr;
    while (!node_reader.done() && node_reader.next(&attr, &error)) {
      if (attr.number != kNodeAttributeField || attr.wire_type != 2) continue;
      WireReader attr_reader(attr.payload, attr.payload + attr.payload_size, p);
      Field g;
      while (!attr_reader.done() && attr_reader.next(&g, &error)) {
        if ((g.number != kAttributeGraphField && g.number != kAttributeGraphsField) || g.wire_type != 2) continue;
        deepest = std::max(deepest, nesting_depth(g.payload, g.payload_size, kGraphNodeField, depth + 1, limit));
        if (deepest > limit) return deepest;
      }
    }
  }
  return deepest;
}

// Protobuf's default recursion limit (100 messages) allows about 32 levels of subgraphs (3
// messages each); the limit follows max_nesting_depth, which nesting_depth() enforced first.
int recursion_limit(int max_nesting_depth) { return std::max(100, 3 * max_nesting_depth + 40); }

template <typename Proto>
bool parse_proto(Proto* proto, const std::string& bytes, int max_nesting_depth = 0) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetRecursionLimit(recursion_limit(max_nesting_depth));
  return proto->ParseFromCodedStream(&in);
}

}  // namespace

Result<ScannedModel> scan_model(const void* data, size_t size, const std::string& what, int max_nesting_depth) {
  const auto* base = static_cast<const uint8_t*>(data);
  ScannedModel out;
  std::string model_rest;
  std::string graph_rest;
  bool have_graph = false;
  std::string error;

  WireReader model_reader(base, base + size, base);
  Field f;
  while (!model_reader.done()) {
    if (!model_reader.next(&f, &error)) {
      return invalid_model(what, ": malformed or truncated protobuf (ModelProto): ", error);
    }
    const bool is_function = f.number == kModelFunctionsField && f.wire_type == 2;
    if (is_function || (f.number == kModelGraphField && f.wire_type == 2)) {
      // Checked before protobuf parses it: 10,000 nested Ifs would only fail its recursion
      // limit, as "malformed".
      const int depth = nesting_depth(f.payload, f.payload_size, is_function ? kFunctionNodeField : kGraphNodeField, 0,
                                      max_nesting_depth);
      if (depth > max_nesting_depth) {
        return invalid_model(what, ": subgraphs (If/Loop/Scan bodies) nested more than ", max_nesting_depth,
                             " deep in the model's ", is_function ? "functions" : "graph", " (max_nesting_depth)");
      }
    }
    if (f.number != kModelGraphField || f.wire_type != 2) {
      model_rest.append(reinterpret_cast<const char*>(f.begin), f.end - f.begin);
      continue;
    }
    have_graph = true;
    // Protobuf merges repeated occurrences of a message field: so do we.
    WireReader graph_reader(f.payload, f.payload + f.payload_size, base);
    Field g;
    while (!graph_reader.done()) {
      if (!graph_reader.next(&g, &error)) {
        return invalid_model(what, ": malformed or truncated protobuf (GraphProto): ", error);
      }
      if (g.number != kGraphInitializerField || g.wire_type != 2) {
        graph_rest.append(reinterpret_cast<const char*>(g.begin), g.end - g.begin);
        continue;
      }
      ScannedInitializer init;
      std::string tensor_rest;
      WireReader tensor_reader(g.payload, g.payload + g.payload_size, base);
      Field t;
      while (!tensor_reader.done()) {
        if (!tensor_reader.next(&t, &error)) {
          return invalid_model(what, ": malformed or truncated protobuf (initializer ", out.initializers.size(),
                               "): ", error);
        }
        if (t.number == kTensorRawDataField && t.wire_type == 2) {
          init.raw = t.payload;  // last occurrence wins, as in protobuf
          init.raw_size = t.payload_size;
        } else {
          tensor_rest.append(reinterpret_cast<const char*>(t.begin), t.end - t.begin);
        }
      }
      if (!parse_proto(&init.proto, tensor_rest)) {
        return invalid_model(what, ": malformed protobuf in initializer ", out.initializers.size());
      }
      out.initializers.push_back(std::move(init));
    }
  }
  if (!parse_proto(&out.model, model_rest, max_nesting_depth)) {
    return invalid_model(what, ": malformed or truncated protobuf: not a valid ModelProto");
  }
  if (have_graph && !parse_proto(out.model.mutable_graph(), graph_rest, max_nesting_depth)) {
    return invalid_model(what, ": malformed protobuf in the model's GraphProto");
  }
  return out;
}

}  // namespace xonnx
