#include "engine_core/multiproc_executor.h"

#include <glog/logging.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/ipc/shm_allreduce.h"
#include "common/ipc/zmq_socket.h"
#include "common/kv_transfer/kv_transfer_config.h"
#include "proto/messages.h"
#include "proto/worker_protocol.h"

namespace llmserve::engine_core {

namespace {
using proto::WorkerCommand;
using proto::WorkerReply;
constexpr auto kPoll = std::chrono::milliseconds(200);
}  // namespace

StatusOr<std::unique_ptr<MultiProcExecutor>> MultiProcExecutor::Start(const proto::EngineConfig& config,
                                                                      const std::string& worker_binary) {
  std::unique_ptr<MultiProcExecutor> e(new MultiProcExecutor());
  e->world_size_ = std::max(1u, config.parallel().tensor_parallel_size());
  auto kv_transfer = common::ParseKVTransferConfig(config.kv_transfer_config());
  if (!kv_transfer.ok()) return kv_transfer.status();
  if (kv_transfer->enabled()) e->kv_reports_ = std::make_unique<KVOutputAggregator>(e->world_size_);
  e->run_dir_ = "/tmp/llmserve-engine-" + std::to_string(getpid());
  std::filesystem::create_directories(e->run_dir_);
  const std::string config_file = e->run_dir_ + "/engine_config.pb";
  {
    std::ofstream out(config_file, std::ios::binary);
    if (!out || !(out << config.SerializeAsString())) return Status::Internal("cannot write " + config_file);
  }
  common::ipc::ShmRingConfig ring;
  ring.num_local_readers = e->world_size_;
  LLMSERVE_ASSIGN_OR_RETURN(e->commands_, common::ipc::ShmRingWriter::Create(ring));
  const std::string handle_file = e->run_dir_ + "/commands.handle";
  {
    std::ofstream out(handle_file);
    if (!out || !(out << e->commands_->handle().Serialize())) return Status::Internal("cannot write " + handle_file);
  }
  const std::string group = common::ipc::ShmCommunicator::NewGroupName();
  for (uint32_t rank = 0; rank < e->world_size_; ++rank) {
    const std::string response_file = e->run_dir_ + "/worker" + std::to_string(rank) + ".handle";
    LLMSERVE_RETURN_IF_ERROR(
        e->workers_
            .Spawn("worker" + std::to_string(rank),
                   {worker_binary, "--config-file=" + config_file, "--broadcast-handle-file=" + handle_file,
                    "--response-handle-file=" + response_file, "--tp-group=" + group,
                    "--rank=" + std::to_string(rank), "--world-size=" + std::to_string(e->world_size_)})
            .status());
  }
  // Each worker publishes its response ring's handle in a file.
  for (uint32_t rank = 0; rank < e->world_size_; ++rank) {
    const std::string response_file = e->run_dir_ + "/worker" + std::to_string(rank) + ".handle";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!std::filesystem::exists(response_file)) {
      if (auto exit = e->workers_.WaitAny(std::chrono::milliseconds(0)))
        return Status::Unavailable(exit->name + " " + exit->Describe() + " while starting");
      if (std::chrono::steady_clock::now() > deadline)
        return Status::Unavailable("worker " + std::to_string(rank) + " did not start within 2 minutes");
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::ifstream in(response_file);
    std::stringstream text;
    text << in.rdbuf();
    LLMSERVE_ASSIGN_OR_RETURN(common::ipc::ShmRingHandle handle, common::ipc::ShmRingHandle::Parse(text.str()));
    LLMSERVE_ASSIGN_OR_RETURN(auto reader, common::ipc::ShmRingReader::AttachLocal(handle, 0));
    e->responses_.push_back(std::move(reader));
  }
  LLMSERVE_RETURN_IF_ERROR(e->commands_->WaitUntilReady(std::chrono::minutes(2)));
  for (auto& r : e->responses_) LLMSERVE_RETURN_IF_ERROR(r->WaitUntilReady(std::chrono::minutes(2)));
  return e;
}

MultiProcExecutor::~MultiProcExecutor() { Shutdown(); }

Status MultiProcExecutor::Broadcast(uint8_t command, std::string_view payload) {
  const char type = static_cast<char>(command);
  const std::string_view parts[] = {std::string_view(&type, 1), payload};
  return commands_->Write(parts);
}

StatusOr<std::string> MultiProcExecutor::Receive(uint32_t rank) {
  std::string message;
  while (true) {
    Status s = responses_[rank]->ReadCopy(&message, kPoll);
    if (s.ok()) break;
    if (!common::ipc::IsTimeout(s)) return Status::Unavailable("worker " + std::to_string(rank) + ": " + s.message());
    if (auto exit = workers_.WaitAny(std::chrono::milliseconds(0)))
      return Status::Unavailable(exit->name + " " + exit->Describe());
  }
  if (message.empty()) return Status::DataLoss("empty answer from worker " + std::to_string(rank));
  if (static_cast<WorkerReply>(message[0]) != WorkerReply::kOk)
    return Status::Internal("worker " + std::to_string(rank) + " failed: " + message.substr(1));
  return message.substr(1);
}

StatusOr<int32_t> MultiProcExecutor::Initialize(const KVCacheConfig& config) {
  if (failed_ || shut_down_) return Status::Unavailable("executor is not running");
  int64_t num_blocks = config.num_blocks;
  if (num_blocks == 0) {
    LLMSERVE_RETURN_IF_ERROR(Broadcast(static_cast<uint8_t>(WorkerCommand::kProfileKvCache), ""));
    for (uint32_t rank = 0; rank < world_size_; ++rank) {
      LLMSERVE_ASSIGN_OR_RETURN(std::string text, Receive(rank));
      const int64_t blocks = std::stoll(text);
      num_blocks = rank == 0 ? blocks : std::min(num_blocks, blocks);  // every rank must fit them
    }
    LOG(INFO) << "KV cache: " << num_blocks << " blocks fit on every one of " << world_size_ << " workers";
    num_blocks = CapProfiledBlocks(num_blocks, config);
  }
  if (num_blocks < 2) return Status::ResourceExhausted("no memory left for the KV cache (fewer than 2 blocks fit)");
  LLMSERVE_RETURN_IF_ERROR(Broadcast(static_cast<uint8_t>(WorkerCommand::kInitKvCache), std::to_string(num_blocks)));
  for (uint32_t rank = 0; rank < world_size_; ++rank) LLMSERVE_RETURN_IF_ERROR(Receive(rank).status());
  return static_cast<int32_t>(num_blocks);
}

StatusOr<proto::ModelRunnerOutput> MultiProcExecutor::ExecuteModel(const proto::SchedulerOutput& output) {
  if (failed_ || shut_down_) return Status::Unavailable("executor is not running");
  buffer_.clear();
  proto::EncodeInto(output, buffer_);
  Status sent = Broadcast(static_cast<uint8_t>(WorkerCommand::kExecute), std::string_view(buffer_.data(), buffer_.size()));
  auto answer = sent.ok() ? Receive(proto::kOutputRank) : StatusOr<std::string>(sent);
  if (!answer.ok()) {
    failed_ = true;
    return answer.status();
  }
  proto::ModelRunnerOutput result;
  LLMSERVE_RETURN_IF_ERROR(proto::Decode(*answer, &result));
  if (result.error) {
    failed_ = true;
    return Status::Internal("model execution failed: " + *result.error);
  }
  if (kv_reports_ != nullptr) {
    std::vector<std::optional<proto::KVConnectorOutput>> reports(world_size_);
    reports[proto::kOutputRank] = std::move(result.kv_connector_output);
    for (uint32_t rank = 0; rank < world_size_; ++rank) {
      if (rank == proto::kOutputRank) continue;
      auto other = Receive(rank);
      proto::ModelRunnerOutput theirs;
      Status decoded = other.ok() ? proto::Decode(*other, &theirs) : other.status();
      if (decoded.ok() && theirs.error) decoded = Status::Internal("model execution failed: " + *theirs.error);
      if (!decoded.ok()) {
        failed_ = true;
        return decoded;
      }
      reports[rank] = std::move(theirs.kv_connector_output);
    }
    result.kv_connector_output = kv_reports_->Merge(reports);
  }
  return result;
}

Status MultiProcExecutor::LoraCommand(uint8_t command, const std::string& payload) {
  if (failed_ || shut_down_) return Status::Unavailable("executor is not running");
  LLMSERVE_RETURN_IF_ERROR(Broadcast(command, payload));
  Status first;
  for (uint32_t rank = 0; rank < world_size_; ++rank) {
    auto answer = Receive(rank);
    if (!answer.ok()) {
      failed_ = true;
      return answer.status();
    }
    Status s = proto::DecodeStatusReply(*answer);
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

Status MultiProcExecutor::AddLora(const std::string& name, const std::string& dir) {
  Status added = LoraCommand(static_cast<uint8_t>(WorkerCommand::kAddLora), name + std::string(1, '\0') + dir);
  if (!added.ok() && !failed_) (void)LoraCommand(static_cast<uint8_t>(WorkerCommand::kRemoveLora), name);
  return added;
}

Status MultiProcExecutor::RemoveLora(const std::string& name) {
  return LoraCommand(static_cast<uint8_t>(WorkerCommand::kRemoveLora), name);
}

Status MultiProcExecutor::CheckHealth() {
  if (failed_ || shut_down_) return Status::Unavailable("executor is not running");
  // Reaps a worker that died while no step was running (a step notices in Receive).
  if (auto exit = workers_.WaitAny(std::chrono::milliseconds(0))) {
    failed_ = true;
    return Status::Unavailable(exit->name + " " + exit->Describe());
  }
  if (workers_.running() != world_size_) return Status::Unavailable("a worker exited");
  return Status::Ok();
}

void MultiProcExecutor::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (commands_) {
    (void)Broadcast(static_cast<uint8_t>(WorkerCommand::kShutdown), "");
    commands_->Close();
  }
  workers_.TerminateAll(std::chrono::seconds(4));
  std::error_code ec;
  std::filesystem::remove_all(run_dir_, ec);
}

}  // namespace llmserve::engine_core
