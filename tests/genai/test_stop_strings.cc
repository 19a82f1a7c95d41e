// StopStringMatcher: text released as soon as it cannot start a stop string, the earliest match
// wins, and nothing is released after it.
#include <gtest/gtest.h>

#include "sdk/genai/stop_strings.h"

namespace xonnx::genai {
namespace {

std::string stream(StopStringMatcher& m, const std::vector<std::string>& pieces, std::vector<std::string>* released) {
  std::string out;
  for (const std::string& p : pieces) {
    std::string r = m.put(p);
    if (released) released->push_back(r);
    out += r;
  }
  return out + m.flush();
}

TEST(StopStrings, HoldsBackPrefixesAndStops) {
  StopStringMatcher m({"\nUser:", "###"});
  std::vector<std::string> released;
  EXPECT_EQ(stream(m, {"Hello", " there\n", "Us", "er: more"}, &released), "Hello there");
  EXPECT_EQ(released[1], " there");  // "\n" held: it may start "\nUser:"
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "\nUser:");
  EXPECT_EQ(m.put("after"), "");

  m.reset();
  EXPECT_EQ(stream(m, {"a\nUse", "d #", "#x"}, nullptr), "a\nUsed ##x");  // prefixes that did not complete
  EXPECT_FALSE(m.stopped());

  m.reset();
  EXPECT_EQ(stream(m, {"x### and \nUser:"}, nullptr), "x");  // the earliest match
  EXPECT_EQ(m.matched(), "###");

  StopStringMatcher none({"", ""});
  EXPECT_EQ(none.put("abc"), "abc");
  EXPECT_FALSE(none.stopped());
}

}  // namespace
}  // namespace xonnx::genai
