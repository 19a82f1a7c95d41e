#include "runtime/ops/common/conv_geometry.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace xonnx {

bool ConvGeometry::pads_for(int64_t h, int64_t w, std::array<int64_t, 4>& pads) const {
  const int64_t in[2] = {h, w}, k[2] = {kh, kw}, s[2] = {sh, sw}, d[2] = {dh, dw};
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  for (int i = 0; i < 2; ++i) {
    const int64_t ek = (k[i] - 1) * d[i] + 1;
    if (same) {
      const int64_t out = (in[i] + s[i] - 1) / s[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * s[i] + ek - in[i]);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
    } else {
      pads[i] = explicit_pads[i];
      pads[i + 2] = explicit_pads[i + 2];
    }
    if (in[i] + pads[i] + pads[i + 2] < ek) return false;
  }
  return true;
}

namespace {

// The checks and the geometry of a 2-D node from its attribute lists (2 strides, 2
// dilations, 4 pads) and 4-D weights `ws`.
Result<ConvGeometry> geometry_2d(std::string auto_pad, int64_t group, const std::vector<int64_t>& ks,
                                 const std::vector<int64_t>& strides, const std::vector<int64_t>& dil,
                                 const std::vector<int64_t>& pads, const Shape& ws, const char* what) {
  if (ws.size() != 4) return unsupported(what, ": only 2-D");
  if (group < 1 || ws[0] % group != 0) return unsupported(what, ": bad group");
  if (!ks.empty() && (ks.size() != 2 || ks[0] != ws[2] || ks[1] != ws[3]))
    return unsupported(what, ": kernel_shape does not match W");
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) return unsupported(what, ": only 2-D");
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max() / 4;
  for (int64_t v : {strides[0], strides[1], dil[0], dil[1], ws[0], ws[1], ws[2], ws[3]})
    if (v < 1 || v > kMax) return unsupported(what, ": attribute out of range");
  for (int64_t v : pads)
    if (v < 0 || v > kMax) return unsupported(what, ": pads out of range");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return unsupported(what, ": auto_pad ", auto_pad);
  ConvGeometry geo;
  geo.auto_pad = std::move(auto_pad);
  geo.kh = ws[2];
  geo.kw = ws[3];
  geo.sh = strides[0];
  geo.sw = strides[1];
  geo.dh = dil[0];
  geo.dw = dil[1];
  if (geo.auto_pad == "NOTSET") geo.explicit_pads = {pads[0], pads[1], pads[2], pads[3]};
  return geo;
}

}  // namespace

Result<ConvGeometry> ConvGeometry::parse(const KernelInit& init, const Shape& ws, int64_t& group, const char* what,
                                         const std::string& prefix) {
  XONNX_ASSIGN_OR_RETURN(std::string auto_pad, init.get_string(prefix + "auto_pad", "NOTSET"));
  XONNX_ASSIGN_OR_RETURN(group, init.get_int(prefix + "group", 1));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> ks, init.get_ints(prefix + "kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> strides, init.get_ints(prefix + "strides", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> dil, init.get_ints(prefix + "dilations", {1, 1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, init.get_ints(prefix + "pads", {0, 0, 0, 0}));
  return geometry_2d(std::move(auto_pad), group, ks, strides, dil, pads, ws, what);
}

Result<ConvGeometry> ConvGeometry::parse_1d(const KernelInit& init, const Shape& ws, int64_t& group, const char* what) {
  XONNX_ASSIGN_OR_RETURN(std::string auto_pad, init.get_string("auto_pad", "NOTSET"));
  XONNX_ASSIGN_OR_RETURN(group, init.get_int("group", 1));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> ks, init.get_ints("kernel_shape"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> strides, init.get_ints("strides", {1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> dil, init.get_ints("dilations", {1}));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pads, init.get_ints("pads", {0, 0}));
  if (ws.size() != 3 || strides.size() != 1 || dil.size() != 1 || pads.size() != 2 || ks.size() > 1)
    return unsupported(what, ": only 1-D");
  if (!ks.empty()) ks.insert(ks.begin(), 1);
  return geometry_2d(std::move(auto_pad), group, ks, {1, strides[0]}, {1, dil[0]}, {0, pads[0], 0, pads[1]},
                     {ws[0], ws[1], 1, ws[2]}, what);
}

bool ConvGeometry::fixed_pads(std::array<int64_t, 4>& pads) const {
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (same && (sh != 1 || sw != 1)) return false;
  pads = explicit_pads;
  if (same) {  // stride 1: the total padding is the dilated kernel extent - 1
    const int64_t th = (kh - 1) * dh, tw = (kw - 1) * dw;
    const bool upper = auto_pad == "SAME_UPPER";
    pads = {upper ? th / 2 : th - th / 2, upper ? tw / 2 : tw - tw / 2, 0, 0};
    pads[2] = th - pads[0];
    pads[3] = tw - pads[1];
  }
  return true;
}

}  // namespace xonnx
