// com.microsoft GatherBlockQuantized: the reference kernel against hand-computed dequantized rows
// (ORT's layouts: packed uint8 with bits 4 / 8, uint4 / int4), its errors, and the converter's
// `--quantize-gather` rewrite of embedding tables (alone and tied to an lm_head MatMul).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "converter/quantize/quantize.h"
#include "converter/writer.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_int;
using testing::run_op;
using testing::tensor_of;
using testing::tv;

constexpr const char* kMs = "com.microsoft";

std::vector<Attribute> gbq_attrs(int64_t block, int64_t bits, int64_t gather_axis = 0, int64_t quantize_axis = 1) {
  return {attr_int("gather_axis", gather_axis), attr_int("quantize_axis", quantize_axis), attr_int("block_size", block),
          attr_int("bits", bits)};
}

Result<std::vector<Value>> run_gbq(const std::vector<Value>& in, const std::vector<Attribute>& attrs) {
  return run_op("GatherBlockQuantized", in, attrs, 17, 1, kMs);
}

// Codes [v, d] packed two per byte (low nibble first) along each row: ORT's uint8 bits=4 layout.
std::vector<uint8_t> pack4(const std::vector<int>& codes) {
  std::vector<uint8_t> out((codes.size() + 1) / 2, 0);
  for (size_t i = 0; i < codes.size(); ++i) out[i / 2] |= static_cast<uint8_t>((codes[i] & 0xF) << ((i % 2) * 4));
  return out;
}

Value int4_value(DataType dt, const std::vector<int>& codes, Shape shape) {
  auto allocated = Tensor::allocate(dt, std::move(shape));
  Tensor t = std::move(*allocated);
  const std::vector<uint8_t> packed = pack4(codes);
  std::memcpy(t.raw_data(), packed.data(), packed.size());
  return Value(t);
}

// Table of V=3 rows, D=18 (blocks of 16: one full, one of 2), codes (r * 5 + c) % 16.
struct Table4 {
  int64_t v = 3, d = 18, blocks = 2;
  std::vector<int> codes;
  std::vector<float> scales = {0.5f, 0.25f, 1.0f, 2.0f, 0.125f, 4.0f};
  Table4() {
    for (int64_t r = 0; r < v; ++r) {
      for (int64_t c = 0; c < d; ++c) codes.push_back(static_cast<int>((r * 5 + c) % 16));
    }
  }
  float at(int64_t r, int64_t c, int zp) const {
    return static_cast<float>(codes[r * d + c] - zp) * scales[r * blocks + c / 16];
  }
};

void expect_rows(const Value& got, const std::vector<int64_t>& rows, int64_t d,
                 const std::function<float(int64_t, int64_t)>& want) {
  const std::vector<float> y = testing::values<float>(got);
  ASSERT_EQ(y.size(), rows.size() * d);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t c = 0; c < d; ++c) EXPECT_FLOAT_EQ(y[i * d + c], want(rows[i], c)) << "row " << i << " col " << c;
  }
}

TEST(GatherBlockQuantized, Uint8Bits4DefaultZeroPoint8WithNegativeIndices) {
  Table4 t;
  auto r =
      run_gbq({tv<uint8_t>(pack4(t.codes), {3, 9}), tv<int64_t>({2, 0, -1, -3}, {2, 2}), tv<float>(t.scales, {3, 2})},
              gbq_attrs(16, 4));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2, 18}));
  expect_rows((*r)[0], {2, 0, 2, 0}, t.d, [&](int64_t row, int64_t c) { return t.at(row, c, 8); });
}

