// Reference kernels: string ops (StringNormalizer, StringConcat, StringSplit, RegexFullMatch).
// Registered from register_misc_ops (misc.cc).
#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_set>
#include <vector>

#include <re2/re2.h>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/misc_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

Status require_strings(const Tensor& t, const char* what) {
  if (!t.defined()) return invalid_argument(what, " is required");
  if (t.dtype() != DataType::kString) {
    return invalid_argument(what, " must be a string tensor, got ", dtype_name(t.dtype()));
  }
  return Status::ok();
}

std::string ascii_lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string ascii_upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// ---------------------------------------------------------------------------------------
// StringNormalizer (opset 10)

Result<std::unique_ptr<Kernel>> create_string_normalizer(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::string action, init.get_string("case_change_action", "NONE"));
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return invalid_model("case_change_action must be NONE, LOWER or UPPER, got '", action, "'");
  }
  XONNX_ASSIGN_OR_RETURN(int64_t sensitive_i, init.get_int("is_case_sensitive", 0));
  XONNX_ASSIGN_OR_RETURN(std::vector<std::string> stopwords, init.get_strings("stopwords"));
  const bool sensitive = sensitive_i != 0;
  std::unordered_set<std::string> stops;
  for (const std::string& w : stopwords) stops.insert(sensitive ? w : ascii_lower(w));
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(require_strings(x, "X"));
    const bool two_d = x.rank() == 2;
    if (!(x.rank() == 1 || (two_d && x.dim(0) == 1))) {
      return invalid_argument("X must have shape [C] or [1, C], got ", shape_to_string(x.shape()));
    }
    std::vector<std::string> kept;
    const std::string* in = x.string_data();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string& s = in[i];
      if (!stops.empty() && stops.count(sensitive ? s : ascii_lower(s))) continue;
      if (action == "LOWER") {
        kept.push_back(ascii_lower(s));
      } else if (action == "UPPER") {
        kept.push_back(ascii_upper(s));
      } else {
        kept.push_back(s);
      }
    }
    if (kept.empty()) kept.push_back("");  // the spec's "empty output" is one empty string
    const int64_t n = static_cast<int64_t>(kept.size());
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kString, two_d ? Shape{1, n} : Shape{n}));
    std::copy(kept.begin(), kept.end(), y->string_data());
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// StringConcat (opset 20)

Result<std::unique_ptr<Kernel>> create_string_concat(const KernelInit& init) {
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    XONNX_RETURN_IF_ERROR(require_strings(a, "X"));
    XONNX_RETURN_IF_ERROR(require_strings(b, "Y"));
    XONNX_ASSIGN_OR_RETURN(Shape out_shape, ref::broadcast_shapes(a.shape(), b.shape()));
    XONNX_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(0, DataType::kString, out_shape));
    const std::string* pa = a.string_data();
    const std::string* pb = b.string_data();
    std::string* out = z->string_data();
    ref::for_each_broadcast(out_shape, {a.shape(), b.shape()},
                            [&](int64_t o, const std::vector<int64_t>& off) { out[o] = pa[off[0]] + pb[off[1]]; });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// StringSplit (opset 20)

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Python str.split(None, maxsplit): runs of whitespace separate, no empty pieces.
std::vector<std::string> split_whitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = 0;
  const size_t n = s.size();
  while (true) {
    while (i < n && is_space(s[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
      // the remainder keeps its inner and trailing whitespace
      out.push_back(s.substr(i));
      break;
    }
    size_t j = i;
    while (j < n && !is_space(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Python str.split(sep, maxsplit).
std::vector<std::string> split_delim(const std::string& s, const std::string& delim, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) break;
    const size_t pos = s.find(delim, start);
    if (pos == std::string::npos) break;
    out.push_back(s.substr(start, pos - start));
    start = pos + delim.size();
  }
  out.push_back(s.substr(start));
  return out;
}

Result<std::unique_ptr<Kernel>> create_string_split(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::string delimiter, init.get_string("delimiter", ""));
  int64_t maxsplit = -1;
  if (init.has_attr("maxsplit")) {
    XONNX_ASSIGN_OR_RETURN(maxsplit, init.get_int("maxsplit", -1));
    if (maxsplit < 0) return invalid_model("maxsplit must be non-negative, got ", maxsplit);
  }
  return make_kernel([=](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(require_strings(x, "X"));
    const int64_t n = x.numel();
    std::vector<std::vector<std::string>> parts(static_cast<size_t>(n));
    int64_t widest = 0;
    const std::string* in = x.string_data();
    for (int64_t i = 0; i < n; ++i) {
      parts[i] = delimiter.empty() ? split_whitespace(in[i], maxsplit) : split_delim(in[i], delimiter, maxsplit);
      widest = std::max<int64_t>(widest, static_cast<int64_t>(parts[i].size()));
    }
    Shape yshape = x.shape();
    yshape.push_back(widest);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kString, yshape));
    std::string* out = y->string_data();
    for (int64_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < parts[i].size(); ++k) out[i * widest + static_cast<int64_t>(k)] = parts[i][k];
    }
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      XONNX_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DataType::kInt64, x.shape()));
      int64_t* counts = z->data<int64_t>();
      for (int64_t i = 0; i < n; ++i) counts[i] = static_cast<int64_t>(parts[i].size());
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// RegexFullMatch (opset 20). The spec names RE2 syntax, and RE2 matches in linear time: a
// pattern like (a+)+$ cannot make a run backtrack for hours, as std::regex would.

Result<std::unique_ptr<Kernel>> create_regex_full_match(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(std::string pattern, init.require_string("pattern"));
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<RE2>(pattern, options);
  if (!re->ok()) {
    return invalid_model("pattern '", pattern, "' is not a valid RE2 regular expression: ", re->error());
  }
  return make_kernel([re](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_RETURN_IF_ERROR(require_strings(x, "X"));
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kBool, x.shape()));
    const std::string* in = x.string_data();
    bool* out = y->data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = RE2::FullMatch(in[i], *re);
    return Status::ok();
  });
}

}  // namespace

void register_misc_string_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "StringNormalizer", 10, kLatestVersion, create_string_normalizer);
  XONNX_REGISTER(registry, "", "StringConcat", 20, kLatestVersion, create_string_concat);
  XONNX_REGISTER(registry, "", "StringSplit", 20, kLatestVersion, create_string_split);
  XONNX_REGISTER(registry, "", "RegexFullMatch", 20, kLatestVersion, create_regex_full_match);
}

}  // namespace xonnx
