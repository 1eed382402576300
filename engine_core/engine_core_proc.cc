#include "engine_core/engine_core_proc.h"

#include <glog/logging.h>

#include <chrono>
#include <deque>
#include <optional>

#include "common/ipc/cluster_key.h"
#include "engine_core/lora_utility_calls.h"
#include "engine_core/startup_handshake.h"
#include "proto/admin.pb.h"

namespace llmserve::engine_core {

namespace {
// The coordinator's frame before a DrainCommand (coordinator/coordinator.h's kDrainFrame).
constexpr std::string_view kDrainFrame = "DRAIN";
// The utility call a frontend sends to a rank it has no ReadyResponse from;
// answered on the input thread with the ReadyResponse (frontend/engine_core_client.cc).
constexpr std::string_view kAnnounceMethod = "announce";
constexpr auto kIdlePoll = std::chrono::milliseconds(100);

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// CURVE on a socket about to connect (with --cluster-key-dir); failures end
// up in the caller's zmq::error_t handler like every other socket error.
void SecureOrThrow(zmq::socket_t& socket, const std::string& address) {
  if (!common::ipc::SecureTcpSocket(socket, address, common::ipc::SocketMode::kConnect).ok()) throw zmq::error_t();
}
}  // namespace

EngineCoreProc::EngineCoreProc(zmq::context_t& context, EngineProcOptions options,
                               proto::EngineAddresses addresses, std::unique_ptr<EngineCore> core,
                               uint32_t max_model_len)
    : context_(context),
      options_(options),
      addresses_(std::move(addresses)),
      core_(std::move(core)),
      max_model_len_(max_model_len),
      has_coordinator_(!addresses_.coordinator_input().empty() && !addresses_.coordinator_output().empty()),
      reporter_(options_.rank) {}

EngineCoreProc::~EngineCoreProc() {
  stop_io_ = true;
  outputs_.Push(Output{});  // wake the output thread
  if (input_thread_.joinable()) input_thread_.join();
  if (output_thread_.joinable()) output_thread_.join();
}

Status EngineCoreProc::Start() {
  if (addresses_.inputs_size() == 0 || addresses_.inputs_size() != addresses_.outputs_size())
    return Status::InvalidArgument("handshake gave " + std::to_string(addresses_.inputs_size()) + " input and " +
                                   std::to_string(addresses_.outputs_size()) + " output addresses");
  input_thread_ = std::thread([this] { InputLoop(); });
  output_thread_ = std::thread([this] { OutputLoop(); });
  return Status::Ok();
}

bool EngineCoreProc::AwaitCoordinatorReady(zmq::socket_t& sub) {
  auto next_log = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!stop_io_) {
    zmq::pollitem_t item{sub.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, kIdlePoll) > 0) {
      zmq::message_t msg;
      (void)sub.recv(msg);
      bool ready = !msg.more() && msg.to_string_view() == "READY";
      while (msg.more()) (void)sub.recv(msg);
      if (ready) return true;
    }
    if (std::chrono::steady_clock::now() >= next_log) {
      LOG(INFO) << "engine " << options_.rank << ": waiting for READY from the DP coordinator at "
                << addresses_.coordinator_input();
      next_log += std::chrono::seconds(10);
    }
  }
  return false;
}

bool EngineCoreProc::AwaitConnected(zmq::socket_t& socket, const std::string& address) {
  auto next_log = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!stop_io_) {
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLOUT, 0};
    if (zmq::poll(&item, 1, kIdlePoll) > 0) return true;
    if (std::chrono::steady_clock::now() >= next_log) {
      LOG(INFO) << "engine " << options_.rank << ": waiting to connect to the frontend at " << address;
      next_log += std::chrono::seconds(10);
    }
  }
  return false;
}

void EngineCoreProc::SetAnnounced(Announce result) {
  {
    std::lock_guard<std::mutex> lock(announce_mu_);
    if (announce_ == Announce::kPending) announce_ = result;
  }
  announce_cv_.notify_all();
}

