// The inference driver: seeds types from graph inputs and initializers, runs the per-op rules
// in node order, and falls back to what the model declares (value_info, graph outputs).
#include "runtime/passes/shape_inference.h"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_set>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/shape_inference_rules.h"

namespace xonnx {
namespace passes {

// ------------------------------------------------------------------ ShapeFacts

const TypeInfo* ShapeFacts::type(const std::string& name) const {
  auto it = types.find(name);
  return it == types.end() ? nullptr : &it->second;
}

const std::vector<Dim>* ShapeFacts::dims(const std::string& name) const {
  const TypeInfo* t = type(name);
  return t && t->kind == TypeInfo::Kind::kTensor && t->has_shape ? &t->dims : nullptr;
}

const std::vector<Dim>* ShapeFacts::elements(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

bool dim_equal(const Dim& a, const Dim& b) {
  if (a.known() != b.known()) return false;
  return a.known() ? a.value == b.value : !a.param.empty() && a.param == b.param;
}

bool dims_equal(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!dim_equal(a[i], b[i])) return false;
  return true;
}

bool type_info_equal(const TypeInfo& a, const TypeInfo& b) {
  if (a.kind != b.kind || a.elem_type != b.elem_type || a.has_shape != b.has_shape) return false;
  if (a.dims.size() != b.dims.size()) return false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i].value != b.dims[i].value || a.dims[i].param != b.dims[i].param) return false;
  }
  if (static_cast<bool>(a.elem) != static_cast<bool>(b.elem)) return false;
  return !a.elem || type_info_equal(*a.elem, *b.elem);
}

bool all_known(const std::vector<Dim>& dims, std::vector<int64_t>* values) {
  if (values) values->clear();
  for (const Dim& d : dims) {
    if (!d.known()) return false;
    if (values) values->push_back(d.value);
  }
  return true;
}

// ------------------------------------------------------------------ InferCtx

const TypeInfo* InferCtx::in_type(size_t i) const { return has_input(i) ? facts_.type(node.inputs[i]) : nullptr; }

DataType InferCtx::in_dtype(size_t i) const {
  const TypeInfo* t = in_type(i);
  return t ? t->elem_type : DataType::kUndefined;
}

const std::vector<Dim>* InferCtx::in_dims(size_t i) const {
  return has_input(i) ? facts_.dims(node.inputs[i]) : nullptr;
}

const std::vector<Dim>* InferCtx::in_elements(size_t i) const {
  return has_input(i) ? facts_.elements(node.inputs[i]) : nullptr;
}

const Tensor* InferCtx::in_constant(size_t i) const {
  if (!has_input(i)) return nullptr;
  auto it = constants_.find(node.inputs[i]);
  return it == constants_.end() ? nullptr : it->second;
}

std::optional<std::vector<int64_t>> InferCtx::in_ints(size_t i) const {
  if (const Tensor* t = in_constant(i)) {
    auto v = t->to_int64_vector();
    if (v.is_ok()) return std::move(v).value();
    return std::nullopt;
  }
  std::vector<int64_t> out;
  const std::vector<Dim>* e = in_elements(i);
  if (e && all_known(*e, &out)) return out;
  return std::nullopt;
}

int64_t InferCtx::attr_int(const std::string& name, int64_t def) const {
  const Attribute* a = node.find_attr(name);
  return a && a->type == AttrType::kInt ? a->i : def;
}

std::optional<std::vector<int64_t>> InferCtx::attr_ints(const std::string& name) const {
  const Attribute* a = node.find_attr(name);
  if (!a || a->type != AttrType::kInts) return std::nullopt;
  return a->ints;
}

namespace {
// A type a rule read from an attribute (Cast's `to`, a window op's `output_datatype`) is only
// a fact when it names a known type: the node's kernel rejects the others, and a converted
// file must not carry them into its value_info.
DataType known_or_undefined(DataType dtype) {
  return dtype_is_known(static_cast<int32_t>(dtype)) ? dtype : DataType::kUndefined;
}
}  // namespace