TEST(GatherBlockQuantized, Uint8Bits4PackedZeroPointsAndInt32Indices) {
  Table4 t;
  // zero points [V, ceil(2 / 2)]: block 0 in the low nibble, block 1 in the high one.
  const std::vector<uint8_t> zp = {0x31, 0x7F, 0x08};
  const int zps[3][2] = {{1, 3}, {15, 7}, {8, 0}};
  auto r = run_gbq({tv<uint8_t>(pack4(t.codes), {3, 9}), tv<int32_t>({1, 2}, {2}), tv<float>(t.scales, {3, 2}),
                    tv<uint8_t>(zp, {3, 1})},
                   gbq_attrs(16, 4));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  expect_rows((*r)[0], {1, 2}, t.d, [&](int64_t row, int64_t c) {
    return static_cast<float>(t.codes[row * t.d + c] - zps[row][c / 16]) * t.scales[row * 2 + c / 16];
  });
}

TEST(GatherBlockQuantized, Uint8Bits8OddRowLengthDefaultZeroPoint128) {
  const int64_t v = 2, d = 17;  // blocks of 16: one full, one of a single element
  std::vector<uint8_t> codes;
  for (int64_t i = 0; i < v * d; ++i) codes.push_back(static_cast<uint8_t>(100 + 3 * i));
  const std::vector<float> scales = {0.5f, 2.0f, 0.25f, 8.0f};
  auto r =
      run_gbq({tv<uint8_t>(codes, {v, d}), tv<int32_t>({1, -2, 1}, {3}), tv<float>(scales, {v, 2})}, gbq_attrs(16, 8));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{3, 17}));
  expect_rows((*r)[0], {1, 0, 1}, d, [&](int64_t row, int64_t c) {
    return static_cast<float>(codes[row * d + c] - 128) * scales[row * 2 + c / 16];
  });
}

TEST(GatherBlockQuantized, Int4AndUint4DataUseZeroPointZeroAndOddRows) {
  // Logical shape [3, 17]: rows straddle bytes, which the packed-uint8 form cannot express.
  const int64_t v = 3, d = 17;
  std::vector<int> codes;
  for (int64_t i = 0; i < v * d; ++i) codes.push_back(static_cast<int>(i % 16));
  const std::vector<float> scales = {1.0f, 0.5f, 2.0f, 0.25f, 4.0f, 0.125f};
  for (DataType dt : {DataType::kUint4, DataType::kInt4}) {
    auto r =
        run_gbq({int4_value(dt, codes, {v, d}), tv<int64_t>({2, 1}, {2}), tv<float>(scales, {v, 2})}, gbq_attrs(16, 4));
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    expect_rows((*r)[0], {2, 1}, d, [&](int64_t row, int64_t c) {
      int code = codes[row * d + c];
      if (dt == DataType::kInt4 && code >= 8) code -= 16;
      return static_cast<float>(code) * scales[row * 2 + c / 16];
    });
  }
}

TEST(GatherBlockQuantized, Uint4GatherAlongAxis1QuantizedAlongAxis0) {
  // data [16, 3] quantized in blocks of 16 down each column: scales [1, 3]; gather column 2.
  std::vector<int> codes;
  for (int i = 0; i < 48; ++i) codes.push_back((i * 7) % 16);
  const std::vector<float> scales = {1.0f, 2.0f, 0.5f};
  auto r = run_gbq({int4_value(DataType::kUint4, codes, {16, 3}), tv<int64_t>({2}, {1}), tv<float>(scales, {1, 3})},
                   gbq_attrs(16, 4, /*gather_axis=*/1, /*quantize_axis=*/0));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{16, 1}));
  const std::vector<float> y = testing::values<float>((*r)[0]);
  for (int row = 0; row < 16; ++row) EXPECT_FLOAT_EQ(y[row], static_cast<float>(codes[row * 3 + 2]) * 0.5f) << row;
}

TEST(GatherBlockQuantized, Float16ScalesGiveFloat16Output) {
  Table4 t;
  std::vector<Float16> s;
  for (float x : t.scales) s.push_back(Float16{float_to_half(x)});
  auto r =
      run_gbq({tv<uint8_t>(pack4(t.codes), {3, 9}), tv<int64_t>({1}, {1}), tv<Float16>(s, {3, 2})}, gbq_attrs(16, 4));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].tensor().dtype(), DataType::kFloat16);
  const std::vector<double> y = testing::doubles((*r)[0]);
  for (int64_t c = 0; c < t.d; ++c) EXPECT_DOUBLE_EQ(y[c], t.at(1, c, 8)) << c;
}

