// EngineCoreClient, part 3: which ranks get requests. Coordinator snapshots
// (load, DP wave, membership), ranks joining or leaving in elastic scaling,
// dead ranks found by probes or reported, and moving requests that have not
// streamed yet off a rank that cannot serve them. See engine_core_client.h.
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>

#include "frontend/engine_core_client.h"
#include "proto/coordinator.pb.h"

namespace llmserve::frontend {

EngineState& EngineCoreClient::AddRank(uint32_t rank) {
  auto it = engines_.find(rank);
  if (it != engines_.end()) return it->second;
  EngineState& e = engines_[rank];
  e.rank = rank;
  e.joined = true;
  // Routed only once a membership names it (never a stray engine without one).
  e.active = membership_epoch_ != 0 &&
             std::find(active_ranks_.begin(), active_ranks_.end(), rank) != active_ranks_.end();
  auto pos = std::lower_bound(rank_order_.begin(), rank_order_.end(), rank);
  balancer_.InsertRank(static_cast<size_t>(pos - rank_order_.begin()));
  rank_order_.insert(pos, rank);
  LOG(INFO) << "engine client: rank " << rank << " joined the deployment" << (e.active ? "" : " (not routed to yet)");
  return e;
}

void EngineCoreClient::ApplyMembership(const proto::Membership& membership) {
  scaling_ = membership.scaling();
  if (membership.epoch() <= membership_epoch_) return;
  membership_epoch_ = membership.epoch();
  active_ranks_.assign(membership.active_ranks().begin(), membership.active_ranks().end());
  for (uint32_t rank : active_ranks_) (void)AddRank(rank);
  for (auto& [rank, e] : engines_) {
    const bool active = std::find(active_ranks_.begin(), active_ranks_.end(), rank) != active_ranks_.end();
    if (active != e.active)
      LOG(INFO) << "engine client: rank " << rank << (active ? " is now routed to" : " no longer gets new requests");
    e.active = active;
  }
}

bool EngineCoreClient::Reroute(Pending& pending) {
  if (pending.started || pending.pinned) return false;
  proto::EngineCoreRequest routing;  // the balancer reads only the prompt's first tokens
  routing.prompt_token_ids = pending.routing_prefix;
  std::optional<uint32_t> other = PickEngine(routing);
  if (!other) return false;
  pending.rank = *other;
  engines_[*other].in_flight++;
  balancer_.OnDispatch(IndexOf(*other), pending.prompt_tokens);
  commands_.push_back(Command{Command::kAdd, *other, proto::RequestType::kAdd, pending.body});
  return true;
}

// A dead rank's requests that have not streamed a token yet move to another
// rank (the client saw nothing, so nothing is lost or repeated); the others,
// and pinned ones, end with an error. Other ranks' requests are untouched.
void EngineCoreClient::MarkDead(uint32_t rank, const std::string& why) {
  std::vector<std::pair<std::shared_ptr<OutputSink>, Status>> failed;
  size_t retried = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = engines_.find(rank);
    if (it == engines_.end() || it->second.dead) return;
    it->second.dead = true;
    it->second.in_flight = 0;
    for (auto p = pending_.begin(); p != pending_.end();) {
      Pending& pending = p->second;
      if (pending.rank != rank) {
        ++p;
        continue;
      }
      balancer_.OnFinish(IndexOf(rank), pending.prompt_tokens, pending.started);
      if (Reroute(pending)) {
        ++retried;
        ++p;
        continue;
      }
      failed.emplace_back(std::move(pending.sink),
                          Status::Unavailable("engine rank " + std::to_string(rank) + " died" +
                                              (pending.started ? " while this request was streaming" : "")));
      p = pending_.erase(p);
    }
  }
  LOG(ERROR) << "engine rank " << rank << " is dead: " << why << "; " << retried
             << " request(s) not yet streaming moved to other ranks, " << failed.size() << " failed";
  if (retried > 0) {
    uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
  }
  for (auto& [sink, status] : failed) sink->OnError(status);
}

void EngineCoreClient::ProbeBusyRanks() {
  std::vector<uint32_t> busy;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [rank, e] : engines_)
      if (e.ready && !e.dead && e.in_flight > 0) busy.push_back(rank);
  }
  ProbeRanks(busy);
}

void EngineCoreClient::AskUnreadyRanksToAnnounce() {
  std::vector<uint32_t> unready;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [rank, e] : engines_)
      if (e.active && !e.ready) unready.push_back(rank);
  }
  (void)SendUtilityNotice(unready, "announce");  // an unconnected rank sends its ReadyResponse when it connects
}

void EngineCoreClient::ProbeRanks(const std::vector<uint32_t>& ranks) {
  for (uint32_t rank : SendUtilityNotice(ranks, "health")) MarkDead(rank, "its connection is gone");
}

void EngineCoreClient::HandleCoordinator() {
  // Only the newest snapshot matters.
  std::optional<proto::LoadSnapshot> latest;
  zmq::message_t msg;
  while (coordinator_->recv(msg, zmq::recv_flags::dontwait)) {
    proto::LoadSnapshot snap;
    if (msg.more() || !snap.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) {
      LOG(WARNING) << "engine client: malformed coordinator snapshot (" << msg.size() << " bytes)";
      continue;
    }
    if (!latest || snap.sequence() > latest->sequence()) latest = std::move(snap);
  }
  if (!latest) return;
  std::vector<uint32_t> reported_down;  // ready here, but the coordinator has no live process for it
  {
    std::lock_guard<std::mutex> lock(mu_);
    ApplySnapshot(*latest, &reported_down);
  }
  // The launcher tells the coordinator when an engine process exits, so a rank
  // is checked within one publish interval instead of the next probe; a rank
  // restarted meanwhile answers the probe and stays.
  ProbeRanks(reported_down);
}

void EngineCoreClient::ApplySnapshot(const proto::LoadSnapshot& snapshot, std::vector<uint32_t>* reported_down) {
  if (snapshot.has_membership()) ApplyMembership(snapshot.membership());  // may add ranks: index loads after
  std::vector<RankLoad> loads(rank_order_.size());
  for (const auto& e : snapshot.engines()) {
    auto engine = engines_.find(e.data_parallel_rank());
    if (!e.alive() && engine != engines_.end() && engine->second.active && engine->second.ready &&
        !engine->second.dead)
      reported_down->push_back(e.data_parallel_rank());
    const size_t i = IndexOf(e.data_parallel_rank());
    if (i == rank_order_.size()) continue;
    loads[i] = RankLoad{static_cast<int64_t>(e.num_waiting_reqs()), static_cast<int64_t>(e.num_running_reqs()),
                        static_cast<int64_t>(e.num_waiting_tokens())};
  }
  balancer_.OnSnapshot(loads);
  current_wave_ = snapshot.current_wave();
  engines_running_ = snapshot.engines_running();
  ++snapshots_;
}

}  // namespace llmserve::frontend