bool EngineCoreProc::WaitUntilAnnounced() {
  std::unique_lock<std::mutex> lock(announce_mu_);
  announce_cv_.wait(lock, [&] { return announce_ != Announce::kPending || shutdown_requested_; });
  return announce_ == Announce::kSent;
}

bool EngineCoreProc::ConnectInputs(std::vector<zmq::socket_t>* sockets, std::optional<zmq::socket_t>* coordinator,
                                   std::string* ready_bytes) {
  try {
    if (has_coordinator_) {
      coordinator->emplace(context_, zmq::socket_type::sub);
      (*coordinator)->set(zmq::sockopt::linger, 0);
      (*coordinator)->set(zmq::sockopt::rcvhwm, 0);
      (*coordinator)->set(zmq::sockopt::subscribe, "");
      SecureOrThrow(**coordinator, addresses_.coordinator_input());
      (*coordinator)->connect(addresses_.coordinator_input());
      if (!AwaitCoordinatorReady(**coordinator)) return false;
    }
    proto::ReadyResponse ready;
    ready.set_data_parallel_rank(options_.rank);
    ready.set_max_model_len(max_model_len_);
    ready.set_num_kv_blocks(static_cast<uint64_t>(core_->num_gpu_blocks()));
    *ready.mutable_cache() = options_.cache;
    *ready_bytes = ready.SerializeAsString();
    for (const auto& address : addresses_.inputs()) {
      zmq::socket_t s(context_, zmq::socket_type::dealer);
      s.set(zmq::sockopt::routing_id, EngineIdentity(options_.rank));
      s.set(zmq::sockopt::linger, 0);
      s.set(zmq::sockopt::rcvhwm, 0);
      s.set(zmq::sockopt::sndhwm, 0);
      // Queue the ReadyResponse only on an established connection, so it is on
      // its way before READY goes to the launcher: a rank that joins in an
      // elastic scale-up is known to the frontends when the scale answers.
      s.set(zmq::sockopt::immediate, 1);
      SecureOrThrow(s, address);
      s.connect(address);
      if (!AwaitConnected(s, address)) return false;
      s.send(zmq::buffer(*ready_bytes), zmq::send_flags::none);
      sockets->push_back(std::move(s));
    }
    SetAnnounced(Announce::kSent);
  } catch (const zmq::error_t& e) {
    LOG(ERROR) << "engine input: cannot connect to a frontend: " << e.what();
    inputs_.Push(Input{});
    return false;
  }
  return true;
}

void EngineCoreProc::ReceiveFromCoordinator(zmq::socket_t& coordinator) {
  // READY again (another engine subscribed) or [START_DP_WAVE][body].
  zmq::message_t type_frame, body;
  while (coordinator.recv(type_frame, zmq::recv_flags::dontwait)) {
    if (!type_frame.more()) continue;
    (void)coordinator.recv(body);
    for (zmq::message_t extra; body.more();) (void)coordinator.recv(extra);
    if (type_frame.to_string_view() == kDrainFrame) {
      // An elastic scale-down removes ranks: a named one drains and exits 0.
      proto::DrainCommand drain;
      if (!drain.ParseFromArray(body.data(), static_cast<int>(body.size()))) continue;
      for (uint32_t rank : drain.data_parallel_ranks()) {
        if (rank != options_.rank) continue;
        LOG(INFO) << "engine " << options_.rank << ": removed by an elastic scale-down; draining";
        RequestShutdown();
      }
      continue;
    }
    StartWave wave;
    proto::RequestType type;
    Status s = proto::ParseRequestType(type_frame.data(), type_frame.size(), &type);
    if (s.ok() && type == proto::RequestType::kStartDpWave)
      s = proto::Decode(static_cast<const char*>(body.data()), body.size(), &wave.start);
    if (s.ok()) inputs_.Push(Input{wave});
    else LOG(WARNING) << "engine " << options_.rank << ": dropping a malformed coordinator message: " << s.message();
  }
}