TEST(GatherBlockQuantized, BadInputsAreClearErrors) {
  Table4 t;
  const Value data = tv<uint8_t>(pack4(t.codes), {3, 9});
  const Value scales = tv<float>(t.scales, {3, 2});
  auto expect_error = [](const Result<std::vector<Value>>& r, const std::string& words) {
    ASSERT_FALSE(r.is_ok());
    EXPECT_NE(r.status().to_string().find(words), std::string::npos) << r.status().to_string();
  };
  expect_error(run_gbq({data, tv<int64_t>({3}, {1}), scales}, gbq_attrs(16, 4)), "out of data bounds");
  expect_error(run_gbq({data, tv<int64_t>({-4}, {1}), scales}, gbq_attrs(16, 4)), "must be in [-3, 2]");
  expect_error(run_gbq({data, tv<int64_t>({0}, {1}), tv<float>({1, 2, 3}, {3, 1})}, gbq_attrs(16, 4)), "scales shape");
  expect_error(run_gbq({data, tv<int64_t>({0}, {1}), scales}, gbq_attrs(8, 4)), "block_size");
  expect_error(run_gbq({data, tv<int64_t>({0}, {1}), scales}, gbq_attrs(24, 4)), "block_size");
  expect_error(run_gbq({data, tv<int64_t>({0}, {1}), scales}, gbq_attrs(16, 3)), "bits must be 2, 4 or 8");
  expect_error(run_gbq({data, tv<int64_t>({0}, {1}), scales}, gbq_attrs(16, 4, 1, 1)), "gather_axis 0");
  expect_error(run_gbq({data, tv<float>({0}, {1}), scales}, gbq_attrs(16, 4)), "indices must be int32 or int64");
  expect_error(run_gbq({data, tv<int64_t>({0}, {1}), tv<uint8_t>({1, 2}, {1, 2})}, gbq_attrs(16, 4)),
               "scales must be float32 or float16");
  expect_error(
      run_gbq({int4_value(DataType::kInt4, t.codes, {3, 18}), tv<int64_t>({0}, {1}), scales}, gbq_attrs(16, 8)),
      "needs bits 4");
  expect_error(
      run_gbq({data, tv<int64_t>({0}, {1}), scales, tv<uint8_t>({0, 0, 0, 0, 0, 0}, {3, 2})}, gbq_attrs(16, 4)),
      "zero_points shape");
}

// ---------------------------------------------------------------- converter
namespace cv = convert;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// ids [n] -> Gather(emb [v, d]) -> h; with `tied_lm_head`, also logits = MatMul(h, Transpose(emb)).
Model embedding_model(const std::vector<float>& emb, int64_t v, int64_t d, bool tied_lm_head) {
  Model m;
  m.ir_version = 8;
  m.opset_imports[""] = 17;
  m.graph.initializers.push_back({"emb", tensor_of<float>(emb, {v, d})});
  m.graph.inputs.push_back(ValueInfo{"ids", {}});
  Node g;
  g.name = "wte";
  g.op_type = "Gather";
  g.inputs = {"emb", "ids"};
  g.outputs = {"h"};
  m.graph.nodes.push_back(g);
  if (!tied_lm_head) {
    m.graph.outputs.push_back(ValueInfo{"h", {}});
    return m;
  }
  Node t;
  t.op_type = "Transpose";
  t.inputs = {"emb"};
  t.outputs = {"emb_t"};
  Node mm;
  mm.name = "lm_head";
  mm.op_type = "MatMul";
  mm.inputs = {"h", "emb_t"};
  mm.outputs = {"logits"};
  m.graph.nodes.push_back(t);
  m.graph.nodes.push_back(mm);
  m.graph.outputs.push_back(ValueInfo{"logits", {}});
  return m;
}

