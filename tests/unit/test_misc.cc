// Misc ops: NonMaxSuppression, string ops, RegexFullMatch, BitCast, TfIdfVectorizer and the
// ai.onnx.ml LabelEncoder / Binarizer / ArrayFeatureExtractor.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/ops/registry.h"
#include "tests/unit/op_test_util.h"

namespace xonnx {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;
using testing::attr_string;
using testing::attr_strings;
using testing::run_op;
using testing::tv;
using testing::values;

Value strs(std::vector<std::string> v, Shape s) { return tv<std::string>(std::move(v), std::move(s)); }
std::vector<std::string> str_values(const Value& v) {
  const Tensor& t = v.tensor();
  return std::vector<std::string>(t.string_data(), t.string_data() + t.numel());
}

TEST(MiscOps, NonMaxSuppressionSuppressesOverlaps) {
  // box 0 and 1 overlap heavily (IoU 0.81), box 2 is apart
  std::vector<float> boxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11};
  auto r = run_op("NonMaxSuppression",
                  {tv<float>(boxes, {1, 3, 4}), tv<float>({0.9f, 0.95f, 0.5f}, {1, 1, 3}), tv<int64_t>({3}, {1}),
                   tv<float>({0.5f}, {1}), tv<float>({0.0f}, {1})},
                  {}, 11);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // max_output_boxes_per_class limits; score threshold filters
  r = run_op("NonMaxSuppression",
             {tv<float>(boxes, {1, 3, 4}), tv<float>({0.9f, 0.95f, 0.5f}, {1, 1, 3}), tv<int64_t>({1}, {1}),
              tv<float>({0.5f}, {1}), tv<float>({0.0f}, {1})},
             {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 0, 1}));
  r = run_op("NonMaxSuppression",
             {tv<float>(boxes, {1, 3, 4}), tv<float>({0.9f, 0.95f, 0.5f}, {1, 1, 3}), tv<int64_t>({3}, {1}),
              tv<float>({1.0f}, {1}), tv<float>({0.6f}, {1})},
             {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 0}));
  // no max_output_boxes_per_class: nothing selected
  r = run_op("NonMaxSuppression", {tv<float>(boxes, {1, 3, 4}), tv<float>({0.9f, 0.95f, 0.5f}, {1, 1, 3})}, {}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{0, 3}));
  // center-point format: same boxes as centers
  std::vector<float> centers = {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 10.5f, 0.5f, 1, 1};
  r = run_op("NonMaxSuppression",
             {tv<float>(centers, {1, 3, 4}), tv<float>({0.9f, 0.95f, 0.5f}, {1, 1, 3}), tv<int64_t>({3}, {1}),
              tv<float>({0.5f}, {1})},
             {attr_int("center_point_box", 1)}, 11);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  // mismatched scores shape
  EXPECT_FALSE(
      run_op("NonMaxSuppression", {tv<float>(boxes, {1, 3, 4}), tv<float>({0.9f, 0.95f}, {1, 1, 2})}, {}, 11).is_ok());
}

TEST(MiscOps, StringNormalizer) {
  auto r = run_op("StringNormalizer", {strs({"Monday", "tuesday", "monday"}, {3})},
                  {attr_string("case_change_action", "UPPER"), attr_strings("stopwords", {"monday"})}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{"TUESDAY"}));
  r = run_op("StringNormalizer", {strs({"Monday", "tuesday", "monday"}, {1, 3})},
             {attr_string("case_change_action", "LOWER"), attr_int("is_case_sensitive", 1),
              attr_strings("stopwords", {"monday"})},
             10);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 2}));
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{"monday", "tuesday"}));
  r = run_op("StringNormalizer", {strs({"a"}, {1})}, {attr_strings("stopwords", {"A"})}, 10);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{""}));
  EXPECT_FALSE(run_op("StringNormalizer", {strs({"a", "b"}, {2, 1})}, {}, 10).is_ok());
  EXPECT_FALSE(
      run_op("StringNormalizer", {strs({"a"}, {1})}, {attr_string("case_change_action", "TITLE")}, 10).is_ok());
}