void EngineCoreProc::ReceiveFromFrontend(zmq::socket_t& socket, const std::string& ready_bytes) {
  zmq::message_t type_frame, body;
  while (socket.recv(type_frame, zmq::recv_flags::dontwait)) {
    body.rebuild();
    if (type_frame.more()) (void)socket.recv(body);
    for (zmq::message_t extra; body.more();) (void)socket.recv(extra), body.swap(extra);
    proto::RequestType type;
    Status s = proto::ParseRequestType(type_frame.data(), type_frame.size(), &type);
    const char* data = static_cast<const char*>(body.data());
    if (s.ok() && type == proto::RequestType::kAdd) {
      proto::EngineCoreRequest request;
      s = proto::Decode(data, body.size(), &request);
      if (s.ok()) inputs_.Push(Input{std::move(request)});
    } else if (s.ok() && type == proto::RequestType::kAbort) {
      Abort abort;
      s = proto::Decode(data, body.size(), &abort.ids);
      if (s.ok()) inputs_.Push(Input{std::move(abort)});
    } else if (s.ok() && type == proto::RequestType::kUtility) {
      Utility utility;
      s = proto::Decode(data, body.size(), &utility.request);
      if (s.ok() && utility.request.method == kAnnounceMethod) {
        // A frontend that (re)started after our ReadyResponse asks for it again.
        if (!shutdown_requested_) socket.send(zmq::buffer(ready_bytes), zmq::send_flags::dontwait);
      } else if (s.ok()) {
        inputs_.Push(Input{std::move(utility)});
      }
    }
    if (!s.ok()) LOG(WARNING) << "engine " << options_.rank << ": dropping a malformed message: " << s.message();
  }
}

void EngineCoreProc::InputLoop() {
  // Whatever way this thread leaves the announcement phase, WaitUntilAnnounced returns.
  struct GiveUp {
    EngineCoreProc* self;
    ~GiveUp() { self->SetAnnounced(Announce::kGaveUp); }
  } give_up{this};
  std::vector<zmq::socket_t> sockets;
  std::optional<zmq::socket_t> coordinator;
  std::string ready_bytes;
  if (!ConnectInputs(&sockets, &coordinator, &ready_bytes)) return;
  std::vector<zmq::pollitem_t> items;
  for (auto& s : sockets) items.push_back({s.handle(), 0, ZMQ_POLLIN, 0});
  if (coordinator) items.push_back({coordinator->handle(), 0, ZMQ_POLLIN, 0});
  while (!stop_io_) {
    try {
      zmq::poll(items.data(), items.size(), kIdlePoll);
      if (coordinator && (items.back().revents & ZMQ_POLLIN)) ReceiveFromCoordinator(*coordinator);
      for (size_t i = 0; i < sockets.size(); ++i) {
        if (items[i].revents & ZMQ_POLLIN) ReceiveFromFrontend(sockets[i], ready_bytes);
      }
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      LOG(ERROR) << "engine input socket error: " << e.what();
    }
  }
}

void EngineCoreProc::OutputLoop() {
  std::vector<zmq::socket_t> sockets;
  std::optional<zmq::socket_t> coordinator;
  try {
    if (has_coordinator_) {
      coordinator.emplace(context_, zmq::socket_type::push);
      coordinator->set(zmq::sockopt::linger, 0);
      coordinator->set(zmq::sockopt::sndhwm, 0);
      SecureOrThrow(*coordinator, addresses_.coordinator_output());
      coordinator->connect(addresses_.coordinator_output());
    }
    for (const auto& address : addresses_.outputs()) {
      zmq::socket_t s(context_, zmq::socket_type::push);
      s.set(zmq::sockopt::linger, 4000);
      s.set(zmq::sockopt::sndhwm, 0);
      SecureOrThrow(s, address);
      s.connect(address);
      sockets.push_back(std::move(s));
    }
  } catch (const zmq::error_t& e) {
    LOG(ERROR) << "engine output: cannot connect to a frontend: " << e.what();
    return;
  }
  proto::wire::Buffer buffer;  // reused for every message
  while (true) {
    std::optional<Output> item = outputs_.Pop(kIdlePoll);
    if (!item) {
      if (stop_io_) return;
      continue;
    }
    try {
      if (item->dead) {
        const std::string identity = EngineIdentity(options_.rank);
        for (auto& s : sockets) {
          s.send(zmq::buffer(std::string(proto::kEngineCoreDead)), zmq::send_flags::sndmore);
          s.send(zmq::buffer(identity), zmq::send_flags::none);
        }
        return;
      }
      if (!item->coordinator_report.empty()) {
        if (coordinator) coordinator->send(zmq::buffer(item->coordinator_report), zmq::send_flags::none);
        continue;
      }
      if (stop_io_ && item->outputs.outputs.empty() && !item->outputs.utility_output) return;
      const auto client = static_cast<size_t>(item->client_index);
      if (client >= sockets.size()) {
        LOG(ERROR) << "engine " << options_.rank << ": outputs for unknown client " << client;
        continue;
      }
      item->outputs.engine_index = static_cast<int32_t>(options_.rank);
      buffer.clear();
      proto::EncodeInto(item->outputs, buffer);
      sockets[client].send(zmq::const_buffer(buffer.data(), buffer.size()), zmq::send_flags::none);
      if (item->outputs.outputs.capacity() > 0) recycled_.Push(std::move(item->outputs));
    } catch (const zmq::error_t& e) {
      LOG(ERROR) << "engine output socket error: " << e.what();
    }
  }
}

