#include "worker/worker_proc.h"

#include <glog/logging.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/ipc/shm_allreduce.h"
#include "common/ipc/shm_ring.h"
#include "common/kv_transfer/kv_transfer_config.h"
#include "proto/engine_config.pb.h"
#include "proto/messages.h"
#include "worker/core_share.h"
#include "worker/model_config.h"
#include "worker/kv_cache_sizing.h"
#include "worker/model_runner.h"
#include "proto/worker_protocol.h"

namespace llmserve::worker {

namespace {

using proto::kOutputRank;
using proto::WorkerCommand;
using proto::WorkerReply;

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes atomically (temp file + rename) so the reader never sees half a file.
Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out || !(out << text)) return Status::Internal("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::Internal("cannot rename " + tmp + ": " + ec.message());
  return Status::Ok();
}

ModelRunnerConfig RunnerConfig(const proto::EngineConfig& config, uint32_t rank, uint32_t world_size) {
  // An unreadable config.json fails the model load below, with its own message.
  auto model_config = LoadModelConfig(config.model().model_dir());
  ModelRunnerConfig rc;
  rc.model_dir = config.model().model_dir();
  rc.tp_rank = rank;
  rc.tp_size = world_size;
  rc.block_size = config.cache().block_size() ? config.cache().block_size() : kDefaultCpuBlockSize;
  rc.max_num_batched_tokens = config.scheduler().max_num_batched_tokens();
  rc.max_num_seqs = config.scheduler().max_num_seqs();
  // The KV budget is the engine's, split evenly across the ranks.
  rc.kv_cache_memory_bytes = config.cache().kv_cache_memory_bytes() / world_size;
  const uint32_t ranks_on_node = std::max(1u, config.parallel().data_parallel_size_local());
  rc.process_seed = config.model().seed();
  // A --quantization the model contradicts fails the model load, with its own message.
  auto quantization = model_config.ok() ? ResolveQuantization(config.model().quantization(), model_config->quantization)
                                        : StatusOr<Quantization>(Quantization::kNone);
  rc.quantization = config.model().quantization();
  rc.expert_parallel = config.parallel().enable_expert_parallel();
  if (rc.expert_parallel) {  // the launcher checked the name
    rc.expert_placement = ParseExpertPlacement(config.parallel().expert_placement_strategy()).value();
  }
  rc.precision = PrecisionForDtype(config.model().dtype(), model_config.ok() ? model_config->torch_dtype : "",
                                   quantization.ok() && *quantization != Quantization::kNone);
  rc.kv_cache_dtype = KvDTypeFor(config.cache().kv_cache_dtype(), rc.precision);
  // An unknown device fails in ModelRunner::Create, which names it.
  auto device = ResolveDevice(config.parallel().device(), config.model().dtype(), world_size);
  rc.device = device.ok() ? *device : config.parallel().device();
  rc.memory_fraction = WorkerMemoryFraction(config.cache(), rc.device, world_size, ranks_on_node);
  rc.enforce_eager = config.model().enforce_eager();
  rc.dummy_weights = config.model().load_format() == "dummy";
  if (config.model().has_pooler()) rc.pooling = ParsePoolingType(config.model().pooler().pooling_type()).value();
  if (config.lora().enable_lora()) {
    rc.lora_limits.max_rank = config.lora().max_lora_rank();
    rc.max_cpu_loras = config.lora().max_cpu_loras();
    for (const auto& m : config.lora().modules()) rc.lora_modules.push_back({m.name(), m.path()});
  }
  // Each worker of each data-parallel rank on the node gets an equal share of the cores.
  rc.num_threads = CoreShare(static_cast<size_t>(world_size) * ranks_on_node);
  rc.show_progress = rank == 0;
  return rc;
}

std::string Reply(WorkerReply status, std::string_view payload) {
  std::string out(1, static_cast<char>(status));
  out.append(payload);
  return out;
}

}  // namespace

