// Differential tests of the optimized GRU and LSTM (runtime/ops/optimized/rnn.cc) against the
// reference kernels (ref/rnn.cc): hidden and input sizes around the vector widths, all
// directions and layouts, biases, initial states, sequence lengths, linear_before_reset, at 1
// and 2 threads; and the cases left to the reference (other activations, clip, peepholes,
// weights that are not constants).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/test_optimized_common.h"

namespace xonnx {
namespace {

using namespace opttest;
using testing::attr_strings;

constexpr double kRtol = 1e-4, kAtol = 2e-5;

struct Case {
  bool lstm = false;
  int64_t seq = 4, batch = 2, in = 5, hidden = 3;
  std::string direction = "forward";
  int64_t layout = 0;
  bool bias = true, initial = false, lens = false, lbr = false;
  std::vector<Attribute> extra;
  bool weights_constant = true;
  bool peepholes = false;
};

void check(const Case& c, bool expect_fast, const std::string& what) {
  const int64_t dirs = c.direction == "bidirectional" ? 2 : 1, G = c.lstm ? 4 : 3, H = c.hidden;
  const Shape xs = c.layout == 0 ? Shape{c.seq, c.batch, c.in} : Shape{c.batch, c.seq, c.in};
  const Shape state = c.layout == 0 ? Shape{dirs, c.batch, H} : Shape{c.batch, dirs, H};
  std::vector<In> inputs{var(rand_tensor(xs, 1, -2, 2))};
  auto weights = [&](Tensor t) { return c.weights_constant ? cst(std::move(t)) : var(std::move(t)); };
  inputs.push_back(weights(rand_tensor({dirs, G * H, c.in}, 2, -0.6f, 0.6f)));
  inputs.push_back(weights(rand_tensor({dirs, G * H, H}, 3, -0.6f, 0.6f)));
  inputs.push_back(c.bias ? cst(rand_tensor({dirs, 2 * G * H}, 4)) : In{});
  if (c.lens) {
    std::vector<int32_t> l(static_cast<size_t>(c.batch));
    for (int64_t b = 0; b < c.batch; ++b) l[b] = static_cast<int32_t>((c.seq * (b + 1) / c.batch + b) % (c.seq + 1));
    l[0] = 0;  // an empty sequence keeps its initial state
    inputs.push_back(var(Tensor::from_vector<int32_t>(l, {c.batch})));
  } else {
    inputs.push_back(In{});
  }
  inputs.push_back(c.initial ? var(rand_tensor(state, 5)) : In{});
  if (c.lstm) {
    inputs.push_back(c.initial ? var(rand_tensor(state, 6)) : In{});
    if (c.peepholes) inputs.push_back(cst(rand_tensor({dirs, 3 * H}, 7)));
  }
  std::vector<Attribute> attrs{attr_int("hidden_size", H), attr_string("direction", c.direction),
                               attr_int("layout", c.layout)};
  if (!c.lstm) attrs.push_back(attr_int("linear_before_reset", c.lbr));
  attrs.insert(attrs.end(), c.extra.begin(), c.extra.end());
  const Op op(c.lstm ? "LSTM" : "GRU", "", 14, c.lstm ? 3 : 2);
  diff_test(op, inputs, attrs, expect_fast, what, kRtol, kAtol);
}

TEST(OptimizedRnn, SizesAroundTheVectorWidths) {
  for (bool lstm : {false, true}) {
    for (int64_t n : kSizes) {
      Case c;
      c.lstm = lstm;
      c.hidden = n;
      c.in = n == 1 ? 2 : n - 1;
      c.seq = n > 100 ? 3 : 5;
      check(c, true, (lstm ? "lstm" : "gru") + std::string(" hidden ") + std::to_string(n));
      c.hidden = 3;
      c.in = n;
      check(c, true, (lstm ? "lstm" : "gru") + std::string(" input ") + std::to_string(n));
    }
  }
}

TEST(OptimizedRnn, DirectionsLayoutsStatesAndLengths) {
  for (bool lstm : {false, true}) {
    for (const char* dir : {"forward", "reverse", "bidirectional"}) {
      for (int64_t layout : {0, 1}) {
        for (int variant = 0; variant < 4; ++variant) {
          Case c;
          c.lstm = lstm;
          c.direction = dir;
          c.layout = layout;
          c.hidden = 13;
          c.in = 7;
          c.batch = 3;
          c.seq = 6;
          c.bias = variant != 1;
          c.initial = variant >= 2;
          c.lens = variant == 3;
          c.lbr = variant % 2 == 0;
          check(c, true,
                std::string(lstm ? "lstm " : "gru ") + dir + " layout " + std::to_string(layout) + " variant " +
                    std::to_string(variant));
        }
      }
    }
  }
}

TEST(OptimizedRnn, GruResetGateBothWays) {
  for (bool lbr : {false, true}) {
    Case c;
    c.hidden = 129;
    c.in = 31;
    c.seq = 3;
    c.lbr = lbr;
    c.initial = true;
    check(c, true, lbr ? "linear_before_reset" : "reset before the product");
  }
}

// Several column blocks of hidden units (64 each on AVX-512, the last one narrower), split
// over 2 threads: each thread's cells, rows that ended early and the state handed between steps.
TEST(OptimizedRnn, StepsSplitByHiddenUnits) {
  for (bool lstm : {false, true}) {
    for (bool lbr : {false, true}) {
      if (lstm && lbr) continue;
      Case c;
      c.lstm = lstm;
      c.lbr = lbr;
      c.layout = lbr ? 1 : 0;  // batch-major Y and states once
      c.hidden = 200;
      c.in = 24;
      c.batch = 3;
      c.seq = 5;
      c.direction = "bidirectional";
      c.initial = true;
      c.lens = true;
      check(c, true, std::string(lstm ? "lstm" : "gru") + (lbr ? " linear_before_reset" : ""));
    }
  }
}

TEST(OptimizedRnn, OtherVariantsStayWithTheReference) {
  Case relu;
  relu.extra = {attr_strings("activations", {"Relu", "Tanh"})};
  check(relu, false, "relu gate");
  Case clip;
  clip.extra = {attr_float("clip", 0.5f)};
  check(clip, false, "clip");
  Case input_weights;
  input_weights.weights_constant = false;
  check(input_weights, false, "weights as graph inputs");
  Case peep;
  peep.lstm = true;
  peep.peepholes = true;
  check(peep, false, "peepholes");
  Case defaults_named;  // the default activations spelled out (bidirectional: per direction)
  defaults_named.direction = "bidirectional";
  defaults_named.extra = {attr_strings("activations", {"Sigmoid", "Tanh", "Sigmoid", "Tanh"})};
  check(defaults_named, true, "activations spelled out");
}

}  // namespace
}  // namespace xonnx
