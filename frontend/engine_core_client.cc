#include "frontend/engine_core_client.h"

#include <glog/logging.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "common/ipc/cluster_key.h"
#include "proto/coordinator.pb.h"

namespace llmserve::frontend {

namespace {
// How often the I/O thread checks that ranks with requests in flight are still
// connected (ProbeBusyRanks): a vanished rank is noticed within this.
constexpr auto kProbeInterval = std::chrono::milliseconds(500);

std::string Identity(uint32_t rank) {
  return std::string{static_cast<char>(rank & 0xff), static_cast<char>((rank >> 8) & 0xff)};
}
uint32_t RankOf(const zmq::message_t& identity) {
  const auto* b = static_cast<const uint8_t*>(identity.data());
  return identity.size() == 2 ? static_cast<uint32_t>(b[0] | (b[1] << 8)) : std::numeric_limits<uint32_t>::max();
}
std::vector<uint32_t> SortedRanks(std::vector<uint32_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}
DpLoadBalancerConfig BalancerConfig(const EngineCoreClient::Options& o) {
  DpLoadBalancerConfig c = o.lb;
  c.client_index = o.client_index;
  c.client_count = o.client_count;
  return c;
}
}  // namespace

EngineCoreClient::EngineCoreClient(zmq::context_t& context, Options options)
    : options_(std::move(options)),
      input_(context, zmq::socket_type::router),
      output_(context, zmq::socket_type::pull),
      rank_order_(SortedRanks(options_.engine_ranks)),
      balancer_(BalancerConfig(options_), rank_order_.size()) {
  for (uint32_t rank : options_.engine_ranks) engines_[rank].rank = rank;
  if (!options_.coordinator_address.empty()) coordinator_.emplace(context, zmq::socket_type::xsub);
}

size_t EngineCoreClient::IndexOf(uint32_t rank) const {
  auto it = std::lower_bound(rank_order_.begin(), rank_order_.end(), rank);
  return it != rank_order_.end() && *it == rank ? static_cast<size_t>(it - rank_order_.begin()) : rank_order_.size();
}

StatusOr<std::unique_ptr<EngineCoreClient>> EngineCoreClient::Start(zmq::context_t& context, Options options) {
  std::unique_ptr<EngineCoreClient> c(new EngineCoreClient(context, std::move(options)));
  try {
    for (zmq::socket_t* s : {&c->input_, &c->output_}) {
      s->set(zmq::sockopt::linger, 0);
      s->set(zmq::sockopt::rcvhwm, 0);
      s->set(zmq::sockopt::sndhwm, 0);
    }
    c->input_.set(zmq::sockopt::router_mandatory, 1);
    c->input_.set(zmq::sockopt::router_handover, 1);  // a restarted engine takes over its identity
    for (auto [socket, bind] : {std::pair{&c->input_, &c->options_.input_bind},
                                std::pair{&c->output_, &c->options_.output_bind}}) {
      Status secured = common::ipc::SecureTcpSocket(*socket, *bind, common::ipc::SocketMode::kBind);
      if (!secured.ok()) return secured;
      socket->bind(*bind);
    }
    c->input_address_ = c->input_.get(zmq::sockopt::last_endpoint);
    c->output_address_ = c->output_.get(zmq::sockopt::last_endpoint);
    if (c->coordinator_) {
      c->coordinator_->set(zmq::sockopt::linger, 0);
      c->coordinator_->set(zmq::sockopt::rcvhwm, 0);
      Status secured = common::ipc::SecureTcpSocket(*c->coordinator_, c->options_.coordinator_address,
                                                    common::ipc::SocketMode::kConnect);
      if (!secured.ok()) return secured;
      c->coordinator_->connect(c->options_.coordinator_address);
      c->coordinator_->send(zmq::buffer(std::string("\x01", 1)), zmq::send_flags::none);  // subscribe to all
    }
  } catch (const zmq::error_t& e) {
    return Status::Unavailable(std::string("engine client: cannot bind its sockets: ") + e.what());
  }
  c->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (c->wake_fd_ < 0) return Status::Internal("engine client: eventfd failed");
  c->thread_ = std::thread([raw = c.get()] { raw->Run(); });
  return c;
}

EngineCoreClient::~EngineCoreClient() {
  Stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void EngineCoreClient::Stop() {
  if (stop_.exchange(true)) return;
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  std::unordered_map<std::string, Pending> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending.swap(pending_);
  }
  for (auto& [id, p] : pending) p.sink->OnError(Status::Unavailable("the frontend is shutting down"));
}

void EngineCoreClient::SetStatsListener(StatsListener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_listener_ = listener ? std::make_shared<const StatsListener>(std::move(listener)) : nullptr;
}

void EngineCoreClient::Post(Command command) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    commands_.push_back(std::move(command));
  }
  uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