Status RunWorker(const WorkerProcOptions& options) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string config_bytes, ReadFile(options.config_file));
  proto::EngineConfig config;
  if (!config.ParseFromString(config_bytes)) return Status::DataLoss("malformed engine config in " + options.config_file);
  LLMSERVE_ASSIGN_OR_RETURN(std::string handle_text, ReadFile(options.broadcast_handle_file));
  LLMSERVE_ASSIGN_OR_RETURN(common::ipc::ShmRingHandle handle, common::ipc::ShmRingHandle::Parse(handle_text));
  LLMSERVE_ASSIGN_OR_RETURN(auto commands, common::ipc::ShmRingReader::AttachLocal(handle, options.rank));

  common::ipc::ShmRingConfig response_config;
  response_config.num_chunks = 4;
  response_config.chunk_bytes = 4u << 20;
  response_config.num_local_readers = 1;
  LLMSERVE_ASSIGN_OR_RETURN(auto responses, common::ipc::ShmRingWriter::Create(response_config));
  LLMSERVE_RETURN_IF_ERROR(WriteFileAtomically(options.response_handle_file, responses->handle().Serialize()));
  LLMSERVE_RETURN_IF_ERROR(responses->WaitUntilReady(std::chrono::minutes(5)));
  LLMSERVE_RETURN_IF_ERROR(commands->WaitUntilReady(std::chrono::minutes(5)));

  std::unique_ptr<common::ipc::Communicator> comm;
  if (options.world_size > 1) {
    common::ipc::ShmCommunicatorConfig cc;
    cc.name = options.tp_group;
    cc.rank = static_cast<int>(options.rank);
    cc.world_size = static_cast<int>(options.world_size);
    cc.timeout = std::chrono::minutes(5);
    LLMSERVE_ASSIGN_OR_RETURN(comm, common::ipc::ShmCommunicator::Create(cc));
  }
  ModelRunnerConfig runner_config = RunnerConfig(config, options.rank, options.world_size);
  auto kv_transfer = common::ParseKVTransferConfig(config.kv_transfer_config());
  if (kv_transfer.ok()) runner_config.kv_transfer = *kv_transfer;
  auto runner = kv_transfer.ok() ? ModelRunner::Create(runner_config, comm.get())
                                 : StatusOr<std::unique_ptr<ModelRunner>>(kv_transfer.status());
  // With a KV connector every rank reports its transfers (the executor merges them).
  const bool replies_to_execute = options.rank == kOutputRank || runner_config.kv_transfer.enabled();
  proto::wire::Buffer buffer;
  std::string message;
  while (true) {
    Status s = commands->ReadCopy(&message);
    if (!s.ok()) {
      LOG(INFO) << "worker " << options.rank << ": the engine is gone (" << s.message() << "); exiting";
      return Status::Ok();
    }
    if (message.empty()) continue;
    const auto command = static_cast<WorkerCommand>(message[0]);
    const std::string_view payload(message.data() + 1, message.size() - 1);
    if (command == WorkerCommand::kShutdown) return Status::Ok();
    // A load failure is reported to the engine at its first command.
    if (!runner.ok()) {
      (void)responses->Write(Reply(WorkerReply::kError, runner.status().ToString()));
      return runner.status();
    }
    ModelRunner& r = **runner;
    switch (command) {
      case WorkerCommand::kProfileKvCache: {
        auto budget = r.ProfileKvCache();
        LLMSERVE_RETURN_IF_ERROR(responses->Write(
            budget.ok() ? Reply(WorkerReply::kOk, std::to_string(budget->num_blocks))
                        : Reply(WorkerReply::kError, budget.status().ToString())));
        break;
      }
      case WorkerCommand::kInitKvCache: {
        Status init = r.InitializeKvCache(std::stoull(std::string(payload)));
        LLMSERVE_RETURN_IF_ERROR(responses->Write(init.ok() ? Reply(WorkerReply::kOk, "")
                                                            : Reply(WorkerReply::kError, init.ToString())));
        break;
      }
      case WorkerCommand::kExecute: {
        proto::SchedulerOutput step;
        Status decoded = proto::Decode(payload.data(), payload.size(), &step);
        proto::ModelRunnerOutput out;
        if (decoded.ok()) out = r.Execute(step);
        else out.error = "worker " + std::to_string(options.rank) + ": " + decoded.ToString();
        if (out.error && !replies_to_execute) LOG(ERROR) << "worker " << options.rank << ": " << *out.error;
        if (replies_to_execute) {
          buffer.clear();
          buffer.write("\0", 1);  // WorkerReply::kOk: errors travel in ModelRunnerOutput.error
          proto::EncodeInto(out, buffer);
          LLMSERVE_RETURN_IF_ERROR(responses->Write(std::string_view(buffer.data(), buffer.size())));
        }
        break;
      }
      case WorkerCommand::kAddLora:
      case WorkerCommand::kRemoveLora: {
        const size_t split = payload.find('\0');  // kAddLora: name '\0' directory
        const std::string name(payload.substr(0, split));
        Status done = command == WorkerCommand::kRemoveLora ? r.RemoveLora(name)
                      : split == std::string_view::npos     ? Status::InvalidArgument("add_lora: no directory")
                                                            : r.AddLora(name, std::string(payload.substr(split + 1)));
        LLMSERVE_RETURN_IF_ERROR(responses->Write(Reply(WorkerReply::kOk, proto::EncodeStatusReply(done))));
        break;
      }
      default:
        LOG(ERROR) << "worker " << options.rank << ": unknown command " << static_cast<int>(message[0]);
    }
  }
}

}  // namespace llmserve::worker
