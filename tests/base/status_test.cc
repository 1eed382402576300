#include "base/status.h"

#include <gtest/gtest.h>

#include <string>

#include "base/status_or.h"

namespace llmserve {
namespace {

TEST(Status, OkAndErrorsPrint) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
  const Status s = Status::NotFound("no such model").WithContext("load");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: load: no such model");
}

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Status QuarterInto(int x, int* out) {
  LLMSERVE_ASSIGN_OR_RETURN(const int half, Half(x));
  LLMSERVE_ASSIGN_OR_RETURN(*out, Half(half));
  return Status::Ok();
}

TEST(StatusOr, CarriesValueOrError) {
  int q = 0;
  EXPECT_TRUE(QuarterInto(8, &q).ok());
  EXPECT_EQ(q, 2);
  EXPECT_EQ(QuarterInto(6, &q).code(), StatusCode::kInvalidArgument);
  StatusOr<std::string> s = std::string("abc");
  EXPECT_EQ(s->size(), 3u);
  EXPECT_EQ(std::move(s).value(), "abc");
}

TEST(StatusOrDeathTest, ValueOfAnErrorIsACheckFailure) {
  const StatusOr<int> bad = Status::Unavailable("peer gone");
  EXPECT_DEATH((void)bad.value(), "holding an error.*UNAVAILABLE: peer gone");
  EXPECT_DEATH((void)*bad, "holding an error");
}

TEST(StatusOrDeathTest, MadeFromAnOkStatusIsACheckFailure) {
  EXPECT_DEATH({ const StatusOr<int> made{Status::Ok()}; }, "made from an OK status");
}

}  // namespace
}  // namespace llmserve