std::optional<uint32_t> EngineCoreClient::PickEngine(const proto::EngineCoreRequest& request) {
  if (request.data_parallel_rank) {
    auto it = engines_.find(static_cast<uint32_t>(*request.data_parallel_rank));
    if (it == engines_.end() || !it->second.ready || it->second.dead || !it->second.active || it->second.draining)
      return std::nullopt;
    return it->first;
  }
  std::vector<bool> available(rank_order_.size());
  for (size_t i = 0; i < rank_order_.size(); ++i) {
    const EngineState& e = engines_.at(rank_order_[i]);
    available[i] = e.ready && !e.dead && e.active && !e.draining;
  }
  std::optional<size_t> index = balancer_.Pick(request.prompt_token_ids, available);
  if (!index) return std::nullopt;
  return rank_order_[*index];
}

Status EngineCoreClient::Submit(proto::EngineCoreRequest request, std::shared_ptr<OutputSink> sink) {
  request.client_index = options_.client_index;
  Command cmd{Command::kAdd, 0, proto::RequestType::kAdd, ""};
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::Unavailable("the frontend is shutting down");
    std::optional<uint32_t> rank = PickEngine(request);
    if (!rank) {
      if (request.data_parallel_rank)
        return Status::Unavailable("data parallel rank " + std::to_string(*request.data_parallel_rank) +
                                   " is not serving");
      return Status::Unavailable("no engine is ready to serve requests");
    }
    if (pending_.count(request.request_id))
      return Status::InvalidArgument("request id '" + request.request_id + "' is already in flight");
    sink->OnRouted(*rank);
    const auto prompt_tokens = static_cast<int64_t>(request.prompt_token_ids.size());
    request.current_wave = static_cast<int64_t>(current_wave_);
    cmd.body = proto::Encode(request);
    const size_t prefix = std::min(request.prompt_token_ids.size(),
                                   static_cast<size_t>(std::max(options_.lb.affinity_tokens, 0)));
    pending_[request.request_id] =
        Pending{*rank, std::move(sink), prompt_tokens, false, request.data_parallel_rank.has_value(), cmd.body,
                std::vector<int32_t>(request.prompt_token_ids.begin(), request.prompt_token_ids.begin() + prefix)};
    engines_[*rank].in_flight++;
    balancer_.OnDispatch(IndexOf(*rank), prompt_tokens);
    cmd.rank = *rank;
    if (coordinator_ && !engines_running_) {
      // The engines are idle: tell the coordinator so it starts the wave everywhere.
      engines_running_ = true;
      proto::FrontendNotice notice;
      notice.mutable_first_request()->set_data_parallel_rank(*rank);
      notice.mutable_first_request()->set_wave(current_wave_);
      commands_.push_back(Command{Command::kCoordinatorNotice, *rank, proto::RequestType::kAdd, notice.SerializeAsString()});
    }
  }
  cmd.type = proto::RequestType::kAdd;
  Post(std::move(cmd));
  return Status::Ok();
}

void EngineCoreClient::Abort(const std::vector<std::string>& request_ids) {
  std::map<uint32_t, std::vector<std::string>> by_rank;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& id : request_ids) {
      auto it = pending_.find(id);
      if (it == pending_.end()) continue;
      by_rank[it->second.rank].push_back(id);
      engines_[it->second.rank].in_flight--;
      balancer_.OnFinish(IndexOf(it->second.rank), it->second.prompt_tokens, it->second.started);
      pending_.erase(it);
    }
  }
  for (auto& [rank, ids] : by_rank) Post(Command{Command::kAbort, rank, proto::RequestType::kAbort, proto::Encode(ids)});
}