void EngineCoreProc::SendAbortOutput(const proto::EngineCoreRequest& request, const std::string& why) {
  LOG(WARNING) << "engine " << options_.rank << ": request " << request.request_id << " refused: " << why;
  Output out;
  out.client_index = request.client_index;
  proto::EngineCoreOutput o;
  o.request_id = request.request_id;
  o.finish_reason = proto::FinishReason::kAbort;
  o.error_code = StatusCode::kUnavailable;
  o.error_message = why;
  out.outputs.outputs.push_back(std::move(o));
  out.outputs.timestamp = MonotonicSeconds();
  outputs_.Push(std::move(out));
}

void EngineCoreProc::HandleUtility(const proto::UtilityRequest& request) {
  proto::UtilityOutput result{request.call_id, std::nullopt, std::nullopt};
  if (shutdown_requested_) {
    result.failure_message = "Server shutting down";
  } else if (request.method == "reset_prefix_cache") {
    result.result = core_->ResetPrefixCache() ? "true" : "false";
  } else if (request.method == "health" || request.method == "check_health") {
    result.result = "ok";
  } else if (request.method == "stats") {
    proto::SchedulerStats stats = core_->scheduler().PeekStats();
    result.result = proto::Encode(stats);
  } else if (auto lora = HandleLoraUtility(*core_, request)) {
    result.result = std::move(lora);
  } else {
    result.failure_message = "unknown utility method '" + request.method + "'";
  }
  Output out;
  out.client_index = request.client_index;
  out.outputs.utility_output = std::move(result);
  out.outputs.timestamp = MonotonicSeconds();
  outputs_.Push(std::move(out));
}

void EngineCoreProc::SendToCoordinator(const proto::EngineReport& report) {
  Output out;
  out.coordinator_report = report.SerializeAsString();
  outputs_.Push(std::move(out));
}

void EngineCoreProc::ReportToCoordinator() {
  if (!has_coordinator_) return;
  for (const auto& report : reporter_.Update(core_->scheduler().PeekStats(), core_->HasRequests()))
    SendToCoordinator(report);
}

void EngineCoreProc::PublishIdleOutputs() {
  idle_outputs_due_ = false;
  std::vector<ClientOutputs> idle;
  core_->TakeIdleOutputs(&idle);
  for (auto& client : idle) {
    client.outputs.timestamp = MonotonicSeconds();
    outputs_.Push(Output{client.client_index, std::move(client.outputs), false, {}});
  }
}

