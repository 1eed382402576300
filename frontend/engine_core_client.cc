// EngineCoreClient, part 1: construction, the calls other threads make
// (submit, abort, utility calls, readiness) and the state queries. The I/O
// thread is in engine_core_client_io.cc, rank membership and failure handling
// in engine_core_client_ranks.cc. See engine_core_client.h.
#include "frontend/engine_core_client.h"

#include <glog/logging.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "common/ipc/cluster_key.h"
#include "proto/coordinator.pb.h"

namespace llmserve::frontend {

namespace {
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

void EngineCoreClient::SetReadyListener(ReadyListener listener) {
  std::lock_guard<std::mutex> lock(mu_);
  ready_listener_ = std::move(listener);
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


int32_t EngineCoreClient::max_model_len() const {
  std::lock_guard<std::mutex> lock(mu_);
  int32_t len = 0;
  for (const auto& [rank, e] : engines_)
    if (e.ready && (len == 0 || static_cast<int32_t>(e.max_model_len) < len)) len = static_cast<int32_t>(e.max_model_len);
  return len;
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

}  // namespace llmserve::frontend
