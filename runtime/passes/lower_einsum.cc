// Einsum of two float tensors that is a batched matrix product -> Transpose(A) -> MatMul(A, B)
// -> Transpose, the Transposes only where the labels are not in order already. torch exports
// torch.einsum as Einsum (MaxViT's attention: "BGHID,BGHJD->BGHIJ" and "BGHIJ,BGHJD->BGHID";
// relative-position and attention blocks of custom transformers), which ran on the reference
// kernel: 59 % of MaxViT-T's time.
//
// Taken: two operands of known rank, one label per axis, no ellipsis; every label of the output
// in an operand; exactly one contracted label (in both operands, not in the output), one label
// of A alone and one of B alone in the output, the rest batch labels in all three whose dims do
// not differ where both are known (MatMul would broadcast a 1 where Einsum reports an error).
// A label summed out of one operand only, an outer or inner product and repeated labels stay
// with the Einsum kernel.
#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/ir/graph_edit.h"
#include "runtime/passes/fusion_view.h"
#include "runtime/passes/pass_util.h"
#include "runtime/passes/passes.h"
#include "runtime/passes/shape_inference.h"

namespace xonnx {
namespace passes {

namespace {

// "bid,bjd->bij" as label strings {"bid", "bjd"} and "bij" (implicit output: the labels seen
// once, in alphabetical order, as numpy does). False for what this pass does not take.
bool parse(const std::string& equation, std::vector<std::string>& operands, std::string& output) {
  std::string eq;
  for (char c : equation)
    if (!std::isspace(static_cast<unsigned char>(c))) eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  const size_t comma = lhs.find(',');
  if (comma == std::string::npos || lhs.find(',', comma + 1) != std::string::npos) return false;
  operands = {lhs.substr(0, comma), lhs.substr(comma + 1)};
  if (arrow != std::string::npos) {
    output = eq.substr(arrow + 2);
  } else {
    output.clear();
    for (char c : lhs)
      if (c != ',' && std::count(lhs.begin(), lhs.end(), c) == 1) output.push_back(c);
    std::sort(output.begin(), output.end());
  }
  for (const std::string* term : {&operands[0], &operands[1], &output}) {
    for (char c : *term)
      if (!std::isalpha(static_cast<unsigned char>(c)) || std::count(term->begin(), term->end(), c) != 1) return false;
  }
  return true;
}

bool contains(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// The permutation taking `from`'s axes to the order of `to` (the same labels).
std::vector<int64_t> permutation(const std::string& from, const std::string& to) {
  std::vector<int64_t> perm;
  for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
  return perm;
}

Node transpose(const std::string& in, const std::string& out, std::vector<int64_t> perm) {
  Node n;
  n.op_type = "Transpose";
  n.name = out + "/Transpose";
  n.inputs = {in};
  n.outputs = {out};
  n.attributes = {ints_attribute("perm", std::move(perm))};
  return n;
}

}  // namespace

Result<bool> lower_einsum(Model& model, PassContext& ctx) {
  Graph& g = model.graph;
  if (!has_default_node(g, "Einsum")) return false;
  const ShapeFacts& facts = ctx.shape_facts(model);
  FusionView view(g);
  NameAllocator names(g);
  int lowered = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int e = static_cast<int>(i);
    if (!view.is(e, "Einsum")) continue;
    const Node& einsum = view.node(e);
    const Attribute* eq = einsum.find_attr("equation");
    std::vector<std::string> terms;
    std::string out;
    if (einsum.inputs.size() != 2 || einsum.outputs.size() != 1 || !eq || eq->type != AttrType::kString ||
        !parse(eq->s, terms, out))
      continue;
    const std::string &a = terms[0], &b = terms[1];
    const TypeInfo* ta = facts.type(einsum.inputs[0]);
    const TypeInfo* tb = facts.type(einsum.inputs[1]);
    if (!ta || !tb || !ta->has_shape || !tb->has_shape || ta->elem_type != DataType::kFloat ||
        tb->elem_type != DataType::kFloat || ta->dims.size() != a.size() || tb->dims.size() != b.size())
      continue;
    std::string batch, m, k, n;
    bool taken = true;
    for (char c : out) {
      if (contains(a, c) && contains(b, c)) {
        const Dim &da = ta->dims[a.find(c)], &db = tb->dims[b.find(c)];
        taken = taken && !(da.known() && db.known() && da.value != db.value);
        batch.push_back(c);
      } else if (contains(a, c)) {
        m.push_back(c);
      } else if (contains(b, c)) {
        n.push_back(c);
      } else {
        taken = false;  // an output label in no operand: the kernel reports it
      }
    }
    for (char c : a) {
      if (contains(out, c)) continue;
      if (!contains(b, c)) taken = false;  // summed out of A alone
      k.push_back(c);
    }
    for (char c : b)
      if (!contains(out, c) && !contains(a, c)) taken = false;  // summed out of B alone
    if (!taken || m.size() != 1 || n.size() != 1 || k.size() != 1 || !view.claim({e})) continue;

    const std::string& y = einsum.outputs[0];
    std::vector<Node> nodes;
    std::string lhs = einsum.inputs[0], rhs = einsum.inputs[1];
    const std::vector<int64_t> perm_a = permutation(a, batch + m + k), perm_b = permutation(b, batch + k + n);
    if (!is_identity_perm(perm_a)) {
      const std::string t = names.fresh(y + "_lhs");
      nodes.push_back(transpose(lhs, t, perm_a));
      lhs = t;
    }
    if (!is_identity_perm(perm_b)) {
      const std::string t = names.fresh(y + "_rhs");
      nodes.push_back(transpose(rhs, t, perm_b));
      rhs = t;
    }
    const std::vector<int64_t> perm_y = permutation(batch + m + n, out);
    Node matmul;
    matmul.op_type = "MatMul";
    matmul.name = einsum.name;
    matmul.origin = einsum.origin.empty() ? einsum.describe() : einsum.origin;  // errors name the Einsum
    matmul.inputs = {lhs, rhs};
    matmul.outputs = {is_identity_perm(perm_y) ? y : names.fresh(y + "_product")};
    const std::string product = matmul.outputs[0];
    nodes.push_back(std::move(matmul));
    if (product != y) nodes.push_back(transpose(product, y, perm_y));
    view.replace({e}, e, std::move(nodes));
    ++lowered;
  }
  if (lowered == 0) return false;
  view.commit();
  ctx.note("lowered " + std::to_string(lowered) + " Einsum into MatMul (and Transposes)");
  return true;
}

}  // namespace passes
}  // namespace xonnx
