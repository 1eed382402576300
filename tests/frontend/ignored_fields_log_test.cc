// The warning for ignored request fields: vLLM's wording, once per set.
#include "frontend/serving/ignored_fields_log.h"

#include <gtest/gtest.h>

namespace llmserve::frontend::serving {
namespace {

TEST(IgnoredFieldsLog, NamesEachSetOnceInVllmWords) {
  IgnoredFieldsLog log;
  EXPECT_FALSE(log.Note({}).has_value());
  const auto first = log.Note({"foo", "bar"});
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(*first, "The following fields were present in the request but ignored: {'bar', 'foo'}");
  EXPECT_FALSE(log.Note({"bar", "foo"}).has_value());  // the same set, in another order
  EXPECT_FALSE(log.Note({"foo", "bar", "foo"}).has_value());
  EXPECT_TRUE(log.Note({"foo"}).has_value());  // another set
}

TEST(IgnoredFieldsLog, StopsRememberingAtItsBound) {
  IgnoredFieldsLog log(2);
  EXPECT_TRUE(log.Note({"a"}).has_value());
  const auto second = log.Note({"b"});
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->find("2 distinct sets named; further ones are not logged"), std::string::npos) << *second;
  EXPECT_FALSE(log.Note({"c"}).has_value());
  EXPECT_FALSE(log.Note({"a"}).has_value());
}

}  // namespace
}  // namespace llmserve::frontend::serving
