// vllm:lora_requests_info: registered only with LoRA on; labels max_lora,
// waiting_lora_adapters and running_lora_adapters (names comma-joined, in
// name order), valued the time the lists were last current; requests move
// from waiting to running on SCHEDULED, back on PREEMPTED, and leave at the
// finish (or when their tracker is dropped unfinished).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <tuple>

#include "frontend/metrics/frontend_metrics.h"
#include "frontend/metrics/lora_requests_info.h"
#include "frontend/metrics/request_tracker.h"
#include "tests/frontend/prometheus_text.h"

namespace llmserve::frontend::metrics {
namespace {

using testing::ParsePrometheusText;
using testing::PromSample;

constexpr char kFamily[] = "vllm:lora_requests_info";

std::vector<PromSample> Samples(const std::string& text) {
  const auto scrape = ParsePrometheusText(text);
  EXPECT_EQ(scrape.error, "");
  if (!scrape.families.count(kFamily)) return {};
  EXPECT_EQ(scrape.families.at(kFamily).type, "gauge");
  return scrape.families.at(kFamily).samples;
}

// (max_lora, waiting, running) of the series with the greatest value: the current state.
std::tuple<std::string, std::string, std::string> Current(const std::string& text) {
  const auto samples = Samples(text);
  if (samples.empty()) return {};
  const PromSample* best = &samples[0];
  for (const PromSample& s : samples) {
    if (s.value > best->value) best = &s;
  }
  EXPECT_EQ(best->labels.size(), 3u);
  return {best->labels.at("max_lora"), best->labels.at("waiting_lora_adapters"),
          best->labels.at("running_lora_adapters")};
}

using State = std::tuple<std::string, std::string, std::string>;

// `state`'s series exists and no series has a greater value (the wall clock
// may give two changes the same time, so ties count).
bool IsCurrent(const std::string& text, const State& state) {
  const auto samples = Samples(text);
  const PromSample* found = nullptr;
  double max = 0;
  for (const PromSample& s : samples) {
    max = std::max(max, s.value);
    if (State(s.labels.at("max_lora"), s.labels.at("waiting_lora_adapters"), s.labels.at("running_lora_adapters")) ==
        state)
      found = &s;
  }
  return found != nullptr && found->value == max;
}

TEST(LoraRequestsInfo, ListsFollowArrivalScheduleAndPreemption) {
  Registry registry;
  double now = 100;
  LoraRequestsInfo info(registry, 4, [&] { return now += 1; });
  info.Stamp();  // before any request: both lists empty
  EXPECT_EQ(Current(registry.Render()), State("4", "", ""));
  info.Arrived("sql");
  info.Arrived("chat");
  info.Arrived("sql");
  EXPECT_EQ(Current(registry.Render()), State("4", "chat,sql", ""));
  info.Scheduled("sql");  // one sql request runs, one still waits
  EXPECT_EQ(Current(registry.Render()), State("4", "chat,sql", "sql"));
  info.Scheduled("sql");
  EXPECT_EQ(Current(registry.Render()), State("4", "chat", "sql"));
  info.Preempted("sql");
  EXPECT_EQ(Current(registry.Render()), State("4", "chat,sql", "sql"));
  info.Finished("chat", /*running=*/false);
  info.Finished("sql", /*running=*/false);
  EXPECT_EQ(Current(registry.Render()), State("4", "", "sql"));
  info.Finished("sql", /*running=*/true);
  EXPECT_EQ(Current(registry.Render()), State("4", "", ""));
  // The value is the clock's time at the last change; old series stay.
  const auto samples = Samples(registry.Render());
  EXPECT_GE(samples.size(), 5u);
  double max = 0;
  for (const PromSample& s : samples) max = std::max(max, s.value);
  EXPECT_EQ(max, now);
}

proto::EngineCoreOutput Event(int32_t type) {
  proto::EngineCoreOutput o;
  o.events.push_back(proto::EngineCoreEvent{type, 1.0});
  return o;
}

TEST(LoraRequestsInfo, TrackersReportTheirAdapterThroughEngineEvents) {
  FrontendMetrics off(FrontendMetricsConfig{"m", {0}});
  EXPECT_EQ(off.lora_requests_info(), nullptr);
  EXPECT_TRUE(Samples(off.Render()).empty()) << "no family without LoRA";

  FrontendMetrics m(FrontendMetricsConfig{"m", {0}, 2});
  ASSERT_NE(m.lora_requests_info(), nullptr);
  const double t0 = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const auto arrival = RequestTracker::Clock::now();
  auto tracked = [](const std::string& lora) {
    TrackedParams p;
    p.lora_name = lora;
    return p;
  };
  RequestTracker base(&m, 3, arrival);  // the base model: not listed
  RequestTracker a(&m, 3, arrival, tracked("alpha"));
  auto b = std::make_unique<RequestTracker>(&m, 3, arrival, tracked("beta"));
  a.OnRouted(0);
  EXPECT_TRUE(IsCurrent(m.Render(), State("2", "alpha,beta", "")));
  a.OnOutput(Event(1), 0, 1.0, arrival);  // QUEUED: still waiting
  EXPECT_TRUE(IsCurrent(m.Render(), State("2", "alpha,beta", "")));
  a.OnOutput(Event(2), 0, 1.0, arrival);  // SCHEDULED
  EXPECT_TRUE(IsCurrent(m.Render(), State("2", "beta", "alpha")));
  a.OnOutput(Event(3), 0, 1.0, arrival);  // PREEMPTED
  EXPECT_TRUE(IsCurrent(m.Render(), State("2", "alpha,beta", "")));
  a.OnOutput(Event(2), 0, 1.0, arrival);
  b.reset();  // dropped before it finished
  EXPECT_TRUE(IsCurrent(m.Render(), State("2", "", "alpha")));
  a.OnFinished(proto::FinishReason::kStop, RequestTracker::Clock::now());
  EXPECT_TRUE(IsCurrent(m.Render(), State("2", "", "")));
  for (const PromSample& s : Samples(m.Render())) EXPECT_GE(s.value, t0) << "Unix seconds";
}

}  // namespace
}  // namespace llmserve::frontend::metrics
