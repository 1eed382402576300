#include "deploy/elastic_scaler.h"

#include <glog/logging.h>
#include <signal.h>

#include <algorithm>

namespace llmserve::deploy {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kTick = std::chrono::milliseconds(50);
// How long to wait for the coordinator to publish a membership (it does at once).
constexpr auto kPublishWait = std::chrono::seconds(5);
// Removed ranks must look idle for this long before they are stopped: a
// request a frontend routed just before the membership reached it shows up
// in the engine's load within a report or two.
constexpr auto kIdleHold = std::chrono::milliseconds(300);

std::string RankList(const std::vector<uint32_t>& ranks) {
  std::string s;
  for (uint32_t r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}
}  // namespace

bool ElasticScaler::ExpectedExit(const ChildId& id) {
  return id.role == ChildRole::kEngine && expected_exits_.erase(id.index) > 0;
}

std::optional<SupervisedExit> ElasticScaler::TakeExit(uint32_t rank) {
  for (auto it = ctx_.exits->begin(); it != ctx_.exits->end(); ++it) {
    if (it->id != ChildId::Engine(rank)) continue;
    SupervisedExit e = *it;
    ctx_.exits->erase(it);
    return e;
  }
  return std::nullopt;
}

void ElasticScaler::Publish(const std::vector<uint32_t>& active, bool scaling, uint32_t tracked) {
  const uint64_t epoch = ++epoch_;
  ctx_.coordinator->SendMembership(MakeMembership(epoch, active, scaling, tracked));
  const auto deadline = Clock::now() + kPublishWait;
  while (Clock::now() < deadline) {
    const auto& snap = ctx_.coordinator->latest();
    if (snap && snap->has_membership() && snap->membership().epoch() >= epoch) return;
    ctx_.coordinator->Poll(kTick);
    ctx_.tick(std::chrono::milliseconds(0));
  }
  LOG(WARNING) << "launcher: the DP coordinator did not publish membership epoch " << epoch << " within "
               << std::chrono::duration_cast<std::chrono::seconds>(kPublishWait).count() << " s";
}

void ElasticScaler::StopLocal(const std::vector<uint32_t>& ranks) {
  std::set<uint32_t> waiting;
  for (uint32_t r : ranks) {
    if (TakeExit(r)) continue;  // already gone
    auto pid = ctx_.children->PidOf(ChildId::Engine(r));
    if (!pid) continue;
    expected_exits_.insert(r);
    kill(*pid, SIGTERM);
    waiting.insert(r);
  }
  const auto kill_at = Clock::now() + ctx_.engine_stop_grace;
  bool killed = false;
  while (!waiting.empty()) {
    ctx_.tick(kTick);
    for (auto it = waiting.begin(); it != waiting.end();) {
      if (auto e = TakeExit(*it)) {
        expected_exits_.erase(*it);
        LOG(INFO) << "launcher: " << e->id.Name() << " (removed) " << e->exit.Describe();
        it = waiting.erase(it);
      } else {
        ++it;
      }
    }
    if (!killed && Clock::now() >= kill_at) {
      for (uint32_t r : waiting) {
        LOG(WARNING) << "launcher: " << ChildId::Engine(r).Name() << " did not stop within the grace period; killing it";
        if (auto pid = ctx_.children->PidOf(ChildId::Engine(r))) kill(*pid, SIGKILL);
      }
      killed = true;
    }
  }
}

proto::ScaleResponse ElasticScaler::Scale(const proto::ScaleRequest& request) {
  ScaleStep step;
  if (auto refused = PlanScale(size_, request, ctx_.max_size, &step)) return *refused;
  const std::string done = "Scaled to " + std::to_string(step.to) + " data parallel engines";
  if (step.to == step.from) return MakeScaleResponse(200, done, size_);
  LOG(INFO) << "launcher: elastic scale " << step.from << " -> " << step.to << " data parallel engines";
  const auto drain = std::chrono::seconds(request.drain_timeout_s() > 0 ? request.drain_timeout_s() : 120);
  proto::ScaleResponse response = step.to > step.from ? ScaleUp(step) : ScaleDown(step, drain);
  LOG(INFO) << "launcher: elastic scale " << step.from << " -> " << step.to << ": " << response.http_status() << " "
            << response.message();
  return response;
}

proto::ScaleResponse ElasticScaler::ScaleUp(const ScaleStep& step) {
  Publish(FirstRanks(step.from), /*scaling=*/true, step.to);
  std::vector<uint32_t> local;
  std::string failure;
  for (uint32_t r : step.added) {
    if (ctx_.handshake->HasHeldHello(r)) {
      LOG(INFO) << "launcher: admitting the waiting remote engine rank " << r;
      ctx_.handshake->Expect(r, /*local=*/false);
      remote_.insert(r);
      continue;
    }
    ctx_.handshake->Expect(r, /*local=*/true);
    if (Status s = ctx_.spawn_local_engine(r); !s.ok()) {
      failure = "cannot start engine rank " + std::to_string(r) + ": " + s.message();
      break;
    }
    local.push_back(r);
  }
  const auto deadline = Clock::now() + ctx_.engine_ready_timeout;
  while (failure.empty()) {
    const std::vector<uint32_t> ready = ctx_.handshake->ReadyRanks();
    const bool all = std::all_of(step.added.begin(), step.added.end(), [&](uint32_t r) {
      return std::find(ready.begin(), ready.end(), r) != ready.end();
    });
    if (all) break;
    for (uint32_t r : local)
      if (auto e = TakeExit(r)) failure = "engine rank " + std::to_string(r) + " " + e->exit.Describe() + " while starting";
    if (!failure.empty()) break;
    if (ctx_.should_stop && ctx_.should_stop()) failure = "the deployment is shutting down";
    else if (Clock::now() >= deadline)
      failure = "new engines not ready within the engine ready timeout: " + ctx_.handshake->MissingDescription();
    else ctx_.tick(kTick);
    ctx_.coordinator->Poll(std::chrono::milliseconds(0));
  }
  if (!failure.empty()) {
    LOG(ERROR) << "launcher: scale-up failed: " << failure << "; stopping the engines it started";
    StopLocal(local);
    std::vector<uint32_t> admitted_remote;  // remote engines admitted for this scale leave again
    for (uint32_t r : step.added) {
      if (remote_.erase(r)) admitted_remote.push_back(r);
      ctx_.handshake->Forget(r);
    }
    if (!admitted_remote.empty()) ctx_.coordinator->SendDrain(admitted_remote);
    for (uint32_t r : step.added) ctx_.coordinator->SendRankDown(r);
    Publish(FirstRanks(step.from), /*scaling=*/false, step.from);
    return MakeScaleResponse(500, "Scaling to " + std::to_string(step.to) + " failed: " + failure, size_);
  }
  Publish(FirstRanks(step.to), /*scaling=*/false, step.to);
  size_ = step.to;
  return MakeScaleResponse(200, "Scaled to " + std::to_string(step.to) + " data parallel engines", size_);
}

proto::ScaleResponse ElasticScaler::ScaleDown(const ScaleStep& step, std::chrono::seconds drain_timeout) {
  Publish(FirstRanks(step.to), /*scaling=*/true, step.from);
  const uint64_t epoch = epoch_;
  LOG(INFO) << "launcher: ranks " << RankList(step.removed) << " get no new requests; waiting up to "
            << drain_timeout.count() << " s for theirs to finish";
  const auto deadline = Clock::now() + drain_timeout;
  std::optional<Clock::time_point> idle_since;
  bool timed_out = false;
  while (true) {
    const auto& snap = ctx_.coordinator->latest();
    if (snap && RanksDrained(*snap, epoch, step.removed)) {
      if (!idle_since) idle_since = ctx_.coordinator->latest_at();
      if (Clock::now() - *idle_since >= kIdleHold) break;
    } else {
      idle_since.reset();
    }
    if (ctx_.should_stop && ctx_.should_stop()) break;
    if (Clock::now() >= deadline) {
      timed_out = true;
      LOG(WARNING) << "launcher: ranks " << RankList(step.removed) << " still have requests after "
                   << drain_timeout.count() << " s; stopping them anyway";
      break;
    }
    ctx_.coordinator->Poll(kTick);
    ctx_.tick(std::chrono::milliseconds(0));
  }
  std::vector<uint32_t> local, remote;
  for (uint32_t r : step.removed) (remote_.count(r) ? remote : local).push_back(r);
  if (!remote.empty()) ctx_.coordinator->SendDrain(remote);  // they drain what is left and exit 0
  StopLocal(local);  // SIGTERM: they drain what is left and exit
  for (uint32_t r : step.removed) {
    ctx_.handshake->Forget(r);
    remote_.erase(r);
    ctx_.coordinator->SendRankDown(r);
  }
  Publish(FirstRanks(step.to), /*scaling=*/false, step.to);
  size_ = step.to;
  if (timed_out)
    return MakeScaleResponse(408, "Scaled to " + std::to_string(step.to) + " data parallel engines, but ranks " +
                                      RankList(step.removed) + " did not finish their requests within the " +
                                      std::to_string(drain_timeout.count()) + " s drain timeout",
                             size_);
  return MakeScaleResponse(200, "Scaled to " + std::to_string(step.to) + " data parallel engines", size_);
}

}  // namespace llmserve::deploy