TEST(MiscOps, StringConcatBroadcasts) {
  auto r = run_op("StringConcat", {strs({"a", "b"}, {2, 1}), strs({"x", "y", "z"}, {3})}, {}, 20);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{"ax", "ay", "az", "bx", "by", "bz"}));
  EXPECT_FALSE(run_op("StringConcat", {strs({"a", "b"}, {2}), strs({"x", "y", "z"}, {3})}, {}, 20).is_ok());
  EXPECT_FALSE(run_op("StringConcat", {strs({"a"}, {1}), tv<float>({1}, {1})}, {}, 20).is_ok());
}

TEST(MiscOps, StringSplit) {
  auto r = run_op("StringSplit", {strs({"a,b,,c", "d"}, {2})}, {attr_string("delimiter", ",")}, 20, 2);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 4}));
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{"a", "b", "", "c", "d", "", "", ""}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{4, 1}));
  r = run_op("StringSplit", {strs({"  x  y z ", ""}, {2})}, {attr_int("maxsplit", 1)}, 20, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{"x", "y z ", "", ""}));
  EXPECT_EQ(values<int64_t>((*r)[1]), (std::vector<int64_t>{2, 0}));
  EXPECT_FALSE(run_op("StringSplit", {tv<float>({1}, {1})}, {}, 20, 2).is_ok());
}

TEST(MiscOps, RegexFullMatch) {
  auto r = run_op("RegexFullMatch", {strs({"www.google.com", "www.x.org", "google.com"}, {3})},
                  {attr_string("pattern", R"(www\.[\w.-]+\.com)")}, 20);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto v = values<bool>((*r)[0]);
  EXPECT_TRUE(v[0]);
  EXPECT_FALSE(v[1]);
  EXPECT_FALSE(v[2]);
  EXPECT_FALSE(run_op("RegexFullMatch", {strs({"a"}, {1})}, {attr_string("pattern", "(")}, 20).is_ok());
}

TEST(MiscOps, BitCastReinterpretsBits) {
  if (!OpRegistry::onnx_versions("BitCast")) GTEST_SKIP() << "BitCast not in the ONNX version table yet";
  auto r = run_op("BitCast", {tv<float>({1.0f, -2.0f}, {2})}, {attr_int("to", 6)}, 26);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().dtype(), DataType::kInt32);
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{0x3f800000, static_cast<int32_t>(0xc0000000u)}));
  EXPECT_FALSE(run_op("BitCast", {tv<float>({1.0f}, {1})}, {attr_int("to", 7)}, 26).is_ok());
  EXPECT_FALSE(run_op("BitCast", {strs({"a"}, {1})}, {attr_int("to", 2)}, 26).is_ok());
}

TEST(MiscOps, TfIdfVectorizerCountsSkipGrams) {
  // pool: unigrams {2, 3}, bigrams {(2,3)}; indexes 0,1,2
  std::vector<Attribute> attrs = {attr_int("min_gram_length", 1),        attr_int("max_gram_length", 2),
                                  attr_int("max_skip_count", 1),         attr_string("mode", "TF"),
                                  attr_ints("ngram_counts", {0, 2}),     attr_ints("ngram_indexes", {0, 1, 2}),
                                  attr_ints("pool_int64s", {2, 3, 2, 3})};
  auto r = run_op("TfIdfVectorizer", {tv<int64_t>({2, 3, 9, 3}, {4})}, attrs, 9);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  // unigram 2 once, 3 twice; (2,3) adjacent and with one skip (2 _ 3 at positions 0,2? no: 9) -> once
  // positions: 2@0, 3@1, 9@2, 3@3. bigrams skip0: (2,3) at 0-1; skip1: (2,9) (3,3) -> only one (2,3)
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{1, 2, 1}));
  attrs[3] = attr_string("mode", "TFIDF");
  attrs.push_back(testing::attr_floats("weights", {0.5f, 2.0f, 3.0f}));
  r = run_op("TfIdfVectorizer", {tv<int32_t>({2, 3, 2, 3}, {2, 2})}, attrs, 9);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0.5f, 2, 3, 0.5f, 2, 3}));
  // strings pool
  r = run_op("TfIdfVectorizer", {strs({"a", "b", "a"}, {3})},
             {attr_int("min_gram_length", 1), attr_int("max_gram_length", 1), attr_int("max_skip_count", 0),
              attr_string("mode", "IDF"), attr_ints("ngram_counts", {0}), attr_ints("ngram_indexes", {1, 0}),
              attr_strings("pool_strings", {"a", "c"})},
             9);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1}));
  // bad mode and type mismatch
  attrs[3] = attr_string("mode", "BM25");
  EXPECT_FALSE(run_op("TfIdfVectorizer", {tv<int64_t>({2}, {1})}, attrs, 9).is_ok());
  attrs[3] = attr_string("mode", "TF");
  EXPECT_FALSE(run_op("TfIdfVectorizer", {strs({"a"}, {1})}, attrs, 9).is_ok());
}