void InferCtx::set_type(size_t out, DataType dtype, std::vector<Dim> dims) {
  if (out >= node.outputs.size() || node.outputs[out].empty()) return;
  TypeInfo& t = facts_.types[node.outputs[out]];
  t = TypeInfo();
  t.kind = TypeInfo::Kind::kTensor;
  t.elem_type = known_or_undefined(dtype);
  t.has_shape = true;
  t.dims = std::move(dims);
  for (Dim& d : t.dims) {
    if (d.value < 0) d.value = -1;  // negative element values are not dims
  }
}

void InferCtx::set_rank_unknown(size_t out, DataType dtype) {
  if (out >= node.outputs.size() || node.outputs[out].empty()) return;
  TypeInfo& t = facts_.types[node.outputs[out]];
  t = TypeInfo();
  t.kind = TypeInfo::Kind::kTensor;
  t.elem_type = known_or_undefined(dtype);
}

void InferCtx::set_elements(size_t out, std::vector<Dim> elements) {
  if (out >= node.outputs.size() || node.outputs[out].empty()) return;
  if (static_cast<int64_t>(elements.size()) > kMaxTrackedElements) return;
  facts_.values[node.outputs[out]] = std::move(elements);
}

// ------------------------------------------------------------------ shared dim helpers

Dim known_dim(int64_t v) {
  Dim d;
  d.value = v;
  return d;
}

Dim dim_plus(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_add_overflow(a, b, &r) || r < 0 ? Dim() : known_dim(r);
}

Dim dim_times(int64_t a, int64_t b) {
  int64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) || r < 0 ? Dim() : known_dim(r);
}

namespace {

// The terms of a symbolic sum ("past + seq": a past and a new length, a KV cache's total).
std::vector<std::string> sum_terms(const std::string& param) {
  std::vector<std::string> terms;
  size_t begin = 0;
  while (begin <= param.size()) {
    size_t end = param.find('+', begin);
    if (end == std::string::npos) end = param.size();
    size_t b = begin, e = end;
    while (b < e && param[b] == ' ') ++b;
    while (e > b && param[e - 1] == ' ') --e;
    if (b == e) return {};  // "a +" or "+": not a sum of names
    terms.push_back(param.substr(b, e - b));
    begin = end + 1;
  }
  return terms;
}

// The symbolic dim of a sum of names, its param in one canonical form: sorted, " + " between.
Dim dim_of_terms(std::vector<std::string> terms) {
  std::sort(terms.begin(), terms.end());
  Dim d;
  d.param = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) d.param += " + " + terms[i];
  return d;
}

}  // namespace

Dim sum_dims(const Dim& a, const Dim& b) {
  if (a.known() && b.known()) {
    int64_t sum = 0;
    return __builtin_add_overflow(a.value, b.value, &sum) ? Dim() : known_dim(sum);
  }
  if (a.known() && a.value == 0) return b;
  if (b.known() && b.value == 0) return a;
  if (a.param.empty() || b.param.empty()) return Dim();
  std::vector<std::string> terms = sum_terms(a.param), more = sum_terms(b.param);
  if (terms.empty() || more.empty()) return Dim();
  terms.insert(terms.end(), more.begin(), more.end());
  return dim_of_terms(std::move(terms));
}

Dim difference_dims(const Dim& a, const Dim& b) {
  int64_t r = 0;
  if (a.known() && b.known()) return __builtin_sub_overflow(a.value, b.value, &r) || r < 0 ? Dim() : known_dim(r);
  if (b.known() && b.value == 0) return a;
  if (a.param.empty() || b.param.empty()) return Dim();
  std::vector<std::string> terms = sum_terms(a.param), less = sum_terms(b.param);
  if (terms.empty() || less.empty()) return Dim();
  for (const std::string& t : less) {
    auto it = std::find(terms.begin(), terms.end(), t);
    if (it == terms.end()) return Dim();
    terms.erase(it);
  }
  return terms.empty() ? known_dim(0) : dim_of_terms(std::move(terms));
}

