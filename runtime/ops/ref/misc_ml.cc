// Reference kernels: ai.onnx.ml domain (LabelEncoder, Binarizer, ArrayFeatureExtractor,
// TreeEnsemble). Registered from register_misc_ops (misc.cc). For this domain the registry
// passes the model's ai.onnx.ml opset as the version.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/ops/ref/common.h"
#include "runtime/ops/ref/misc_internal.h"
#include "runtime/ops/registry.h"

namespace xonnx {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

// ---------------------------------------------------------------------------------------
// LabelEncoder (ai.onnx.ml 1, 2, 4)

enum class KeyKind { kString, kInt, kFloat };

KeyKind key_kind(DataType t) {
  if (t == DataType::kString) return KeyKind::kString;
  if (dtype_is_integer(t)) return KeyKind::kInt;
  return KeyKind::kFloat;
}

struct LabelTable {
  KeyKind kind = KeyKind::kString;
  std::unordered_map<std::string, int64_t> str_keys;
  std::map<int64_t, int64_t> int_keys;
  std::map<double, int64_t> float_keys;
  int64_t nan_key = -1;
  Tensor values;  // [num_keys]
  Tensor def;     // one element of the values type
};

Result<Tensor> attr_as_tensor(const KernelInit& init, const std::string& base, bool* found) {
  *found = true;
  if (const Attribute* a = init.attr(base + "_tensor")) {
    if (a->type != AttrType::kTensor) return invalid_model("attribute '", base, "_tensor' must be a tensor");
    return a->t;
  }
  if (const Attribute* a = init.attr(base + "_strings")) {
    return Tensor::from_vector<std::string>(a->strings, {static_cast<int64_t>(a->strings.size())});
  }
  if (const Attribute* a = init.attr(base + "_int64s")) {
    return Tensor::from_vector<int64_t>(a->ints, {static_cast<int64_t>(a->ints.size())});
  }
  if (const Attribute* a = init.attr(base + "_floats")) {
    return Tensor::from_vector<float>(a->floats, {static_cast<int64_t>(a->floats.size())});
  }
  *found = false;
  return Tensor();
}

Status copy_element(const Tensor& src, int64_t si, Tensor* dst, int64_t di) {
  if (src.dtype() == DataType::kString) {
    dst->string_data()[di] = src.string_data()[si];
    return Status::ok();
  }
  const int bits = dtype_bits(src.dtype());
  if (bits < 8) return unsupported("values of type ", dtype_name(src.dtype()), " are not supported");
  const size_t bytes = static_cast<size_t>(bits / 8);
  std::memcpy(static_cast<char*>(dst->raw_data()) + di * bytes, static_cast<const char*>(src.raw_data()) + si * bytes,
              bytes);
  return Status::ok();
}

Result<std::unique_ptr<Kernel>> create_label_encoder(const KernelInit& init) {
  auto table = std::make_shared<LabelTable>();
  Tensor keys;
  if (init.opset() < 2) {
    // v1: classes_strings; string -> index (int64) or int64 -> string.
    XONNX_ASSIGN_OR_RETURN(std::vector<std::string> classes, init.get_strings("classes_strings"));
    XONNX_ASSIGN_OR_RETURN(int64_t def_i, init.get_int("default_int64", -1));
    XONNX_ASSIGN_OR_RETURN(std::string def_s, init.get_string("default_string", "_Unused"));
    const int64_t n = static_cast<int64_t>(classes.size());
    std::vector<int64_t> idx(classes.size());
    for (int64_t i = 0; i < n; ++i) idx[i] = i;
    Tensor cls = Tensor::from_vector<std::string>(classes, {n});
    Tensor ids = Tensor::from_vector<int64_t>(idx, {n});
    // Both directions are prepared; the input type picks one at run time.
    auto fwd = std::make_shared<LabelTable>();
    fwd->kind = KeyKind::kString;
    for (int64_t i = 0; i < n; ++i) fwd->str_keys.emplace(classes[i], i);
    fwd->values = ids;
    fwd->def = Tensor::scalar<int64_t>(def_i);
    auto back = std::make_shared<LabelTable>();
    back->kind = KeyKind::kInt;
    for (int64_t i = 0; i < n; ++i) back->int_keys.emplace(i, i);
    back->values = cls;
    back->def = Tensor::from_vector<std::string>({def_s}, {});
    table.reset();
    return make_kernel([fwd, back](KernelContext& ctx) -> Status {
      const Tensor& x = ctx.input(0);
      const bool str = x.dtype() == DataType::kString;
      if (!str && x.dtype() != DataType::kInt64) {
        return invalid_argument("input must be string or int64, got ", dtype_name(x.dtype()));
      }
      const LabelTable& t = str ? *fwd : *back;
      XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, t.values.dtype(), x.shape()));
      for (int64_t i = 0; i < x.numel(); ++i) {
        int64_t hit = -1;
        if (str) {
          auto it = t.str_keys.find(x.string_data()[i]);
          if (it != t.str_keys.end()) hit = it->second;
        } else {
          auto it = t.int_keys.find(x.data<int64_t>()[i]);
          if (it != t.int_keys.end()) hit = it->second;
        }
        XONNX_RETURN_IF_ERROR(hit >= 0 ? copy_element(t.values, hit, y, i) : copy_element(t.def, 0, y, i));
      }
      return Status::ok();
    });
  }
  bool found = false;
  XONNX_ASSIGN_OR_RETURN(keys, attr_as_tensor(init, "keys", &found));
  if (!found) return invalid_model("one of keys_strings/keys_int64s/keys_floats/keys_tensor is required");
  XONNX_ASSIGN_OR_RETURN(table->values, attr_as_tensor(init, "values", &found));
  if (!found) return invalid_model("one of values_strings/values_int64s/values_floats/values_tensor is required");
  if (keys.numel() != table->values.numel()) {
    return invalid_model("keys has ", keys.numel(), " entries but values has ", table->values.numel());
  }
  const DataType vt = table->values.dtype();
  if (const Attribute* d = init.attr("default_tensor")) {
    if (d->type != AttrType::kTensor || d->t.numel() != 1 || d->t.dtype() != vt) {
      return invalid_model("default_tensor must be a one-element tensor of type ", dtype_name(vt));
    }
    table->def = d->t;
  } else if (vt == DataType::kString) {
    XONNX_ASSIGN_OR_RETURN(std::string s, init.get_string("default_string", "_Unused"));
    table->def = Tensor::from_vector<std::string>({s}, {});
  } else if (vt == DataType::kInt64) {
    XONNX_ASSIGN_OR_RETURN(int64_t v, init.get_int("default_int64", -1));
    table->def = Tensor::scalar<int64_t>(v);
  } else if (vt == DataType::kFloat) {
    XONNX_ASSIGN_OR_RETURN(float v, init.get_float("default_float", -0.0f));
    table->def = Tensor::scalar<float>(v);
  } else {
    // values_tensor of another type: -1 for integers, -0.0 for floats
    XONNX_ASSIGN_OR_RETURN(Tensor d, Tensor::allocate(vt, {}));
    const double v = dtype_is_integer(vt) ? -1.0 : -0.0;
    XONNX_DISPATCH_NUMERIC(vt, return unsupported("values type ", dtype_name(vt)),
                           { d.data<T>()[0] = from_compute<T>(static_cast<compute_t<T>>(v)); });
    table->def = d;
  }
  table->kind = key_kind(keys.dtype());
  for (int64_t i = 0; i < keys.numel(); ++i) {
    switch (table->kind) {
      case KeyKind::kString: table->str_keys.emplace(keys.string_data()[i], i); break;
      case KeyKind::kInt: table->int_keys.emplace(keys.get_as_int64(i), i); break;
      case KeyKind::kFloat: {
        const double k = keys.get_as_double(i);
        if (std::isnan(k)) {
          if (table->nan_key < 0) table->nan_key = i;
        } else {
          table->float_keys.emplace(k, i);
        }
        break;
      }
    }
  }
  return make_kernel([table](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == DataType::kBool || key_kind(x.dtype()) != table->kind ||
        (table->kind == KeyKind::kFloat && !dtype_is_float(x.dtype()))) {
      return invalid_argument("input type ", dtype_name(x.dtype()), " does not match the key type");
    }
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, table->values.dtype(), x.shape()));
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t hit = -1;
      switch (table->kind) {
        case KeyKind::kString: {
          auto it = table->str_keys.find(x.string_data()[i]);
          if (it != table->str_keys.end()) hit = it->second;
          break;
        }
        case KeyKind::kInt: {
          auto it = table->int_keys.find(x.get_as_int64(i));
          if (it != table->int_keys.end()) hit = it->second;
          break;
        }
        case KeyKind::kFloat: {
          const double k = x.get_as_double(i);
          if (std::isnan(k)) {
            hit = table->nan_key;
          } else {
            auto it = table->float_keys.find(k);
            if (it != table->float_keys.end()) hit = it->second;
          }
          break;
        }
      }
      XONNX_RETURN_IF_ERROR(hit >= 0 ? copy_element(table->values, hit, y, i) : copy_element(table->def, 0, y, i));
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// Binarizer (ai.onnx.ml 1)

