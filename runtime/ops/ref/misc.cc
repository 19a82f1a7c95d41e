// Reference kernels: misc family (NonMaxSuppression, BitCast, TfIdfVectorizer).
// String ops live in misc_strings.cc and ai.onnx.ml ops in misc_ml.cc; all are registered
// from register_misc_ops below.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/misc_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {

namespace {

// ---------------------------------------------------------------------------------------
// NonMaxSuppression (opset 10, 11)

struct Corners {
  double x_min, x_max, y_min, y_max;
};

Corners box_corners(const double* b, bool center) {
  Corners c;
  if (center) {
    // [x_center, y_center, width, height]
    c.x_min = b[0] - b[2] / 2;
    c.x_max = b[0] + b[2] / 2;
    c.y_min = b[1] - b[3] / 2;
    c.y_max = b[1] + b[3] / 2;
  } else {
    // [y1, x1, y2, x2], either diagonal pair
    c.y_min = std::min(b[0], b[2]);
    c.y_max = std::max(b[0], b[2]);
    c.x_min = std::min(b[1], b[3]);
    c.x_max = std::max(b[1], b[3]);
  }
  return c;
}

bool suppress_by_iou(const Corners& a, const Corners& b, double iou_threshold) {
  const double ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const double iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const double inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0) return false;
  const double area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const double area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const double uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

Result<std::unique_ptr<Kernel>> create_nms(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t cpb, init.get_int("center_point_box", 0));
  if (cpb != 0 && cpb != 1) return invalid_model("center_point_box must be 0 or 1, got ", cpb);
  const bool center = cpb == 1;
  return make_kernel([center](KernelContext& ctx) -> Status {
    const Tensor& boxes = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    if (!boxes.defined() || !scores.defined()) return invalid_argument("boxes and scores are required");
    if (!dtype_is_float(boxes.dtype()) || !dtype_is_float(scores.dtype())) {
      return invalid_argument("boxes and scores must be float tensors");
    }
    if (boxes.rank() != 3 || boxes.dim(2) != 4) {
      return invalid_argument("boxes must be [num_batches, num_boxes, 4], got ", shape_to_string(boxes.shape()));
    }
    const int64_t nb = boxes.dim(0), nboxes = boxes.dim(1);
    if (scores.rank() != 3 || scores.dim(0) != nb || scores.dim(2) != nboxes) {
      return invalid_argument("scores must be [", nb, ", num_classes, ", nboxes, "], got ",
                              shape_to_string(scores.shape()));
    }
    const int64_t nc = scores.dim(1);
    int64_t max_out = 0;
    double iou_th = 0.0, score_th = 0.0;
    bool has_score_th = false;
    if (ctx.num_inputs() > 2 && ctx.has_input(2) && ctx.input(2).numel() > 0) {
      if (!dtype_is_integer(ctx.input(2).dtype())) {
        return invalid_argument("max_output_boxes_per_class must be an integer tensor");
      }
      max_out = std::max<int64_t>(0, ctx.input(2).get_as_int64(0));
    }
    if (ctx.num_inputs() > 3 && ctx.has_input(3) && ctx.input(3).numel() > 0) {
      iou_th = ctx.input(3).get_as_double(0);
      if (iou_th < 0 || iou_th > 1) {
        return invalid_argument("iou_threshold must be in [0, 1], got ", iou_th);
      }
    }
    if (ctx.num_inputs() > 4 && ctx.has_input(4) && ctx.input(4).numel() > 0) {
      score_th = ctx.input(4).get_as_double(0);
      has_score_th = true;
    }
    std::vector<double> B(static_cast<size_t>(boxes.numel()));
    for (int64_t i = 0; i < boxes.numel(); ++i) B[i] = boxes.get_as_double(i);
    std::vector<int64_t> selected;  // triples
    std::vector<std::pair<double, int64_t>> cand;
    std::vector<int64_t> chosen;
    for (int64_t b = 0; b < nb && max_out > 0; ++b) {
      std::vector<Corners> corners(static_cast<size_t>(nboxes));
      for (int64_t i = 0; i < nboxes; ++i) corners[i] = box_corners(B.data() + (b * nboxes + i) * 4, center);
      for (int64_t c = 0; c < nc; ++c) {
        cand.clear();
        for (int64_t i = 0; i < nboxes; ++i) {
          const double s = scores.get_as_double((b * nc + c) * nboxes + i);
          if (!has_score_th || s > score_th) cand.emplace_back(s, i);
        }
        // highest score first; equal scores: lower box index first
        std::stable_sort(cand.begin(), cand.end(), [](const auto& l, const auto& r) { return l.first > r.first; });
        chosen.clear();
        for (const auto& [s, idx] : cand) {
          if (static_cast<int64_t>(chosen.size()) >= max_out) break;
          bool keep = true;
          for (int64_t prev : chosen) {
            if (suppress_by_iou(corners[idx], corners[prev], iou_th)) {
              keep = false;
              break;
            }
          }
          if (!keep) continue;
          chosen.push_back(idx);
          selected.insert(selected.end(), {b, c, idx});
        }
      }
    }
    const int64_t n = static_cast<int64_t>(selected.size() / 3);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kInt64, {n, 3}));
    std::copy(selected.begin(), selected.end(), y->data<int64_t>());
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// BitCast (opset 26)

Result<std::unique_ptr<Kernel>> create_bitcast(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(int64_t to_i, init.require_int("to"));
  if (to_i <= 0 || !dtype_is_known(static_cast<int32_t>(to_i))) {
    return invalid_model("'to' = ", to_i, " is not a valid data type");
  }
  const DataType to = static_cast<DataType>(to_i);
  if (to == DataType::kString) return invalid_model("BitCast to string is not allowed");
  return make_kernel([to](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DataType::kString) return invalid_argument("BitCast of a string tensor is not allowed");
    if (dtype_bits(x.dtype()) != dtype_bits(to) || dtype_bits(to) <= 0) {
      return invalid_argument("BitCast from ", dtype_name(x.dtype()), " (", dtype_bits(x.dtype()), " bits) to ",
                              dtype_name(to), " (", dtype_bits(to), " bits) needs equal bit widths");
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, to, x.shape()));
    const size_t bytes = x.nbytes();
    if (bytes > 0) std::memcpy(y->raw_data(), x.raw_data(), bytes);
    if (to == DataType::kBool) {
      // a bool byte must be 0 or 1; any non-zero bit pattern reads as true
      auto* p = static_cast<uint8_t*>(y->raw_data());
      for (size_t i = 0; i < bytes; ++i) p[i] = p[i] != 0;
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// TfIdfVectorizer (opset 9)

enum class TfIdfMode { kTf, kIdf, kTfIdf };

struct TfIdfConfig {
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  TfIdfMode mode = TfIdfMode::kTf;
  bool strings = false;
  std::map<std::vector<int64_t>, int64_t> int_grams;
  std::map<std::vector<std::string>, int64_t> str_grams;
  std::vector<float> weights;
  int64_t out_size = 0;
};

Result<std::unique_ptr<Kernel>> create_tfidf(const KernelInit& init) {
  auto cfg = std::make_shared<TfIdfConfig>();
  XONNX_ASSIGN_OR_RETURN(cfg->min_gram, init.require_int("min_gram_length"));
  XONNX_ASSIGN_OR_RETURN(cfg->max_gram, init.require_int("max_gram_length"));
  XONNX_ASSIGN_OR_RETURN(cfg->max_skip, init.require_int("max_skip_count"));
  if (cfg->min_gram < 1 || cfg->max_gram < cfg->min_gram || cfg->max_skip < 0) {
    return invalid_model("need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0 (got ", cfg->min_gram,
                         ", ", cfg->max_gram, ", ", cfg->max_skip, ")");
  }
  XONNX_ASSIGN_OR_RETURN(std::string mode, init.require_string("mode"));
  if (mode == "TF")
    cfg->mode = TfIdfMode::kTf;
  else if (mode == "IDF")
    cfg->mode = TfIdfMode::kIdf;
  else if (mode == "TFIDF")
    cfg->mode = TfIdfMode::kTfIdf;
  else
    return invalid_model("mode must be TF, IDF or TFIDF, got '", mode, "'");
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> counts, init.get_ints("ngram_counts"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> indexes, init.get_ints("ngram_indexes"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> pool_i, init.get_ints("pool_int64s"));
  XONNX_ASSIGN_OR_RETURN(std::vector<std::string> pool_s, init.get_strings("pool_strings"));
  XONNX_ASSIGN_OR_RETURN(cfg->weights, init.get_floats("weights"));
  cfg->strings = init.has_attr("pool_strings");
  if (cfg->strings == init.has_attr("pool_int64s")) {
    return invalid_model("exactly one of pool_strings and pool_int64s must be given");
  }
  // The output is as wide as the largest index asks (every entry, also those past the pool's).
  for (int64_t v : indexes) {
    if (v < 0 || v == INT64_MAX) return invalid_model("ngram_indexes contains index ", v, " outside [0, 2^63 - 1)");
    cfg->out_size = std::max(cfg->out_size, v + 1);
  }
  const int64_t pool_size = static_cast<int64_t>(cfg->strings ? pool_s.size() : pool_i.size());
  int64_t gram_no = 0;
  for (size_t n = 1; n <= counts.size(); ++n) {
    const int64_t start = counts[n - 1];
    const int64_t end = n < counts.size() ? counts[n] : pool_size;
    if (start < 0 || end < start || end > pool_size || (end - start) % static_cast<int64_t>(n) != 0) {
      return invalid_model("ngram_counts ", start, "..", end, " for ", n, "-grams do not partition the pool of ",
                           pool_size);
    }
    for (int64_t p = start; p < end; p += static_cast<int64_t>(n), ++gram_no) {
      if (gram_no >= static_cast<int64_t>(indexes.size())) {
        return invalid_model("ngram_indexes has fewer entries than the pool has n-grams");
      }
      const int64_t out = indexes[gram_no];
      if (cfg->strings) {
        cfg->str_grams[std::vector<std::string>(pool_s.begin() + p, pool_s.begin() + p + n)] = out;
      } else {
        cfg->int_grams[std::vector<int64_t>(pool_i.begin() + p, pool_i.begin() + p + n)] = out;
      }
    }
  }
  return make_kernel([cfg](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const bool str_in = x.dtype() == DataType::kString;
    if (str_in != cfg->strings || (!str_in && x.dtype() != DataType::kInt32 && x.dtype() != DataType::kInt64)) {
      return invalid_argument("input type ", dtype_name(x.dtype()), " does not match the pool (",
                              cfg->strings ? "string" : "int32/int64", ")");
    }
    if (x.rank() != 1 && x.rank() != 2) {
      return invalid_argument("input must be [C] or [N, C], got ", shape_to_string(x.shape()));
    }
    const int64_t rows = x.rank() == 2 ? x.dim(0) : 1;
    const int64_t C = x.rank() == 2 ? x.dim(1) : x.dim(0);
    const int64_t W = cfg->out_size;
    // The output (the width the ngram_indexes ask for) is allocated first, against the memory
    // cap, and counts go straight into it: integer counts (exact up to 2^24 occurrences of one
    // n-gram in a row) and a product with one float weight round the same in float as in double.
    const Shape out_shape = x.rank() == 2 ? Shape{rows, W} : Shape{W};
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DataType::kFloat, out_shape));
    float* const freq = y->data<float>();
    std::vector<int64_t> gi;
    std::vector<std::string> gs;
    for (int64_t r = 0; r < rows; ++r) {
      float* f = freq + r * W;
      for (int64_t start = 0; start < C; ++start) {
        // Longer skips and grams only reach further: stop at the first that leaves the row, so
        // huge max_skip_count / max_gram_length attributes cost nothing.
        for (int64_t skip = 0; skip <= cfg->max_skip; ++skip) {
          if (skip > 0 && start + skip + 1 >= C) break;
          for (int64_t n = cfg->min_gram; n <= cfg->max_gram; ++n) {
            if (n == 1 && skip > 0) continue;  // unigrams are counted once
            int64_t span = 0;                  // last element's distance from start; min_gram_length may be huge
            if (__builtin_mul_overflow(n - 1, skip + 1, &span) || span >= C - start) break;
            if (str_in) {
              gs.clear();
              for (int64_t k = 0; k < n; ++k) gs.push_back(x.string_data()[r * C + start + k * (skip + 1)]);
              auto it = cfg->str_grams.find(gs);
              if (it != cfg->str_grams.end()) f[it->second] += 1;
            } else {
              gi.clear();
              for (int64_t k = 0; k < n; ++k) gi.push_back(x.get_as_int64(r * C + start + k * (skip + 1)));
              auto it = cfg->int_grams.find(gi);
              if (it != cfg->int_grams.end()) f[it->second] += 1;
            }
          }
        }
      }
    }
    const auto& w = cfg->weights;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < W; ++i) {
        float& v = freq[r * W + i];
        const float wi = i < static_cast<int64_t>(w.size()) ? w[i] : 1.0f;
        if (cfg->mode == TfIdfMode::kIdf)
          v = v > 0 ? wi : 0.0f;
        else if (cfg->mode == TfIdfMode::kTfIdf)
          v = v * wi;
      }
    }
    return Status::ok();
  });
}

}  // namespace

void register_misc_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, "", "NonMaxSuppression", 10, kLatestVersion, create_nms);
  XONNX_REGISTER(registry, "", "BitCast", 26, kLatestVersion, create_bitcast);
  XONNX_REGISTER(registry, "", "TfIdfVectorizer", 9, kLatestVersion, create_tfidf);
  register_misc_string_ops(registry);
  register_misc_ml_ops(registry);
}

}  // namespace xonnx