std::vector<Dim> broadcast_dims(const std::vector<Dim>& a, const std::vector<Dim>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim* x = i + a.size() >= rank ? &a[i + a.size() - rank] : nullptr;
    const Dim* y = i + b.size() >= rank ? &b[i + b.size() - rank] : nullptr;
    if (!x || (x->known() && x->value == 1)) {
      out[i] = y ? *y : known_dim(1);
    } else if (!y || (y->known() && y->value == 1)) {
      out[i] = *x;
    } else if (x->known() && y->known()) {
      if (x->value == y->value) out[i] = *x;  // else: invalid model, leave unknown
    } else if (x->known() || y->known()) {
      // One side is symbolic: a valid model can only broadcast it against the known size
      // (or 1, which we cannot rule out), so only a known 0 or >1 dim decides.
      const Dim& k = x->known() ? *x : *y;
      if (k.value != 1) out[i] = k;
    } else if (!x->param.empty() && x->param == y->param) {
      out[i] = *x;
    }
  }
  return out;
}

int64_t norm_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return -1;
  return axis < 0 ? axis + rank : axis;
}

// ------------------------------------------------------------------ driver

namespace {

const RuleTable& default_rules() {
  static const RuleTable table = [] {
    RuleTable t;
    add_elementwise_rules(t);
    add_nn_rules(t);
    add_shape_op_rules(t);
    RuleTable unused;
    add_llm_rules(t, unused);
    return t;
  }();
  return table;
}

const RuleTable& contrib_rules() {
  static const RuleTable table = [] {
    RuleTable t;
    add_contrib_rules(t);
    RuleTable unused;
    add_llm_rules(unused, t);
    return t;
  }();
  return table;
}

TypeInfo type_of_tensor(const Tensor& t) {
  TypeInfo info;
  info.kind = TypeInfo::Kind::kTensor;
  info.elem_type = t.dtype();
  info.has_shape = true;
  for (int64_t d : t.shape()) info.dims.push_back(known_dim(d));
  return info;
}

bool is_small_int(const Tensor& t) {
  return (t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32) && t.rank() <= 1 && t.numel() >= 0 &&
         t.numel() <= kMaxTrackedElements;
}

void record_constant(ShapeFacts& facts, const std::string& name, const Tensor& t) {
  facts.types[name] = type_of_tensor(t);
  if (!is_small_int(t)) return;
  std::vector<Dim> elems;
  for (int64_t i = 0; i < t.numel(); ++i) elems.push_back(known_dim(t.get_as_int64(i)));
  facts.values[name] = std::move(elems);
}

// The tensor of a Constant node's value / value_int(s) / value_float(s) attribute, if any.
const Tensor* constant_attr_tensor(const Node& n, std::deque<Tensor>& owned) {
  for (const Attribute& a : n.attributes) {
    if ((a.name == "value" || a.name == "sparse_value") && a.t.defined()) {
      owned.push_back(a.t);
    } else if (a.name == "value_int" && a.type == AttrType::kInt) {
      owned.push_back(Tensor::scalar<int64_t>(a.i));
    } else if (a.name == "value_ints" && a.type == AttrType::kInts) {
      owned.push_back(Tensor::from_vector<int64_t>(a.ints, {static_cast<int64_t>(a.ints.size())}));
    } else if (a.name == "value_float" && a.type == AttrType::kFloat) {
      owned.push_back(Tensor::scalar<float>(a.f));
    } else if (a.name == "value_floats" && a.type == AttrType::kFloats) {
      owned.push_back(Tensor::from_vector<float>(a.floats, {static_cast<int64_t>(a.floats.size())}));
    } else {
      continue;
    }
    return &owned.back();
  }
  return nullptr;
}

// Fills dims the rule left unknown from what the model declares (same rank and dtype only).
void merge_declared(ShapeFacts& facts, const std::string& name, const TypeInfo& declared) {
  if (declared.kind != TypeInfo::Kind::kTensor || declared.elem_type == DataType::kUndefined) {
    return;
  }
  auto it = facts.types.find(name);
  if (it == facts.types.end() || it->second.kind != TypeInfo::Kind::kTensor) {
    facts.types[name] = declared;
    return;
  }
  TypeInfo& t = it->second;
  if (t.elem_type == DataType::kUndefined) t.elem_type = declared.elem_type;
  if (t.elem_type != declared.elem_type || !declared.has_shape) return;
  if (!t.has_shape) {
    t.has_shape = true;
    t.dims = declared.dims;
    return;
  }
  if (t.dims.size() != declared.dims.size()) return;
  for (size_t d = 0; d < t.dims.size(); ++d) {
    if (!t.dims[d].known() && t.dims[d].param.empty()) t.dims[d] = declared.dims[d];
  }
}

}  // namespace

