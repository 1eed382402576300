// Request::CheckStop reads copies of the stop conditions kept in the
// request's hot cache lines (EOS ids inline up to kInlineEos, the vector
// beyond); both paths must stop exactly where the conditions say.
#include "engine_core/request.h"

#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace llmserve::engine_core {
namespace {

std::unique_ptr<Request> Make(StopConditions stop) {
  return std::make_unique<Request>(0, "req-0", std::vector<int32_t>{1, 2, 3}, std::move(stop));
}

// Appends `tokens` one by one; returns how many were appended when CheckStop
// first said stop, or -1.
int Feed(Request& r, const std::vector<int32_t>& tokens, int32_t max_model_len = 1000) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    r.AppendOutputToken(tokens[i]);
    if (r.CheckStop(max_model_len)) return static_cast<int>(i + 1);
  }
  return -1;
}

TEST(RequestTest, HotLinesAreCacheLineAligned) {
  EXPECT_EQ(alignof(Request), 64u);
  auto r = Make(StopConditions{});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.get()) % 64, 0u);
}

TEST(RequestTest, InlineEosStops) {
  StopConditions s;
  s.max_tokens = 10;
  s.eos_token_ids = {50, 60};
  auto r = Make(s);
  EXPECT_EQ(Feed(*r, {7, 8, 60, 9}), 3);
  EXPECT_EQ(r->status, RequestStatus::kFinishedStopped);
  EXPECT_EQ(r->stop_reason, -1);
  EXPECT_EQ(r->num_output_tokens(), 3);
}

TEST(RequestTest, ManyEosIdsUseTheVector) {
  StopConditions s;
  s.max_tokens = 10;
  s.eos_token_ids = {50, 60, 70, 80};
  auto r = Make(s);
  EXPECT_EQ(Feed(*r, {7, 80}), 2);
  EXPECT_EQ(r->status, RequestStatus::kFinishedStopped);
  auto other = Make(s);
  EXPECT_EQ(Feed(*other, {7, 8, 9}), -1);
  EXPECT_EQ(other->status, RequestStatus::kWaiting);
}

TEST(RequestTest, MinTokensAndIgnoreEos) {
  StopConditions s;
  s.max_tokens = 5;
  s.min_tokens = 2;
  s.eos_token_ids = {50};
  auto r = Make(s);
  EXPECT_EQ(Feed(*r, {50, 50, 9}), 2);  // the first EOS comes before min_tokens
  s.ignore_eos = true;
  auto ignoring = Make(s);
  EXPECT_EQ(Feed(*ignoring, {50, 50, 50, 50, 50, 50}), 5);
  EXPECT_EQ(ignoring->status, RequestStatus::kFinishedLengthCapped);
}

TEST(RequestTest, StopTokenIdIsTheReason) {
  StopConditions s;
  s.max_tokens = 10;
  s.ignore_eos = true;  // stop ids still apply
  s.eos_token_ids = {50};
  s.stop_token_ids = {42};
  auto r = Make(s);
  EXPECT_EQ(Feed(*r, {50, 42}), 2);
  EXPECT_EQ(r->status, RequestStatus::kFinishedStopped);
  EXPECT_EQ(r->stop_reason, 42);
}

TEST(RequestTest, MaxModelLenCaps) {
  StopConditions s;
  s.max_tokens = 100;
  auto r = Make(s);
  EXPECT_EQ(Feed(*r, {7, 8, 9}, /*max_model_len=*/5), 2);
  EXPECT_EQ(r->status, RequestStatus::kFinishedLengthCapped);
  EXPECT_EQ(r->num_tokens(), 5);
}

}  // namespace
}  // namespace llmserve::engine_core