StatusOr<std::vector<std::string>> EngineCoreClient::CallUtility(const std::string& method,
                                                                 std::vector<std::string> args,
                                                                 std::chrono::milliseconds timeout) {
  auto wait = std::make_shared<UtilityWait>();
  int64_t call_id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    call_id = next_call_id_++;
    for (const auto& [rank, e] : engines_)
      if (e.ready && !e.dead) wait->ranks.push_back(rank);
    if (wait->ranks.empty()) return Status::Unavailable("no engine is ready");
    wait->results.resize(wait->ranks.size());
    utility_waits_[call_id] = wait;
  }
  proto::UtilityRequest req{options_.client_index, call_id, method, std::move(args)};
  const std::string body = proto::Encode(req);
  for (uint32_t rank : wait->ranks) Post(Command{Command::kUtility, rank, proto::RequestType::kUtility, body});
  std::unique_lock<std::mutex> lock(mu_);
  const bool done = wait->cv.wait_for(lock, timeout, [&] {
    for (const auto& r : wait->results)
      if (!r) return false;
    return true;
  });
  utility_waits_.erase(call_id);
  if (!done) return Status::Unavailable("utility call '" + method + "' timed out");
  std::vector<std::string> results;
  for (const auto& r : wait->results) {
    if (r->failure_message) return Status::Internal("utility call '" + method + "' failed: " + *r->failure_message);
    results.push_back(r->result.value_or(""));
  }
  return results;
}

Status EngineCoreClient::WaitUntilReady(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  auto all_ready = [&] {
    for (const auto& [rank, e] : engines_)
      if (!e.ready) return false;
    return true;
  };
  if (ready_cv_.wait_for(lock, timeout, all_ready)) return Status::Ok();
  std::string missing;
  for (const auto& [rank, e] : engines_)
    if (!e.ready) missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
  return Status::Unavailable("engines not ready after " + std::to_string(timeout.count()) + " ms: ranks " + missing);
}

std::vector<EngineState> EngineCoreClient::Engines() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<EngineState> out;
  for (const auto& [rank, e] : engines_) out.push_back(e);
  return out;
}

bool EngineCoreClient::IsReady() const {
  std::lock_guard<std::mutex> lock(mu_);
  bool any = false;
  for (const auto& [rank, e] : engines_) {
    if (!e.active || e.joined) continue;  // ranks joining in a scale-up do not make the server unready
    if (!e.ready) return false;
    any = true;
  }
  return any;
}

bool EngineCoreClient::IsDead() const {
  std::lock_guard<std::mutex> lock(mu_);
  bool any = false;
  for (const auto& [rank, e] : engines_) {
    if (!e.active) continue;
    if (!e.dead) return false;
    any = true;
  }
  return any;
}

bool EngineCoreClient::scaling() const {
  std::lock_guard<std::mutex> lock(mu_);
  return scaling_;
}

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