NodeShapeInference::NodeShapeInference(const Model& model) : model_(model) {
  const Graph& g = model.graph;
  std::unordered_set<std::string> input_names;
  for (const ValueInfo& vi : g.inputs) {
    input_names.insert(vi.name);
    if (vi.type.kind != TypeInfo::Kind::kUnknown) facts_.types[vi.name] = vi.type;
  }
  for (const NamedTensor& init : g.initializers) {
    if (input_names.count(init.name)) {
      // Overridable default: the declared type wins, the initializer only fills gaps.
      merge_declared(facts_, init.name, type_of_tensor(init.tensor));
      continue;
    }
    constants_[init.name] = &init.tensor;
    record_constant(facts_, init.name, init.tensor);
  }
  for (const ValueInfo& vi : g.value_info) declared_[vi.name] = &vi.type;
  for (const ValueInfo& vi : g.outputs) declared_[vi.name] = &vi.type;
}

void NodeShapeInference::infer(const Node& n) {
  if (n.domain.empty() && n.op_type == "Constant") {
    if (const Tensor* t = constant_attr_tensor(n, owned_); t && n.outputs.size() == 1) {
      constants_[n.outputs[0]] = t;
      record_constant(facts_, n.outputs[0], *t);
    }
  } else {
    // A pointer, not `cond ? default_rules() : RuleTable()`: that conditional is a prvalue, so
    // it copied the whole table for every node (44% of session creation on an encoder).
    const RuleTable* table = n.domain.empty()              ? &default_rules()
                             : n.domain == "com.microsoft" ? &contrib_rules()
                                                           : nullptr;
    auto rule = table ? table->find(n.op_type) : RuleTable::const_iterator();
    if (table && rule != table->end()) {
      InferCtx ctx(n, opset_of(model_, n), facts_, constants_);
      rule->second(ctx);
    }
  }
  for (const std::string& o : n.outputs) {
    auto d = declared_.find(o);
    if (!o.empty() && d != declared_.end()) merge_declared(facts_, o, *d->second);
  }
}

void NodeShapeInference::set_constant(const std::string& name, const Tensor& value) {
  constants_[name] = &value;
  facts_.values.erase(name);  // a tensor too large to track keeps no stale elements
  record_constant(facts_, name, value);
}

ShapeFacts infer_shapes(const Model& model) {
  NodeShapeInference inference(model);
  for (const Node& n : model.graph.nodes) inference.infer(n);
  return inference.take_facts();
}

bool write_value_info(Graph& graph, const ShapeFacts& facts) {
  std::set<std::string> excluded;
  for (const ValueInfo& vi : graph.inputs) excluded.insert(vi.name);
  for (const ValueInfo& vi : graph.outputs) excluded.insert(vi.name);
  for (const NamedTensor& t : graph.initializers) excluded.insert(t.name);
  std::map<std::string, const ValueInfo*> old;
  for (const ValueInfo& vi : graph.value_info) old[vi.name] = &vi;

  std::vector<ValueInfo> fresh;
  for (const Node& n : graph.nodes) {
    for (const std::string& o : n.outputs) {
      if (o.empty() || excluded.count(o)) continue;
      excluded.insert(o);  // one entry per name
      const TypeInfo* t = facts.type(o);
      if (t && t->kind == TypeInfo::Kind::kTensor && t->elem_type != DataType::kUndefined) {
        fresh.push_back({o, *t});
      } else if (auto it = old.find(o); it != old.end()) {
        fresh.push_back(*it->second);
      }
    }
  }
  bool changed = fresh.size() != graph.value_info.size();
  for (size_t i = 0; !changed && i < fresh.size(); ++i) {
    changed = fresh[i].name != graph.value_info[i].name || !type_info_equal(fresh[i].type, graph.value_info[i].type);
  }
  if (changed) graph.value_info = std::move(fresh);
  return changed;
}

}  // namespace passes
}  // namespace xonnx
