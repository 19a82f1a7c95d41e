// XNNPACK Conv vs the reference Conv over odd channel counts and geometries.
#include <algorithm>
#include <cmath>

#include "runtime/ops/internal_ops.h"
#include "tests/unit/test_xnnpack_common.h"

namespace xonnx {
namespace {

using namespace xnntest;

struct ConvCase {
  Shape x, w;
  std::vector<Attribute> attrs;
  bool bias = true;
};

void run_conv(const ConvCase& c, const std::string& what, bool expect_fast = true, uint32_t seed = 1) {
  std::vector<In> in = {var(rand_tensor(c.x, seed)), cst(rand_tensor(c.w, seed + 1))};
  if (c.bias) in.push_back(cst(rand_tensor({c.w[0]}, seed + 2)));
  // Rounding error of a dot product grows with its length (here up to 128*3*3 terms), and
  // XNNPACK's accumulation order differs by target (aarch64 FMA): atol scales with sqrt(K).
  const double k = static_cast<double>(shape_numel(c.w) / c.w[0]);
  diff_test("Conv", in, c.attrs, 17, expect_fast, what, 1e-4, 1e-5 * std::max(1.0, std::sqrt(k / 64)));
}

TEST(XnnpackConv, ChannelsAndKernels) {
  for (int64_t cin : {1, 3, 13, 127, 128}) {
    for (int64_t cout : {1, 3, 13, 128}) {
      if (cin * cout > 4096 && cin != cout) continue;  // keep the reference fast
      run_conv({{1, cin, 9, 7}, {cout, cin, 3, 3}, {attr_ints("pads", {1, 1, 1, 1})}},
               "3x3 cin " + std::to_string(cin) + " cout " + std::to_string(cout));
      run_conv({{2, cin, 5, 6}, {cout, cin, 1, 1}, {}},
               "1x1 cin " + std::to_string(cin) + " cout " + std::to_string(cout));
    }
  }
}

TEST(XnnpackConv, StridesDilationsPads) {
  run_conv({{2, 13, 17, 15},
            {3, 13, 3, 2},
            {attr_ints("strides", {2, 3}), attr_ints("dilations", {2, 1}), attr_ints("pads", {1, 0, 2, 1})}},
           "asymmetric");
  run_conv({{1, 3, 13, 13},
            {13, 3, 5, 5},
            {attr_ints("strides", {3, 3}), attr_ints("pads", {2, 2, 2, 2}), attr_ints("kernel_shape", {5, 5})}},
           "5x5 s3");
  run_conv({{1, 3, 13, 13}, {13, 3, 3, 3}, {attr_ints("dilations", {3, 2})}}, "dilated, no pads");
  run_conv({{1, 3, 1, 1}, {5, 3, 3, 3}, {attr_ints("pads", {1, 1, 1, 1})}}, "1x1 input, padded");
  run_conv({{3, 13, 7, 7}, {13, 13, 3, 3}, {attr_ints("pads", {1, 1, 1, 1})}, false}, "no bias");
}

TEST(XnnpackConv, GroupsAndDepthwise) {
  run_conv({{1, 12, 9, 9}, {6, 4, 3, 3}, {attr_int("group", 3), attr_ints("pads", {1, 1, 1, 1})}}, "group 3");
  run_conv({{2, 6, 7, 8}, {6, 2, 1, 1}, {attr_int("group", 3)}}, "group 3 1x1");
  for (int64_t c : {1, 3, 13, 127, 128}) {
    run_conv({{1, c, 11, 9},
              {c, 1, 3, 3},
              {attr_int("group", c), attr_ints("pads", {1, 1, 1, 1}), attr_ints("strides", {2, 2})}},
             "depthwise 3x3 s2 c " + std::to_string(c));
    run_conv({{1, c, 11, 9}, {c, 1, 5, 5}, {attr_int("group", c), attr_ints("pads", {2, 2, 2, 2})}},
             "depthwise 5x5 c " + std::to_string(c));
  }
  run_conv({{1, 3, 8, 8}, {6, 1, 3, 3}, {attr_int("group", 3), attr_ints("dilations", {2, 2})}},
           "depth multiplier 2, dilated");
}

TEST(XnnpackConv, AutoPad) {
  for (const char* ap : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t s : {1, 2, 3}) {
      for (int64_t hw : {1, 6, 7, 13}) {
        run_conv({{1, 3, hw, hw + 1}, {4, 3, 3, 2}, {attr_string("auto_pad", ap), attr_ints("strides", {s, s})}},
                 std::string(ap) + " s" + std::to_string(s) + " in " + std::to_string(hw),
                 hw >= 3 || std::string(ap) != "VALID");
      }
      run_conv({{1, 3, 8, 8}, {4, 3, 1, 1}, {attr_string("auto_pad", ap), attr_ints("strides", {s, s})}},
               std::string(ap) + " 1x1 s" + std::to_string(s));
    }
  }
}

TEST(XnnpackConv, DeclinesWhatItDoesNotCover) {
  // Non-constant weights.
  diff_test("Conv", {var(rand_tensor({1, 3, 5, 5}, 1)), var(rand_tensor({2, 3, 3, 3}, 2))}, {}, 17, false, "runtime W");
  // 3-D (1-D runs on XNNPACK as a 1 x k kernel: test_xnnpack_conv1d_deconv.cc).
  diff_test("Conv", {var(rand_tensor({1, 2, 4, 4, 4}, 1)), cst(rand_tensor({2, 2, 3, 3, 3}, 2))}, {}, 17, false, "3-D");
  // Errors stay the reference kernel's: wrong channel count, input smaller than the kernel.
  diff_test("Conv", {var(rand_tensor({1, 4, 5, 5}, 1)), cst(rand_tensor({2, 3, 3, 3}, 2))}, {}, 17, false,
            "channel mismatch");
  diff_test("Conv", {var(rand_tensor({1, 3, 2, 5}, 1)), cst(rand_tensor({2, 3, 3, 3}, 2))}, {}, 17, false,
            "input smaller than kernel");
}

TEST(XnnpackConv, InputShapeChanges) {
  const Tensor w = rand_tensor({5, 3, 3, 3}, 7);
  for (const char* ap : {"NOTSET", "SAME_UPPER"}) {
    std::vector<Attribute> attrs = {attr_string("auto_pad", ap), attr_ints("strides", {2, 2})};
    auto fast = make_session("Conv", {var(rand_tensor({1, 3, 13, 13}, 0)), cst(w)}, attrs, 17, false);
    auto ref = make_session("Conv", {var(rand_tensor({1, 3, 13, 13}, 0)), cst(w)}, attrs, 17, true);
    ASSERT_TRUE(fast.is_ok() && ref.is_ok());
    int i = 0;
    for (const Shape& s : std::vector<Shape>{{1, 3, 13, 13}, {2, 3, 7, 9}, {1, 3, 13, 13}, {1, 3, 12, 12}}) {
      const Tensor x = rand_tensor(s, 100 + i++);
      auto want = (*ref)->run({x});
      auto got = (*fast)->run({x});
      ASSERT_TRUE(want.is_ok() && got.is_ok());
      expect_close((*got)[0].tensor(), (*want)[0].tensor(), 1e-4, 1e-5, std::string(ap) + " " + shape_to_string(s));
    }
  }
}

TEST(XnnpackConv, GroupedNhwcSplitsItsGroupsOverTheThreads) {
  // The layout pass's NHWC Conv: on several threads, one operator per range of groups (6 groups
  // of 8 -> 4 channels over 1, 2 and 4 threads: ranges of 6, 3 + 3 and 1 + 2 + 1 + 2 groups; a
  // stride-2 depthwise layer of 48 channels), with the fused Relu's range and, for the large
  // case, work enough for the session's pool.
  for (const auto& [h, depthwise] : {std::pair<int64_t, bool>{5, false}, {40, false}, {40, true}}) {
    const std::vector<In> in = {var(rand_tensor({2, h, h + 1, 48}, 3)),
                                cst(rand_tensor(depthwise ? Shape{48, 1, 3, 3} : Shape{24, 8, 3, 3}, 4)),
                                cst(rand_tensor({depthwise ? 48 : 24}, 5))};
    std::vector<Attribute> attrs = {attr_int("group", depthwise ? 48 : 6), attr_ints("pads", {1, 1, 1, 1}),
                                    attr_float("activation_min", 0.0f)};
    if (depthwise) attrs.push_back(attr_ints("strides", {2, 2}));
    const Model model = backendtest::one_node_model({"Conv", kNhwcDomain, 17}, in, attrs);
    SessionOptions ref_options;
    ref_options.disable_xnnpack = true;
    ref_options.disable_optimized = true;
    auto ref = Session::create_from_model(Model(model), ref_options);
    ASSERT_TRUE(ref.is_ok()) << ref.status().to_string();
    const std::vector<Value> given = runtime_values(in);
    auto want = (*ref)->run(given);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    for (const int threads : {1, 2, 4}) {
      SCOPED_TRACE("h " + std::to_string(h) + (depthwise ? ", depthwise" : "") + ", threads " +
                   std::to_string(threads));
      SessionOptions options;
      options.disable_optimized = true;
      options.num_threads = threads;
      auto fast = Session::create_from_model(Model(model), options);
      ASSERT_TRUE(fast.is_ok()) << fast.status().to_string();
      for (int run = 0; run < 2; ++run) {  // the second run rebinds the operators' pointers
        const uint64_t before = xnn::run_count();
        auto got = (*fast)->run(given);
        ASSERT_TRUE(got.is_ok()) << got.status().to_string();
        EXPECT_EQ(xnn::run_count() - before, static_cast<uint64_t>(threads)) << "operators run";
        expect_close((*got)[0].tensor(), (*want)[0].tensor(), 1e-4, 1e-5, "grouped NHWC");
      }
    }
  }
}

}  // namespace
}  // namespace xonnx