void EngineCoreProc::HandleInput(Input input) {
  if (auto* request = std::get_if<proto::EngineCoreRequest>(&input)) {
    if (shutdown_requested_) return SendAbortOutput(*request, "the engine is shutting down");
    if (has_coordinator_) {
      if (auto report = reporter_.OnRequest(request->current_wave)) SendToCoordinator(*report);
    }
    Status s = core_->AddRequest(*request);
    if (s.ok()) ++requests_added_;
    if (!s.ok()) {
      // The frontend maps a full waiting queue to HTTP 429 from this abort.
      Output out;
      out.client_index = request->client_index;
      proto::EngineCoreOutput o;
      o.request_id = request->request_id;
      o.finish_reason = s.code() == StatusCode::kResourceExhausted ? proto::FinishReason::kAbort
                                                                     : proto::FinishReason::kError;
      o.error_code = s.code();
      o.error_message = s.message();
      out.outputs.outputs.push_back(std::move(o));
      outputs_.Push(std::move(out));
    }
  } else if (auto* abort = std::get_if<Abort>(&input)) {
    core_->AbortRequests(abort->ids);
    idle_outputs_due_ = true;
  } else if (auto* utility = std::get_if<Utility>(&input)) {
    HandleUtility(utility->request);
  } else if (auto* wave = std::get_if<StartWave>(&input)) {
    reporter_.OnStartWave(wave->start);
  }
}

Status EngineCoreProc::Run() {
  auto drain_deadline = std::chrono::steady_clock::time_point::max();
  Status failure;
  while (true) {
    if (shutdown_requested_ && drain_deadline == std::chrono::steady_clock::time_point::max()) {
      LOG(INFO) << "engine " << options_.rank << ": draining (up to " << options_.shutdown_timeout.count() << " ms)";
      drain_deadline = std::chrono::steady_clock::now() + options_.shutdown_timeout;
    }
    if (shutdown_requested_ && (!core_->HasRequests() || std::chrono::steady_clock::now() >= drain_deadline)) break;
    // Block for input only when there is nothing to step.
    if (!core_->HasRequests()) {
      if (auto input = inputs_.Pop(kIdlePoll)) {
        HandleInput(std::move(*input));
      } else if (Status health = core_->CheckHealth(); !health.ok()) {
        failure = health;  // a worker died while idle: fail now, not at the next request
        break;
      }
    }
    for (auto& input : inputs_.PopAll()) HandleInput(std::move(input));
    ReportToCoordinator();
    if (!core_->HasRequests()) {
      if (idle_outputs_due_) PublishIdleOutputs();
      continue;
    }
    idle_outputs_due_ = false;  // this step's outputs carry the aborts and the stats
    const auto step_start = std::chrono::steady_clock::now();
    const auto step_cpu_start = ThreadCpuTime();
    // Refill last step's (moved-from) entries with buffers the output thread is done with.
    std::deque<proto::EngineCoreOutputs> recycled = recycled_.PopAll();
    for (auto& client : step_outputs_) {
      if (recycled.empty()) break;
      client.outputs = std::move(recycled.front());
      recycled.pop_front();
    }
    if (Status step = core_->Step(&step_outputs_); !step.ok()) {
      failure = step;
      break;
    }
    size_t batch = 0;
    for (auto& client : step_outputs_) {
      batch += client.outputs.outputs.size();
      client.outputs.timestamp = MonotonicSeconds();
      outputs_.Push(Output{client.client_index, std::move(client.outputs), false, {}});
    }
    ReportToCoordinator();
    step_overhead_.Add(std::chrono::steady_clock::now() - step_start, core_->last_execute_time(), batch);
    step_overhead_.AddCpu(ThreadCpuTime() - step_cpu_start - core_->last_execute_cpu_time());
  }
  if (!failure.ok()) {
    LOG(ERROR) << "engine " << options_.rank << " failed: " << failure.ToString();
    outputs_.Push(Output{0, {}, true, {}});
  }
  stop_io_ = true;
  outputs_.Push(Output{});
  if (output_thread_.joinable()) output_thread_.join();
  if (input_thread_.joinable()) input_thread_.join();
  core_->Shutdown();
  LOG(INFO) << "engine " << options_.rank << ": served " << requests_added_ << " requests";
  LOG(INFO) << "engine " << options_.rank << " step overhead: " << step_overhead_.Summary();
  return failure;
}

}  // namespace llmserve::engine_core
