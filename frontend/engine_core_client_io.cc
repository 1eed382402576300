// EngineCoreClient, part 2: the I/O thread. It owns the sockets: sends the
// queued commands, reads ReadyResponses and engine outputs (delivering them
// to the requests' sinks), and probes ranks periodically. See
// engine_core_client.h.
#include <glog/logging.h>
#include <unistd.h>

#include <limits>

#include "frontend/engine_core_client.h"

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
}  // namespace

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
    engine.cache = ready.cache();
    LOG(INFO) << "engine rank " << rank << " ready: " << ready.num_kv_blocks() << " KV blocks, max_model_len "
              << ready.max_model_len();
    ready_cv_.notify_all();
    if (ready_listener_) ready_listener_(rank, ready);
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
      HandleDeadFrame(extra);
      continue;
    }
    proto::EngineCoreOutputs outs;
    Status s = proto::Decode(static_cast<const char*>(body.data()), body.size(), &outs);
    if (!s.ok()) {
      LOG(ERROR) << "engine client: dropping a malformed output message: " << s.message();
      continue;
    }
    Deliver(outs);
  }
}

void EngineCoreClient::HandleDeadFrame(const std::vector<zmq::message_t>& extra) {
  // Our engines follow the dead frame with their 2-byte identity; a bare
  // frame (vLLM's form) cannot be attributed, so every engine is suspect.
  if (!extra.empty() && extra[0].size() == 2) {
    MarkDead(RankOf(extra[0]), "it reported ENGINE_CORE_DEAD");
    return;
  }
  std::vector<uint32_t> ranks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [rank, e] : engines_) ranks.push_back(rank);  // ranks that joined later too
  }
  for (uint32_t rank : ranks) MarkDead(rank, "an engine reported ENGINE_CORE_DEAD");
}

void EngineCoreClient::Deliver(const proto::EngineCoreOutputs& outs) {
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