std::vector<float> run_ids(Model m, const std::vector<int64_t>& ids) {
  auto session = Session::create_from_model(std::move(m));
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = (*session)->run({tv<int64_t>(ids, {static_cast<int64_t>(ids.size())})});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (!out.is_ok()) return {};
  return testing::values<float>((*out)[0]);
}

// Quantizes a [50, 72] table (72: two full blocks of 32 and one of 8) and checks every gathered
// element against half a block step: max|block| / 7 (int4) or / 127 (int8), halved.
void check_gather_table(cv::QuantizeMode mode, int64_t bits, double levels) {
  const int64_t v = 50, d = 72, block = 32;
  const std::vector<float> emb = random_floats(static_cast<size_t>(v * d), 21);
  Model model = embedding_model(emb, v, d, false);
  cv::QuantizeOptions opt;
  opt.mode = mode;
  opt.quantize_gather = true;
  auto r = cv::quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 1u);
  EXPECT_EQ(r->quantized[0].weight, "emb");
  ASSERT_EQ(model.graph.nodes.size(), 1u);
  const Node& n = model.graph.nodes[0];
  EXPECT_EQ(n.op_type, "GatherBlockQuantized");
  EXPECT_EQ(n.find_attr("bits")->i, bits);
  EXPECT_EQ(n.find_attr("block_size")->i, block);
  for (const NamedTensor& t : model.graph.initializers) EXPECT_NE(t.name, "emb");  // the float table went
  const std::vector<int64_t> ids = {0, 49, -1, 7, 7};
  const std::vector<float> got = run_ids(std::move(model), ids);
  ASSERT_EQ(got.size(), ids.size() * d);
  double worst = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t row = ids[i] < 0 ? ids[i] + v : ids[i];
    for (int64_t c = 0; c < d; ++c) {
      float max_abs = 0;
      for (int64_t k = c / block * block; k < std::min(d, c / block * block + block); ++k) {
        max_abs = std::max(max_abs, std::fabs(emb[row * d + k]));
      }
      const double err = std::fabs(got[i * d + c] - emb[row * d + c]);
      worst = std::max(worst, err);
      EXPECT_LE(err, max_abs / levels / 2 + 1e-6) << "id " << ids[i] << " col " << c;
    }
  }
  EXPECT_GT(worst, 0.0);  // it really was quantized
  EXPECT_LE(worst, r->quantized[0].max_abs_error + 1e-7);
}

TEST(QuantizeGather, Int4TableRunsWithinHalfABlockStep) { check_gather_table(cv::QuantizeMode::kInt4, 4, 7.0); }

TEST(QuantizeGather, Int8TableRunsWithinHalfABlockStep) { check_gather_table(cv::QuantizeMode::kInt8, 8, 127.0); }

TEST(QuantizeGather, TiedEmbeddingShrinksAndStillRuns) {
  const int64_t v = 64, d = 64;
  const std::vector<float> emb = random_floats(static_cast<size_t>(v * d), 5);
  const Model original = embedding_model(emb, v, d, true);
  const std::vector<int64_t> ids = {3, 0, 63};
  const std::vector<float> want = run_ids(original, ids);
  Model model = original;
  cv::QuantizeOptions opt;
  opt.mode = cv::QuantizeMode::kInt4;
  opt.quantize_gather = true;
  auto r = cv::quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->quantized.size(), 2u);       // lm_head MatMul and the Gather
  ASSERT_EQ(model.graph.nodes.size(), 2u);  // the Transpose went with the MatMul's rewrite
  EXPECT_EQ(model.graph.nodes[0].op_type, "GatherBlockQuantized");
  EXPECT_EQ(model.graph.nodes[1].op_type, "MatMulNBits");
  for (const NamedTensor& t : model.graph.initializers) {
    EXPECT_FALSE(t.tensor.dtype() == DataType::kFloat && t.tensor.numel() == v * d) << "float table left: " << t.name;
  }
  // int4 alone keeps the float table for the Gather next to the lm_head's 4-bit copy.
  Model int4_only = original;
  cv::QuantizeOptions no_gather = opt;
  no_gather.quantize_gather = false;
  ASSERT_TRUE(cv::quantize_model(int4_only, no_gather).is_ok());
  auto before = cv::serialize_model(original);
  auto without = cv::serialize_model(int4_only);
  auto after = cv::serialize_model(model);
  ASSERT_TRUE(before.is_ok() && without.is_ok() && after.is_ok());
  EXPECT_LT(after->size() * 2, before->size()) << before->size() << " -> " << after->size();
  EXPECT_LT(after->size() * 3, without->size()) << without->size() << " -> " << after->size();
  const std::vector<float> got = run_ids(std::move(model), ids);
  ASSERT_EQ(got.size(), want.size());
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    dot += static_cast<double>(got[i]) * want[i];
    na += static_cast<double>(got[i]) * got[i];
    nb += static_cast<double>(want[i]) * want[i];
  }
  EXPECT_GT(dot / std::sqrt(na * nb), 0.98);
}

