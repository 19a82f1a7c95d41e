// MatMul(A, W) [+ bias] whose product only Slices and Splits read, each taking a range of its
// last axis -> one MatMul [+ Add] per range, over that range's columns of W and the bias:
// torch's packed q / k / v projection (nn.MultiheadAttention's in_proj, `qkv.chunk(3, -1)`)
// computed [S, 3E] and then copied it out again in three pieces (ViT-B/16: 36 copies of 600 KB,
// 0.8 % of the model). Each piece's product is the same sum over the same K products: the same
// bits. W is a float constant no other node reads (a shared W would be held twice), [K, N] for a
// MatMul or [N, K] for com.microsoft FusedMatMul(transB = 1) (absorb-weight-transposes' form);
// a bias is a float constant [N] or [1, .., 1, N] not of higher rank than the product. Runs
// before fuse-matmul-add, which turns each piece into a Gemm. Session creation only.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// Columns [begin, end) of the product that one output of a reader takes.
struct Piece {
  std::string output;
  int64_t begin = 0, end = 0;
};

bool is_last_axis(int64_t axis, int64_t rank) { return axis == -1 || axis == rank - 1; }

// Slice of the last axis with step 1 and a non-empty range: its columns (ONNX's clamping of
// starts and ends into [0, n]).
bool slice_piece(const Model& model, const Node& s, int64_t rank, int64_t n, Piece& piece) {
  const Graph& g = model.graph;
  const bool inputs_form = opset_of(model, s) >= 10;
  std::vector<int64_t> starts, ends, axes, steps;
  if (!constant_ints(g, s, inputs_form ? 1 : SIZE_MAX, "starts", starts) ||
      !constant_ints(g, s, inputs_form ? 2 : SIZE_MAX, "ends", ends) || starts.size() != 1 || ends.size() != 1)
    return false;
  if (!constant_ints(g, s, inputs_form ? 3 : SIZE_MAX, "axes", axes)) axes = {0};
  if (inputs_form && s.inputs.size() > 4 && !s.inputs[4].empty() &&
      (!constant_ints(g, s, 4, nullptr, steps) || steps.size() != 1 || steps[0] != 1))
    return false;
  if (axes.size() != 1 || !is_last_axis(axes[0], rank) || s.outputs.size() != 1) return false;
  piece = {s.outputs[0], slice_bound(starts[0], n), slice_bound(ends[0], n)};
  return piece.begin < piece.end;
}

// Split of the last axis into known sizes: one piece per output.
bool split_pieces(const Model& model, const Node& s, int64_t rank, int64_t n, std::vector<Piece>& pieces) {
  if (!is_last_axis(attr_int_or(s, "axis", 0), rank)) return false;
  const int64_t opset = opset_of(model, s);
  const int64_t outputs = static_cast<int64_t>(s.outputs.size());
  std::vector<int64_t> sizes;
  if (!constant_ints(model.graph, s, opset >= 13 ? 1 : SIZE_MAX, opset >= 13 ? nullptr : "split", sizes)) {
    if (s.inputs.size() > 1 && !s.inputs[1].empty()) return false;  // sizes computed at run time
    // Equal parts; opset 18's num_outputs lets the last be smaller.
    const int64_t part = (n + outputs - 1) / outputs;
    if (opset < 18 && n % outputs != 0) return false;
    for (int64_t i = 0; i < outputs; ++i) sizes.push_back(std::min(part, n - i * part));
  }
  if (static_cast<int64_t>(sizes.size()) != outputs) return false;
  int64_t at = 0;
  for (int64_t i = 0; i < outputs; ++i) {
    const int64_t size = sizes[static_cast<size_t>(i)];
    if (size <= 0 || size > n - at || s.outputs[static_cast<size_t>(i)].empty()) return false;
    pieces.push_back({s.outputs[static_cast<size_t>(i)], at, at + size});
    at += size;
  }
  return at == n;
}

// Columns [begin, end) of W (rows of W when transposed), made from W when read
// (Storage::derived): the kernels pack each piece, so no copy of W is allocated (and faulted in)
// at session creation, and W's file pages go back once a piece is packed.
Tensor weight_columns(const Tensor& w, bool transposed, int64_t begin, int64_t end) {
  const int64_t cols = end - begin;
  if (transposed) {
    const int64_t k = w.dim(1);
    const size_t first = static_cast<size_t>(begin * k) * sizeof(float);
    auto fill = [w, first](size_t offset, size_t n, void* dst) { w.read_bytes(first + offset, n, dst); };
    return Tensor(DataType::kFloat, {cols, k},
                  Storage::derived(static_cast<size_t>(cols * k) * sizeof(float), std::move(fill), w.storage()));
  }
  const int64_t k = w.dim(0);
  const size_t in_row = static_cast<size_t>(w.dim(1)) * sizeof(float),
               out_row = static_cast<size_t>(cols) * sizeof(float), first = static_cast<size_t>(begin) * sizeof(float);
  auto fill = [w, in_row, out_row, first](size_t offset, size_t n, void* dst) {
    char* to = static_cast<char*>(dst);
    for (size_t at = offset; at < offset + n;) {
      const size_t row = at / out_row, skip = at - row * out_row, len = std::min(out_row - skip, offset + n - at);
      w.read_bytes(row * in_row + first + skip, len, to + (at - offset));
      at += len;
    }
  };
  return Tensor(DataType::kFloat, {k, cols},
                Storage::derived(static_cast<size_t>(k) * out_row, std::move(fill), w.storage()));
}

