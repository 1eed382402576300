#include "base/utf8.h"

#include <gtest/gtest.h>

namespace llmserve::base {
namespace {

TEST(Utf8, RepairAndIncompletePrefix) {
  EXPECT_EQ(RepairUtf8("a\xE4\xBD" "b"), "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(RepairUtf8("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\xE4\xBD"), 2u);
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\xE4\xBD\xA0"), 5u);
  EXPECT_EQ(CompleteUtf8PrefixLength("ab\xFF"), 3u);
  EXPECT_TRUE(IsValidUtf8("h\xC3\xA9llo \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));  // a UTF-16 surrogate
}

TEST(Utf8, CodePointStringsRoundTrip) {
  const std::string s = "h\xC3\xA9" "\xE4\xBD\xA0" "\xF0\x9F\x98\x80";
  EXPECT_EQ(ToCodePoints(s), (std::u32string{U'h', 0xE9, 0x4F60, 0x1F600}));
  EXPECT_EQ(FromCodePoints(ToCodePoints(s)), s);
  EXPECT_EQ(CountCodePoints(s), 4u);
  EXPECT_FALSE(IsAscii(s));
  EXPECT_TRUE(IsAscii("plain"));
  // Each maximal invalid subpart is one U+FFFD, as Python's 'replace' decodes.
  EXPECT_EQ(ToCodePoints("a\xE4\xBD" "b"), (std::u32string{U'a', 0xFFFD, U'b'}));
}

}  // namespace
}  // namespace llmserve::base
