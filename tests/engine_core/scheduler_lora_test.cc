// The scheduler caps the distinct LoRA adapters of running requests at
// max_loras (vLLM's rule): a waiting request of a further adapter waits, the
// ones behind it may pass, and it is admitted once an adapter's requests end.
#include <gtest/gtest.h>

#include <map>

#include "engine_core/scheduler.h"
#include "tests/engine_core/scheduler_test_util.h"

namespace llmserve::engine_core::scheduler_lora_test {
namespace {

using testing::MakeRequest;
using testing::MakeScheduler;
using testing::Step;

proto::EngineCoreRequest WithLora(const std::string& id, const std::string& lora, int32_t max_tokens) {
  auto r = MakeRequest(id, 8, max_tokens, 100);
  if (!lora.empty()) r.lora_name = lora;
  return r;
}

std::map<std::string, std::string> NewWithLora(const proto::SchedulerOutput& so) {
  std::map<std::string, std::string> out;
  for (const auto& n : so.scheduled_new_reqs) out[n.req_id] = n.lora_name.value_or("");
  return out;
}

TEST(SchedulerLoraTest, AFurtherAdapterWaitsUntilOneEnds) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 256;
  c.max_num_seqs = 16;
  c.max_model_len = 64;
  c.max_loras = 2;
  auto s = MakeScheduler(c, 64);
  ASSERT_TRUE(s->AddRequest(WithLora("a", "x", 2)).ok());
  ASSERT_TRUE(s->AddRequest(WithLora("b", "y", 2)).ok());
  ASSERT_TRUE(s->AddRequest(WithLora("c", "z", 2)).ok());
  ASSERT_TRUE(s->AddRequest(WithLora("d", "x", 6)).ok());
  ASSERT_TRUE(s->AddRequest(WithLora("e", "", 2)).ok());
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);
  // c (a third adapter) waits; d (x again) and e (no adapter) pass it.
  EXPECT_EQ(NewWithLora(so), (std::map<std::string, std::string>{{"a", "x"}, {"b", "y"}, {"d", "x"}, {"e", ""}}));
  // a, b and e finish after two tokens; d keeps x running, b's y is freed for z.
  bool admitted = false;
  for (int i = 0; i < 4 && !admitted; ++i) {
    Step(*s, testing::Constant, &so);
    admitted = NewWithLora(so).count("c") == 1;
    if (!admitted) {
      EXPECT_EQ(so.num_scheduled_tokens.count("c"), 0u);
    }
  }
  EXPECT_TRUE(admitted);
  EXPECT_EQ(NewWithLora(so)["c"], "z");
  EXPECT_EQ(so.num_scheduled_tokens.count("d"), 1u);  // x still running beside z
}

TEST(SchedulerLoraTest, NoCapWithoutMaxLoras) {
  SchedulerConfig c;
  c.max_num_batched_tokens = 256;
  c.max_num_seqs = 16;
  c.max_model_len = 64;
  auto s = MakeScheduler(c, 64);
  for (const char* id : {"p", "q", "r"}) ASSERT_TRUE(s->AddRequest(WithLora(id, id, 2)).ok());
  proto::SchedulerOutput so;
  Step(*s, testing::Constant, &so);
  EXPECT_EQ(so.scheduled_new_reqs.size(), 3u);
}

}  // namespace
}  // namespace llmserve::engine_core::scheduler_lora_test