int32_t EngineCoreClient::max_model_len() const {
  std::lock_guard<std::mutex> lock(mu_);
  int32_t len = 0;
  for (const auto& [rank, e] : engines_)
    if (e.ready && (len == 0 || static_cast<int32_t>(e.max_model_len) < len)) len = static_cast<int32_t>(e.max_model_len);
  return len;
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

std::vector<uint32_t> EngineCoreClient::SendUtilityNotice(const std::vector<uint32_t>& ranks, const char* method) {
  // call_id 0 is never awaited: an answer is dropped on arrival.
  const std::string body = proto::Encode(proto::UtilityRequest{options_.client_index, 0, method, {}});
  const auto type = static_cast<uint8_t>(proto::RequestType::kUtility);
  std::vector<uint32_t> unreachable;
  for (uint32_t rank : ranks) {
    try {
      input_.send(zmq::buffer(Identity(rank)), zmq::send_flags::sndmore);
      input_.send(zmq::buffer(&type, 1), zmq::send_flags::sndmore);
      input_.send(zmq::buffer(body), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) throw;
      unreachable.push_back(rank);  // router_mandatory: no connection to this rank
    }
  }
  return unreachable;
}

void EngineCoreClient::HandleInput() {
  while (true) {
    zmq::message_t identity, body;
    if (!input_.recv(identity, zmq::recv_flags::dontwait)) return;
    if (!identity.more()) continue;
    (void)input_.recv(body);
    while (body.more()) (void)input_.recv(body);
    const uint32_t rank = RankOf(identity);
    proto::ReadyResponse ready;
    if (!ready.ParseFromArray(body.data(), static_cast<int>(body.size()))) {
      LOG(WARNING) << "engine client: malformed message on the input socket from rank " << rank;
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (rank == std::numeric_limits<uint32_t>::max()) {
      LOG(WARNING) << "engine client: ReadyResponse from a peer with a malformed identity";
      continue;
    }
    EngineState& engine = AddRank(rank);  // a rank joining in an elastic scale-up
    engine.ready = true;
    engine.dead = false;
    engine.draining = false;
    engine.max_model_len = ready.max_model_len();
    engine.num_kv_blocks = ready.num_kv_blocks();
    LOG(INFO) << "engine rank " << rank << " ready: " << ready.num_kv_blocks() << " KV blocks, max_model_len "
              << ready.max_model_len();
    ready_cv_.notify_all();
  }
}

void EngineCoreClient::HandleOutput() {
  while (true) {
    zmq::message_t body;
    if (!output_.recv(body, zmq::recv_flags::dontwait)) return;
    std::vector<zmq::message_t> extra;
    for (bool more = body.more(); more;) {
      extra.emplace_back();
      (void)output_.recv(extra.back());
      more = extra.back().more();
    }
    if (body.to_string_view() == proto::kEngineCoreDead) {
      // Our engines follow the dead frame with their 2-byte identity; a bare
      // frame (vLLM's form) cannot be attributed, so every engine is suspect.
      if (!extra.empty() && extra[0].size() == 2) {
        MarkDead(RankOf(extra[0]), "it reported ENGINE_CORE_DEAD");
      } else {
        std::vector<uint32_t> ranks;
        {
          std::lock_guard<std::mutex> lock(mu_);
          for (const auto& [rank, e] : engines_) ranks.push_back(rank);  // ranks that joined later too
        }
        for (uint32_t rank : ranks) MarkDead(rank, "an engine reported ENGINE_CORE_DEAD");
      }
      continue;
    }
    proto::EngineCoreOutputs outs;
    Status s = proto::Decode(static_cast<const char*>(body.data()), body.size(), &outs);
    if (!s.ok()) {
      LOG(ERROR) << "engine client: dropping a malformed output message: " << s.message();
      continue;
    }
    std::vector<std::pair<std::shared_ptr<OutputSink>, const proto::EngineCoreOutput*>> deliveries;
    std::vector<std::string> unknown;  // unfinished requests this client does not know
    size_t rerouted = 0;
    std::shared_ptr<UtilityWait> notify;
    std::shared_ptr<const StatsListener> stats_listener;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (outs.scheduler_stats) stats_listener = stats_listener_;
      auto engine = engines_.find(static_cast<uint32_t>(outs.engine_index));
      if (engine != engines_.end() && outs.scheduler_stats) engine->second.last_stats = outs.scheduler_stats;
      for (const auto& out : outs.outputs) {
        auto it = pending_.find(out.request_id);
        if (it == pending_.end()) {
          // Aborted here already, or sent by an earlier process of this
          // frontend (restarted): make sure the engine stops it.
          if (!out.finish_reason) unknown.push_back(out.request_id);
          continue;
        }
        Pending& p = it->second;
        if (out.finish_reason == proto::FinishReason::kAbort && out.error_code == StatusCode::kUnavailable &&
            out.new_token_ids.empty() && !p.started && !p.pinned) {
          // The engine is shutting down (scale-down or SIGTERM): send it elsewhere.
          const uint32_t from = p.rank;
          engines_[from].draining = true;
          engines_[from].in_flight--;
          balancer_.OnFinish(IndexOf(from), p.prompt_tokens, false);
          if (Reroute(p)) {
            ++rerouted;
            continue;
          }
          engines_[from].in_flight++;  // nowhere else: the refusal reaches the client below
          balancer_.OnDispatch(IndexOf(from), p.prompt_tokens);
        }
        deliveries.emplace_back(it->second.sink, &out);
        if (!p.started && !out.new_token_ids.empty()) {
          p.started = true;
          balancer_.OnFirstToken(IndexOf(p.rank), p.prompt_tokens);
        }
        if (out.finish_reason) {
          engines_[p.rank].in_flight--;
          balancer_.OnFinish(IndexOf(p.rank), p.prompt_tokens, p.started);
          pending_.erase(it);
        }
      }
      if (outs.utility_output) {
        auto w = utility_waits_.find(outs.utility_output->call_id);
        if (w != utility_waits_.end()) {
          for (size_t i = 0; i < w->second->ranks.size(); ++i)
            if (w->second->ranks[i] == static_cast<uint32_t>(outs.engine_index)) w->second->results[i] = *outs.utility_output;
          notify = w->second;
        }
      }
    }
    if (rerouted > 0) {
      LOG(INFO) << "engine rank " << outs.engine_index << " is shutting down: moved " << rerouted
                << " request(s) to other ranks";
      uint64_t one = 1;
      (void)!write(wake_fd_, &one, sizeof(one));  // send them on this loop's next turn
    }
    if (!unknown.empty())
      Post(Command{Command::kAbort, static_cast<uint32_t>(outs.engine_index), proto::RequestType::kAbort,
                   proto::Encode(unknown)});
    if (stats_listener && outs.scheduler_stats)
      (*stats_listener)(static_cast<uint32_t>(outs.engine_index), *outs.scheduler_stats);
    const OutputOrigin origin{static_cast<uint32_t>(outs.engine_index), outs.timestamp};
    for (auto& [sink, out] : deliveries) sink->OnOutputFrom(*out, origin);
    if (notify) notify->cv.notify_all();
  }
}

std::vector<RankLoad> EngineCoreClient::EffectiveLoads() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<RankLoad> loads;
  for (size_t i = 0; i < rank_order_.size(); ++i) loads.push_back(balancer_.EffectiveLoad(i));
  return loads;
}