// Hostile attributes (found by fuzzing): an index near 2^63 asks for an output the memory cap
// refuses (it was a double buffer of that size, allocated unchecked); INT64_MAX itself cannot
// be a width; skip and gram lengths near 2^62 stop at the row's end instead of looping.
TEST(MiscOps, TfIdfVectorizerHostileAttributesAreBounded) {
  auto attrs = [](int64_t min_gram, int64_t max_gram, int64_t max_skip, int64_t index) {
    return std::vector<Attribute>{attr_int("min_gram_length", min_gram), attr_int("max_gram_length", max_gram),
                                  attr_int("max_skip_count", max_skip),  attr_string("mode", "TF"),
                                  attr_ints("ngram_counts", {0, 2}),     attr_ints("ngram_indexes", {0, 1, index}),
                                  attr_ints("pool_int64s", {2, 3, 2, 3})};
  };
  const Value x = tv<int64_t>({2, 3, 9, 3}, {4});
  auto huge = run_op("TfIdfVectorizer", {x}, attrs(1, 2, 1, int64_t{1} << 58), 9);
  ASSERT_FALSE(huge.is_ok());
  EXPECT_NE(huge.status().message().find("TfIdfVectorizer"), std::string::npos) << huge.status().to_string();
  EXPECT_FALSE(run_op("TfIdfVectorizer", {x}, attrs(1, 2, 1, INT64_MAX), 9).is_ok());
  auto far = run_op("TfIdfVectorizer", {x}, attrs(1, int64_t{1} << 62, int64_t{1} << 62, 2), 9);
  ASSERT_TRUE(far.is_ok()) << far.status().to_string();
  EXPECT_EQ(values<float>((*far)[0]), (std::vector<float>{1, 2, 2}));  // (2, 3) also two apart
  auto long_grams = run_op("TfIdfVectorizer", {x}, attrs(int64_t{1} << 62, int64_t{1} << 62, 3, 2), 9);
  ASSERT_TRUE(long_grams.is_ok()) << long_grams.status().to_string();
  EXPECT_EQ(values<float>((*long_grams)[0]), (std::vector<float>{0, 0, 0}));
}

TEST(MiscOps, MlLabelEncoderBinarizerArrayFeatureExtractor) {
  const std::string ml = "ai.onnx.ml";
  // LabelEncoder-1 (run_op imports ai.onnx.ml 1): classes_strings both ways
  auto r = run_op("LabelEncoder", {strs({"b", "z", "a"}, {3})},
                  {attr_strings("classes_strings", {"a", "b"}), attr_int("default_int64", 7)}, 17, 1, ml);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{1, 7, 0}));
  r = run_op("LabelEncoder", {tv<int64_t>({1, 5}, {2})}, {attr_strings("classes_strings", {"a", "b"})}, 17, 1, ml);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{"b", "_Unused"}));
  r = run_op("Binarizer", {tv<float>({-1, 0.5f, 2}, {3})}, {attr_float("threshold", 0.5f)}, 17, 1, ml);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 0, 1}));
  r = run_op("ArrayFeatureExtractor", {tv<float>({1, 2, 3, 4, 5, 6}, {2, 3}), tv<int64_t>({2, 0}, {2})}, {}, 17, 1, ml);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{3, 1, 6, 4}));
  r = run_op("ArrayFeatureExtractor", {strs({"p", "q"}, {2}), tv<int64_t>({1}, {1})}, {}, 17, 1, ml);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ((*r)[0].tensor().shape(), (Shape{1, 1}));
  EXPECT_EQ(str_values((*r)[0]), (std::vector<std::string>{"q"}));
  EXPECT_FALSE(run_op("ArrayFeatureExtractor", {tv<float>({1, 2}, {2}), tv<int64_t>({2}, {1})}, {}, 17, 1, ml).is_ok());
}

}  // namespace
}  // namespace xonnx
