#include "runtime/ir/output_range.h"

#include <algorithm>
#include <set>

#include "runtime/ir/graph_edit.h"

namespace xonnx {
namespace {

std::string describe(const OutputRange& r) {
  return "output range '" + r.output + "' (axis " + std::to_string(r.axis) + ", [" + std::to_string(r.start) + ", " +
         (r.end == INT64_MAX ? std::string("end") : std::to_string(r.end)) + "))";
}

Attribute ints_attribute(const std::string& name, int64_t value) {
  Attribute a;
  a.name = name;
  a.type = AttrType::kInts;
  a.ints = {value};
  return a;
}

}  // namespace

Status apply_output_ranges(Model& model, const std::vector<OutputRange>& ranges) {
  Graph& g = model.graph;
  std::set<std::string> seen;
  for (const OutputRange& r : ranges) {
    auto out = std::find_if(g.outputs.begin(), g.outputs.end(), [&](const ValueInfo& v) { return v.name == r.output; });
    if (out == g.outputs.end()) return invalid_argument(describe(r), ": the graph has no output '", r.output, "'");
    if (!seen.insert(r.output).second) return invalid_argument(describe(r), ": the output has a range already");
    Node* producer = nullptr;
    size_t slot = 0;
    for (Node& n : g.nodes) {
      for (size_t i = 0; i < n.outputs.size() && !producer; ++i) {
        if (n.outputs[i] == r.output) {
          producer = &n;
          slot = i;
        }
      }
    }
    if (!producer) return invalid_argument(describe(r), ": '", r.output, "' is a graph input or a constant");
    TypeInfo& type = out->type;
    const int64_t rank = type.has_shape ? static_cast<int64_t>(type.dims.size()) : -1;
    const int64_t axis = r.axis < 0 && rank >= 0 ? r.axis + rank : r.axis;
    if (axis < 0 || (rank >= 0 && axis >= rank)) {
      return invalid_argument(describe(r), rank >= 0 ? ": the output has rank " + std::to_string(rank)
                                                     : std::string(": a negative axis needs the output's rank"));
    }

    NameAllocator names(g);
    const std::string whole = names.fresh(r.output + "/whole");
    replace_uses(g, r.output, whole);
    producer->outputs[slot] = whole;
    for (ValueInfo& v : g.value_info) {
      if (v.name == r.output) v.name = whole;
    }
    Node slice;
    slice.op_type = "Slice";
    slice.name = names.fresh(r.output + "/range");
    slice.inputs = {whole};
    slice.outputs = {r.output};
    const auto import = model.opset_imports.find("");
    if (import != model.opset_imports.end() && import->second >= 10) {
      for (const auto& [what, value] :
           {std::pair<const char*, int64_t>{"start", r.start}, {"end", r.end}, {"axis", axis}})
        slice.inputs.push_back(
            add_initializer(g, names, r.output + "/range_" + what, Tensor::from_vector<int64_t>({value}, {1})));
    } else {  // Slice-1: the bounds as attributes
      slice.attributes = {ints_attribute("starts", r.start), ints_attribute("ends", r.end),
                          ints_attribute("axes", axis)};
    }
    g.nodes.push_back(std::move(slice));
    if (type.has_shape) {
      Dim& d = type.dims[static_cast<size_t>(axis)];
      d = d.known() ? Dim{std::max<int64_t>(0, slice_bound(r.end, d.value) - slice_bound(r.start, d.value)), ""}
                    : Dim{};
    }
  }
  return Status::ok();
}

}  // namespace xonnx
