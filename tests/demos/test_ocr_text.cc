// CTC decoding with PaddleOCR's label layout, and the character error rate.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "sdk/examples/ocr/cer.h"
#include "sdk/examples/ocr/ctc.h"

namespace demo {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(Ctc, LabelsAddBlankFirstAndSpaceLast) {
  CtcLabels labels;
  ASSERT_TRUE(labels.load(write_temp("keys.txt", "a\r\nb\n\xC3\xA9")).ok());  // no final newline
  ASSERT_EQ(labels.class_count(), 5u);
  EXPECT_EQ(labels.label(1), "a");
  EXPECT_EQ(labels.label(2), "b");
  EXPECT_EQ(labels.label(3), "\xC3\xA9");
  EXPECT_EQ(labels.label(4), " ");
  ASSERT_TRUE(labels.load(write_temp("keys2.txt", "a\nb\n")).ok());  // a final newline adds no label
  EXPECT_EQ(labels.class_count(), 4u);
  EXPECT_FALSE(labels.load(write_temp("empty.txt", "")).ok());
  EXPECT_FALSE(labels.load("/nonexistent/keys.txt").ok());
}

TEST(Ctc, GreedyDecodeMergesRepeatsAndDropsBlanks) {
  CtcLabels labels;
  ASSERT_TRUE(labels.load(write_temp("keys3.txt", "a\nb\nc")).ok());  // classes: blank a b c space
  const int steps[] = {1, 1, 0, 1, 2, 4, 4, 3, 0};                    // a a _ a b ' ' ' ' c _
  std::vector<float> probs;
  for (int s : steps) {
    std::vector<float> row(5, 0.05f);
    row[s] = 0.8f;
    probs.insert(probs.end(), row.begin(), row.end());
  }
  probs[5 * 7 + 3] = 0.6f;  // c less sure
  const CtcText t = ctc_greedy_decode(probs.data(), 9, 5, labels);
  EXPECT_EQ(t.text, "aab c");
  EXPECT_NEAR(t.score, (0.8f * 4 + 0.6f) / 5, 1e-6);
  EXPECT_EQ(ctc_greedy_decode(probs.data(), 9, 4, labels).text, "");  // class count mismatch
  const std::vector<float> blanks = {0.9f, 0.1f, 0, 0, 0};
  EXPECT_EQ(ctc_greedy_decode(blanks.data(), 1, 5, labels).score, 0.0f);
}

TEST(Cer, EditDistanceOverCodePoints) {
  EXPECT_EQ(character_error_rate("abc", "abc").edits, 0u);
  const ErrorRate r = character_error_rate("abd", "abc");
  EXPECT_EQ(r.edits, 1u);
  EXPECT_NEAR(r.rate(), 1.0 / 3, 1e-12);
  EXPECT_EQ(character_error_rate("", "abc").edits, 3u);
  EXPECT_EQ(character_error_rate("abcx", "abc").edits, 1u);
  const ErrorRate u = character_error_rate("h\xC3\xA9llo", "hello");  // one code point, two bytes
  EXPECT_EQ(u.edits, 1u);
  EXPECT_EQ(u.reference_length, 5u);
  EXPECT_EQ(character_error_rate("\xFF", "").edits, 1u);  // an invalid byte is one symbol
  EXPECT_EQ(character_error_rate("x", "").rate(), 1.0);
}

}  // namespace
}  // namespace demo