Result<std::unique_ptr<Kernel>> create_binarizer(const KernelInit& init) {
  XONNX_ASSIGN_OR_RETURN(float threshold, init.get_float("threshold", 0.0f));
  return make_kernel([threshold](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), x.shape()));
    const int64_t n = x.numel();
    XONNX_DISPATCH_NUMERIC(x.dtype(), return unsupported("type ", dtype_name(x.dtype())), {
      const T* in = x.data<T>();
      T* out = y->data<T>();
      for (int64_t i = 0; i < n; ++i) {
        const double v = static_cast<double>(to_compute(in[i]));
        out[i] = from_compute<T>(static_cast<compute_t<T>>(v > threshold ? 1 : 0));
      }
    });
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// ArrayFeatureExtractor (ai.onnx.ml 1): gathers along the last axis.

Result<std::unique_ptr<Kernel>> create_array_feature_extractor(const KernelInit& init) {
  return make_kernel([](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    if (idx.dtype() != DataType::kInt64) return invalid_argument("Y (indices) must be int64");
    if (x.rank() < 1) return invalid_argument("X must have rank >= 1");
    const int64_t last = x.dim(x.rank() - 1);
    const int64_t k = idx.numel();
    if (k == 0) return invalid_argument("Y (indices) must not be empty");
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = idx.data<int64_t>()[j];
      if (v < 0 || v >= last) return invalid_argument("index ", v, " is out of range [0, ", last, ")");
    }
    Shape out_shape = x.shape();
    if (x.rank() == 1)
      out_shape = {1, k};
    else
      out_shape.back() = k;
    XONNX_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(0, x.dtype(), out_shape));
    const int64_t rows = last == 0 ? 0 : x.numel() / last;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < k; ++j) {
        XONNX_RETURN_IF_ERROR(copy_element(x, r * last + idx.data<int64_t>()[j], z, r * k + j));
      }
    }
    return Status::ok();
  });
}