Tensor bias_columns(const Tensor& bias, int64_t begin, int64_t end) {
  Shape shape = bias.shape();
  shape.back() = end - begin;
  Tensor piece = Tensor::allocate(DataType::kFloat, shape).value();
  bias.read_bytes(static_cast<size_t>(begin) * sizeof(float), static_cast<size_t>(end - begin) * sizeof(float),
                  piece.data<float>());
  return piece;
}

// MatMul(A, W), or FusedMatMul(A, W) that is A x W^T; *transposed tells which.
bool is_projection(const Node& n, bool* transposed) {
  if (n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  if (is_default(n, "MatMul")) {
    *transposed = false;
    return true;
  }
  if (n.domain != "com.microsoft" || n.op_type != "FusedMatMul") return false;
  for (const char* flag : {"transA", "transBatchA", "transBatchB"}) {
    if (attr_int_or(n, flag, 0) != 0) return false;
  }
  *transposed = true;
  return attr_int_or(n, "transB", 0) == 1 && attr_float_or(n, "alpha", 1.0f) == 1.0f;
}

}  // namespace

Result<bool> split_sliced_projections(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  if (!has_default_node(g, "Slice") && !has_default_node(g, "Split")) return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  FusionView view(g);
  const GraphIndex& index = view.index();
  NameAllocator names(g);
  int split = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int mm = static_cast<int>(i);
    bool transposed = false;
    if (!is_projection(view.node(mm), &transposed)) continue;
    const Node& matmul = view.node(mm);
    const Tensor* w = constant_tensor(g, matmul.inputs[1]);
    const std::vector<Dim>* dims = facts.dims(matmul.outputs[0]);
    if (!w || w->dtype() != DataType::kFloat || w->rank() != 2 || index.use_count(matmul.inputs[1]) != 1 || !dims ||
        dims->size() < 2)
      continue;
    const int64_t rank = static_cast<int64_t>(dims->size()), n = w->dim(transposed ? 0 : 1);
    // An optional bias Add, the product's only reader.
    std::vector<int> nodes = {mm};
    std::string product = matmul.outputs[0];
    const Tensor* bias = nullptr;
    std::string bias_name;
    const int add = view.sole_consumer(product);
    if (view.is(add, "Add")) {
      bias_name = view.other_input(add, product);
      bias = constant_tensor(g, bias_name);
      const bool row = bias && bias->dtype() == DataType::kFloat && bias->rank() >= 1 &&
                       static_cast<int64_t>(bias->rank()) <= rank && bias->numel() == n && bias->shape().back() == n;
      if (!row) continue;
      nodes.push_back(add);
      product = view.node(add).outputs[0];
    }
    if (index.is_graph_output(product) || index.consumers(product).empty()) continue;
    std::vector<Piece> pieces;
    int64_t columns = 0;
    bool all_pieces = true;
    for (const int reader : index.consumers(product)) {
      const Node& r = view.node(reader);
      const size_t before = pieces.size();
      Piece piece;
      if (r.inputs[0] != product || std::count(r.inputs.begin(), r.inputs.end(), product) != 1) {
        all_pieces = false;
      } else if (view.is(reader, "Slice") && slice_piece(model, r, rank, n, piece)) {
        pieces.push_back(piece);
      } else if (!view.is(reader, "Split") || !split_pieces(model, r, rank, n, pieces)) {
        all_pieces = false;
      }
      if (!all_pieces) break;
      for (size_t p = before; p < pieces.size(); ++p) columns += pieces[p].end - pieces[p].begin;
      nodes.push_back(reader);
    }
    // Nothing to gain from one piece of all columns; overlapping pieces would compute more.
    if (!all_pieces || columns > n || (pieces.size() == 1 && columns == n) || !view.claim(nodes)) continue;
    // Copies (sharing the bytes): add_initializer may move the graph's initializers.
    const Tensor weight = *w, bias_row = bias ? *bias : Tensor();
    std::vector<Node> replacement;
    for (const Piece& piece : pieces) {
      const std::string suffix = "_cols_" + std::to_string(piece.begin);
      Node part = matmul;
      part.name = names.fresh(matmul.name + suffix);
      part.inputs[1] = add_initializer(g, names, matmul.inputs[1] + suffix,
                                       weight_columns(weight, transposed, piece.begin, piece.end));
      part.outputs[0] = bias ? names.fresh(piece.output + "_product") : piece.output;
      const std::string part_product = part.outputs[0];
      replacement.push_back(std::move(part));
      if (!bias) continue;
      Node sum = view.node(add);
      sum.name = names.fresh(sum.name + suffix);
      sum.inputs = {part_product,
                    add_initializer(g, names, bias_name + suffix, bias_columns(bias_row, piece.begin, piece.end))};
      sum.outputs = {piece.output};
      replacement.push_back(std::move(sum));
    }
    view.replace(nodes, mm, std::move(replacement));
    ++split;
  }
  if (split == 0) return false;
  view.commit();
  ctx.note("split " + std::to_string(split) + " projections read only in column ranges into one per range");
  return true;
}

}  // namespace passes
}  // namespace xonnx