uint64_t EngineCoreClient::snapshots_received() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshots_;
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

void EngineCoreClient::Run() {
  zmq::pollitem_t items[] = {{input_.handle(), 0, ZMQ_POLLIN, 0},
                             {output_.handle(), 0, ZMQ_POLLIN, 0},
                             {nullptr, wake_fd_, ZMQ_POLLIN, 0},
                             {coordinator_ ? coordinator_->handle() : nullptr, 0, ZMQ_POLLIN, 0}};
  const int num_items = coordinator_ ? 4 : 3;
  auto next_probe = std::chrono::steady_clock::now() + kProbeInterval;
  while (!stop_) {
    try {
      zmq::poll(items, num_items, kProbeInterval);
      if (std::chrono::steady_clock::now() >= next_probe) {
        ProbeBusyRanks();
        AskUnreadyRanksToAnnounce();
        next_probe = std::chrono::steady_clock::now() + kProbeInterval;
      }
      if (items[2].revents & ZMQ_POLLIN) {
        uint64_t count;
        (void)!read(wake_fd_, &count, sizeof(count));
      }
      std::deque<Command> commands;
      {
        std::lock_guard<std::mutex> lock(mu_);
        commands.swap(commands_);
      }
      for (auto& cmd : commands) {
        if (cmd.kind == Command::kCoordinatorNotice) {
          if (coordinator_) coordinator_->send(zmq::buffer(cmd.body), zmq::send_flags::none);
          continue;
        }
        const uint8_t type = static_cast<uint8_t>(cmd.type);
        try {
          input_.send(zmq::buffer(Identity(cmd.rank)), zmq::send_flags::sndmore);
          input_.send(zmq::buffer(&type, 1), zmq::send_flags::sndmore);
          input_.send(zmq::buffer(cmd.body), zmq::send_flags::none);
        } catch (const zmq::error_t& e) {
          // EHOSTUNREACH: the engine's DEALER is gone (router_mandatory).
          MarkDead(cmd.rank, std::string("cannot send to it: ") + e.what());
        }
      }
      if (items[0].revents & ZMQ_POLLIN) HandleInput();
      if (items[1].revents & ZMQ_POLLIN) HandleOutput();
      if (num_items == 4 && (items[3].revents & ZMQ_POLLIN)) HandleCoordinator();
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      LOG(ERROR) << "engine client I/O error: " << e.what();
    }
  }
}

}  // namespace llmserve::frontend