// ---------------------------------------------------------------------------------------
// TreeEnsemble (ai.onnx.ml 5)

struct TreeNode {
  int mode = 0;  // 0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER
  int64_t feature = 0;
  double split = 0;
  bool missing_true = false;
  std::vector<double> members;
  int64_t t_id = 0, f_id = 0;
  bool t_leaf = false, f_leaf = false;
};

struct Ensemble {
  std::vector<TreeNode> nodes;
  std::vector<int64_t> roots;
  std::vector<bool> root_is_leaf;
  std::vector<int64_t> leaf_targets;
  std::vector<double> leaf_weights;
  int64_t n_targets = 0;
  int64_t aggregate = 1;
  int64_t post = 0;
};

Result<std::vector<double>> tensor_attr_doubles(const KernelInit& init, const char* name, bool required) {
  const Attribute* a = init.attr(name);
  if (!a) {
    if (required) return invalid_model("attribute '", name, "' is required");
    return std::vector<double>{};
  }
  if (a->type != AttrType::kTensor) return invalid_model("attribute '", name, "' must be a tensor");
  std::vector<double> v(static_cast<size_t>(a->t.numel()));
  for (int64_t i = 0; i < a->t.numel(); ++i) v[i] = a->t.get_as_double(i);
  return v;
}

