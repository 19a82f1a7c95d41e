// The conversion report (markdown): summary, per-pass table, op histogram before/after,
// dedup merges, folding limits and other warnings, and the verification if it ran.
#pragma once

#include <string>

#include "converter/convert.h"

namespace xonnx {
namespace convert {

std::string make_report(const ConvertResult& result);

// `s` as a markdown table cell: '|' escaped, newlines as spaces.
std::string markdown_cell(const std::string& s);

// "57.3 MB", "12.0 KB", "512 B".
std::string human_bytes(int64_t bytes);

}  // namespace convert
}  // namespace xonnx
