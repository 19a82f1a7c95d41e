// Helpers of the layout pass's rewrite tests (test_layout_fusions.cc, test_layout_image_fusions.cc):
// sessions of a model on the fast or reference kernels, the NHWC ops of a rewritten graph, and
// the agreement of a rewritten session with the reference and with the graph unrewritten.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/ops/internal_ops.h"
#include "tests/unit/test_optimized_common.h"
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace layout_test {

using xnntest::expect_close;

inline Result<std::unique_ptr<Session>> session(const Model& m, int threads, bool reference = false) {
  SessionOptions o;
  o.num_threads = threads;
  o.disable_xnnpack = reference;
  return Session::create_from_model(m, o);
}

inline int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.domain == kNhwcDomain && node.op_type == op;
  return n;
}

// x through a model's sessions: `fast` (rewritten) close to `ref` (reference kernels), and the
// same bits as output `index` of `unrewritten` (the graph with the rewrite prevented), if given.
inline void expect_agree(Session& ref, Session& fast, Session* unrewritten, size_t index, const Tensor& x,
                         const std::string& what) {
  auto want = ref.run({Value(x)});
  auto got = fast.run({Value(x)});
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << want.status().to_string() << " / " << got.status().to_string();
  const std::string at = " at " + shape_to_string(x.shape());
  expect_close((*got)[0].tensor(), (*want)[0].tensor(), 1e-4, 1e-5, what + ": vs reference" + at);
  if (!unrewritten) return;
  auto same = unrewritten->run({Value(x)});
  ASSERT_TRUE(same.is_ok()) << same.status().to_string();
  const Tensor& a = (*got)[0].tensor();
  const Tensor& b = (*same)[index].tensor();
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_TRUE(opttest::same_bits(std::vector<float>(a.data<float>(), a.data<float>() + a.numel()),
                                 std::vector<float>(b.data<float>(), b.data<float>() + b.numel())))
      << what << ": vs the graph without the rewrite" << at;
}

}  // namespace layout_test
}  // namespace xonnx