Result<std::unique_ptr<Kernel>> create_tree_ensemble(const KernelInit& init) {
  auto e = std::make_shared<Ensemble>();
  XONNX_ASSIGN_OR_RETURN(std::vector<double> splits, tensor_attr_doubles(init, "nodes_splits", true));
  XONNX_ASSIGN_OR_RETURN(std::vector<double> modes, tensor_attr_doubles(init, "nodes_modes", true));
  XONNX_ASSIGN_OR_RETURN(std::vector<double> members, tensor_attr_doubles(init, "membership_values", false));
  XONNX_ASSIGN_OR_RETURN(e->leaf_weights, tensor_attr_doubles(init, "leaf_weights", true));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> feat, init.get_ints("nodes_featureids"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> tids, init.get_ints("nodes_truenodeids"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> fids, init.get_ints("nodes_falsenodeids"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> tleaf, init.get_ints("nodes_trueleafs"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> fleaf, init.get_ints("nodes_falseleafs"));
  XONNX_ASSIGN_OR_RETURN(std::vector<int64_t> missing, init.get_ints("nodes_missing_value_tracks_true"));
  XONNX_ASSIGN_OR_RETURN(e->leaf_targets, init.get_ints("leaf_targetids"));
  XONNX_ASSIGN_OR_RETURN(e->roots, init.get_ints("tree_roots"));
  XONNX_ASSIGN_OR_RETURN(e->n_targets, init.require_int("n_targets"));
  XONNX_ASSIGN_OR_RETURN(e->aggregate, init.get_int("aggregate_function", 1));
  XONNX_ASSIGN_OR_RETURN(e->post, init.get_int("post_transform", 0));
  const size_t n = splits.size();
  if (modes.size() != n || feat.size() != n || tids.size() != n || fids.size() != n || tleaf.size() != n ||
      fleaf.size() != n || (!missing.empty() && missing.size() != n)) {
    return invalid_model("nodes_* attributes must all have ", n, " entries");
  }
  if (e->leaf_targets.size() != e->leaf_weights.size()) {
    return invalid_model("leaf_targetids and leaf_weights differ in length");
  }
  if (e->n_targets <= 0) return invalid_model("n_targets must be positive");
  for (int64_t t : e->leaf_targets) {
    if (t < 0 || t >= e->n_targets) return invalid_model("leaf target id ", t, " is out of range");
  }
  if (e->aggregate < 0 || e->aggregate > 3) return invalid_model("aggregate_function must be 0..3");
  if (e->post != 0 && e->post != 1 && e->post != 2 && e->post != 3) {
    return unsupported("post_transform ", e->post, " is not supported");
  }
  const int64_t nl = static_cast<int64_t>(e->leaf_weights.size());
  e->nodes.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TreeNode& t = e->nodes[i];
    t.mode = static_cast<int>(modes[i]);
    if (t.mode < 0 || t.mode > 6) return invalid_model("nodes_modes[", i, "] = ", t.mode, " is invalid");
    t.feature = feat[i];
    if (t.feature < 0) return invalid_model("nodes_featureids[", i, "] is negative");
    t.split = splits[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    t.t_id = tids[i];
    t.f_id = fids[i];
    t.t_leaf = tleaf[i] != 0;
    t.f_leaf = fleaf[i] != 0;
    const int64_t tl = t.t_leaf ? nl : static_cast<int64_t>(n), fl = t.f_leaf ? nl : static_cast<int64_t>(n);
    if (t.t_id < 0 || t.t_id >= tl || t.f_id < 0 || t.f_id >= fl) {
      return invalid_model("node ", i, " has out-of-range children");
    }
  }
  // Membership sets are NaN-terminated and consumed in depth-first (true branch first) order.
  size_t mpos = 0;
  std::vector<bool> visited(n, false);
  for (int64_t r : e->roots) {
    if (r < 0 || r >= static_cast<int64_t>(n)) return invalid_model("tree root ", r, " is out of range");
    const TreeNode& rn = e->nodes[r];
    const bool leaf = rn.t_leaf && rn.f_leaf && rn.t_id == rn.f_id;
    e->root_is_leaf.push_back(leaf);
    if (leaf) {
      if (r >= nl) return invalid_model("degenerate tree root ", r, " has no leaf");
      continue;
    }
    std::vector<int64_t> stack{r};
    while (!stack.empty()) {
      const int64_t id = stack.back();
      stack.pop_back();
      if (visited[id]) return invalid_model("node ", id, " is reachable twice (not a tree)");
      visited[id] = true;
      TreeNode& t = e->nodes[id];
      if (t.mode == 6) {
        while (mpos < members.size() && !std::isnan(members[mpos])) t.members.push_back(members[mpos++]);
        if (mpos >= members.size()) return invalid_model("membership_values has too few NaN-terminated sets");
        ++mpos;
      }
      if (!t.f_leaf) stack.push_back(t.f_id);
      if (!t.t_leaf) stack.push_back(t.t_id);
    }
  }
  return make_kernel([e](KernelContext& ctx) -> Status {
    const Tensor& x = ctx.input(0);
    if (!dtype_is_float(x.dtype())) return unsupported("X type ", dtype_name(x.dtype()), " is not supported");
    if (x.rank() != 2) return invalid_argument("X must be [N, F], got ", shape_to_string(x.shape()));
    const int64_t N = x.dim(0), F = x.dim(1), NT = e->n_targets;
    for (const TreeNode& t : e->nodes) {
      if (t.feature >= F) return invalid_argument("feature id ", t.feature, " >= number of features ", F);
    }
    // The output first: its allocation checks N x n_targets against the tensor cap.
    XONNX_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), {N, NT}));
    XONNX_RETURN_IF_ERROR(ref::check_scratch(ctx, "the tree sums", sizeof(double), {N, NT}));
    std::vector<double> out(static_cast<size_t>(y->numel()));
    const double init_v = e->aggregate == 2   ? std::numeric_limits<double>::max()
                          : e->aggregate == 3 ? std::numeric_limits<double>::lowest()
                                              : 0.0;
    std::fill(out.begin(), out.end(), init_v);
    const double ntrees = static_cast<double>(e->roots.size());
    for (int64_t r = 0; r < N; ++r) {
      double* o = out.data() + r * NT;
      for (size_t k = 0; k < e->roots.size(); ++k) {
        int64_t leaf = e->roots[k];
        if (!e->root_is_leaf[k]) {
          int64_t id = e->roots[k];
          while (true) {
            const TreeNode& t = e->nodes[id];
            const double v = x.get_as_double(r * F + t.feature);
            bool go;
            switch (t.mode) {
              case 0: go = v <= t.split; break;
              case 1: go = v < t.split; break;
              case 2: go = v >= t.split; break;
              case 3: go = v > t.split; break;
              case 4: go = v == t.split; break;
              case 5: go = v != t.split; break;
              default: go = std::find(t.members.begin(), t.members.end(), v) != t.members.end(); break;
            }
            if (t.missing_true && std::isnan(v)) go = true;
            const bool is_leaf = go ? t.t_leaf : t.f_leaf;
            id = go ? t.t_id : t.f_id;
            if (is_leaf) break;
          }
          leaf = id;
        }
        const int64_t tgt = e->leaf_targets[leaf];
        const double w = e->leaf_weights[leaf];
        switch (e->aggregate) {
          case 0: o[tgt] += w / ntrees; break;
          case 1: o[tgt] += w; break;
          case 2: o[tgt] = std::min(o[tgt], w); break;
          default: o[tgt] = std::max(o[tgt], w); break;
        }
      }
      if (e->post == 2) {
        for (int64_t t = 0; t < NT; ++t) o[t] = 1.0 / (1.0 + std::exp(-o[t]));
      } else if (e->post == 1 || e->post == 3) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t t = 0; t < NT; ++t)
          if (e->post == 1 || o[t] != 0) mx = std::max(mx, o[t]);
        double s = 0;
        for (int64_t t = 0; t < NT; ++t) {
          o[t] = (e->post == 3 && o[t] == 0) ? 0.0 : std::exp(o[t] - mx);
          s += o[t];
        }
        if (s > 0)
          for (int64_t t = 0; t < NT; ++t) o[t] /= s;
      }
    }
    XONNX_DISPATCH_FLOAT(x.dtype(), return unsupported("X type ", dtype_name(x.dtype())), {
      T* p = y->data<T>();
      for (size_t i = 0; i < out.size(); ++i) p[i] = from_compute<T>(static_cast<compute_t<T>>(out[i]));
    });
    return Status::ok();
  });
}

}  // namespace

void register_misc_ml_ops(OpRegistry& registry) {
  XONNX_REGISTER(registry, kMl, "LabelEncoder", 1, kLatestVersion, create_label_encoder);
  XONNX_REGISTER(registry, kMl, "Binarizer", 1, kLatestVersion, create_binarizer);
  XONNX_REGISTER(registry, kMl, "ArrayFeatureExtractor", 1, kLatestVersion, create_array_feature_extractor);
  XONNX_REGISTER(registry, kMl, "TreeEnsemble", 5, kLatestVersion, create_tree_ensemble);
}

}  // namespace xonnx