TEST(QuantizeGather, FloatTableStaysWhileAnExcludedMatMulReadsIt) {
  const int64_t v = 64, d = 64;
  Model model = embedding_model(random_floats(static_cast<size_t>(v * d), 6), v, d, true);
  cv::QuantizeOptions opt;
  opt.mode = cv::QuantizeMode::kInt4;
  opt.quantize_gather = true;
  opt.exclude = {"lm_head"};
  auto r = cv::quantize_model(model, opt);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->quantized.size(), 1u);
  EXPECT_EQ(model.graph.nodes[0].op_type, "GatherBlockQuantized");
  bool float_kept = false;
  for (const NamedTensor& t : model.graph.initializers) float_kept |= t.name == "emb";
  EXPECT_TRUE(float_kept);
  EXPECT_EQ(run_ids(std::move(model), {1, 2}).size(), 2u * v);
}

TEST(QuantizeGather, SkipsAndSaysWhy) {
  cv::QuantizeOptions opt;
  opt.mode = cv::QuantizeMode::kInt4;
  opt.quantize_gather = true;
  {
    Model odd = embedding_model(random_floats(4 * 33, 1), 4, 33, false);
    auto r = cv::quantize_model(odd, opt);
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_NE(r->skipped[0].why.find("odd"), std::string::npos) << r->skipped[0].why;
    EXPECT_EQ(odd.graph.nodes[0].op_type, "Gather");
  }
  {
    Model axis1 = embedding_model(random_floats(4 * 32, 1), 4, 32, false);
    axis1.graph.nodes[0].attributes.push_back(attr_int("axis", 1));
    auto r = cv::quantize_model(axis1, opt);
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_NE(r->skipped[0].why.find("axis 1"), std::string::npos) << r->skipped[0].why;
  }
  {
    Model excluded = embedding_model(random_floats(4 * 32, 1), 4, 32, false);
    cv::QuantizeOptions ex = opt;
    ex.exclude = {"Gather"};
    auto r = cv::quantize_model(excluded, ex);
    ASSERT_TRUE(r.is_ok());
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_EQ(excluded.graph.nodes[0].op_type, "Gather");
  }
  {
    Model off = embedding_model(random_floats(4 * 32, 1), 4, 32, false);
    cv::QuantizeOptions no = opt;
    no.quantize_gather = false;
    ASSERT_TRUE(cv::quantize_model(off, no).is_ok());
    EXPECT_EQ(off.graph.nodes[0].op_type, "Gather");  // opt-in only
  }
  cv::QuantizeOptions fp16 = opt;
  fp16.mode = cv::QuantizeMode::kFp16;
  Model m = embedding_model(random_floats(4 * 32, 1), 4, 32, false);
  EXPECT_FALSE(cv::quantize_model(m, fp16).is_ok());
}

}  // namespace
}  // namespace xonnx
