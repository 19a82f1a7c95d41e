// Cast helpers for string tensors (part of the cast family, used by ref/cast.cc).
//  - Numbers print like numpy's str(): shortest digits that round-trip in the source type,
//    positional for 1e-4 <= |v| < 1e16 ("0.1", "3.0", "-0.0"), scientific otherwise
//    ("1e-05", "1.5e+16"); "nan", "inf", "-inf"; bools print "True"/"False".
//  - Strings parse as decimal numbers; float targets accept "NaN", "INF", "+INF", "-inf" ...
//    Integer targets accept integers (and decimals, truncated); bool accepts true/false or
//    a number (non-zero is true).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "runtime/ops/ref/cast_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace cast_detail {
namespace {

// Shortest decimal (digits, exponent X meaning d.ddd x 10^X) whose parse round-trips.
void shortest_digits(double v, int max_digits, const std::function<bool(double)>& roundtrips, std::string* digits,
                     int* exp10) {
  char buf[64];
  for (int p = 1; p <= max_digits; ++p) {
    std::snprintf(buf, sizeof(buf), "%.*e", p - 1, v);
    if (p == max_digits || roundtrips(std::strtod(buf, nullptr))) break;
  }
  // buf = "[-]d.ddde[+-]XX"
  const char* s = buf;
  if (*s == '-') ++s;
  digits->clear();
  for (; *s && *s != 'e'; ++s) {
    if (*s != '.') *digits += *s;
  }
  *exp10 = (*s == 'e') ? std::atoi(s + 1) : 0;
  while (digits->size() > 1 && digits->back() == '0') digits->pop_back();
}

std::string numpy_float_str(double v, int max_digits, const std::function<bool(double)>& rt) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const std::string sign = std::signbit(v) ? "-" : "";
  if (v == 0) return sign + "0.0";
  std::string d;
  int x = 0;
  shortest_digits(v, max_digits, rt, &d, &x);
  const double a = std::fabs(v);
  std::string out = sign;
  if (a >= 1e-4 && a < 1e16) {
    if (x >= 0) {
      const size_t int_len = static_cast<size_t>(x) + 1;
      if (d.size() <= int_len) {
        out += d + std::string(int_len - d.size(), '0') + ".0";
      } else {
        out += d.substr(0, int_len) + "." + d.substr(int_len);
      }
    } else {
      out += "0." + std::string(static_cast<size_t>(-x - 1), '0') + d;
    }
    return out;
  }
  out += d.substr(0, 1);
  if (d.size() > 1) out += "." + d.substr(1);
  char e[16];
  std::snprintf(e, sizeof(e), "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
  return out + e;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool parse_double(const std::string& t, double* d) {
  if (t.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *d = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size();
}

}  // namespace

std::string format_number(const Tensor& x, int64_t i) {
  const DataType t = x.dtype();
  switch (t) {
    case DataType::kBool: return x.data<bool>()[i] ? "True" : "False";
    case DataType::kUint64: return std::to_string(x.data<uint64_t>()[i]);
    case DataType::kFloat: {
      const float v = x.data<float>()[i];
      return numpy_float_str(v, 9, [v](double p) { return static_cast<float>(p) == v; });
    }
    case DataType::kDouble: {
      const double v = x.data<double>()[i];
      return numpy_float_str(v, 17, [v](double p) { return p == v; });
    }
    case DataType::kFloat16: {
      const uint16_t bits = x.data<uint16_t>()[i];
      return numpy_float_str(half_to_float(bits), 5,
                             [bits](double p) { return float_to_half(static_cast<float>(p)) == bits; });
    }
    case DataType::kBFloat16: {
      const uint16_t bits = x.data<uint16_t>()[i];
      return numpy_float_str(bfloat16_to_float(bits), 4,
                             [bits](double p) { return float_to_bfloat16(static_cast<float>(p)) == bits; });
    }
    default: break;
  }
  if (dtype_is_integer(t)) return std::to_string(x.get_as_int64(i));
  // float8 / float4 / e8m0: shortest digits that map back to the same value.
  const double v = x.get_as_double(i);
  return numpy_float_str(v, 9, [v](double p) { return static_cast<float>(p) == static_cast<float>(v); });
}

Status parse_string(const std::string& s, DataType to, int* kind, float* f, double* d, int64_t* i, uint64_t* u) {
  const std::string t = trim(s);
  if (to == DataType::kFloat) {
    char* end = nullptr;
    *f = std::strtof(t.c_str(), &end);
    if (t.empty() || end != t.c_str() + t.size()) {
      return invalid_argument("Cast: cannot parse string '", s, "' as float");
    }
    *kind = 0;
    return Status::ok();
  }
  if (to == DataType::kBool) {
    std::string lower;
    for (char c : t) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    *kind = 2;
    if (lower == "true") {
      *i = 1;
      return Status::ok();
    }
    if (lower == "false") {
      *i = 0;
      return Status::ok();
    }
    if (!parse_double(t, d)) return invalid_argument("Cast: cannot parse string '", s, "' as bool");
    *i = (*d != 0.0) ? 1 : 0;  // NaN is true
    return Status::ok();
  }
  if (dtype_is_integer(to)) {
    if (!t.empty()) {
      char* end = nullptr;
      errno = 0;
      const long long v = std::strtoll(t.c_str(), &end, 10);
      if (end == t.c_str() + t.size() && errno == 0) {
        *kind = 2;
        *i = v;
        return Status::ok();
      }
      if (t[0] != '-') {
        errno = 0;
        const unsigned long long uv = std::strtoull(t.c_str(), &end, 10);
        if (end == t.c_str() + t.size() && errno == 0) {
          *kind = 3;
          *u = uv;
          return Status::ok();
        }
      }
    }
    if (!parse_double(t, d)) {
      return invalid_argument("Cast: cannot parse string '", s, "' as ", dtype_name(to));
    }
    *kind = 1;
    return Status::ok();
  }
  if (!parse_double(t, d)) {
    return invalid_argument("Cast: cannot parse string '", s, "' as ", dtype_name(to));
  }
  *kind = 1;
  return Status::ok();
}

}  // namespace cast_detail
}  // namespace xonnx
