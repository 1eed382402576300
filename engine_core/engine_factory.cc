#include "engine_core/engine_factory.h"

#include <glog/logging.h>

#include <algorithm>

#include "common/process/child_processes.h"
#include "engine_core/inproc_executor.h"
#include "engine_core/multiproc_executor.h"
#include "engine_core/structured_output_vocabulary.h"
#include "engine_core/zmq_kv_event_publisher.h"
#include "worker/core_share.h"
#include "worker/kv_cache_sizing.h"
#include "worker/model_config.h"
#include "worker/model_runner.h"

namespace llmserve::engine_core {

StatusOr<BuiltEngine> BuildEngineCore(const proto::EngineConfig& config, int32_t engine_index,
                                      const ExecutorWrapper& wrap) {
  const auto& model = config.model();
  LLMSERVE_ASSIGN_OR_RETURN(worker::ModelConfig model_config, worker::LoadModelConfig(model.model_dir()));

  worker::ModelRunnerConfig rc;
  rc.model_dir = model.model_dir();
  rc.block_size = config.cache().block_size() ? config.cache().block_size() : worker::kDefaultCpuBlockSize;
  rc.max_num_batched_tokens = config.scheduler().max_num_batched_tokens();
  rc.max_num_seqs = config.scheduler().max_num_seqs();
  rc.kv_cache_memory_bytes = config.cache().kv_cache_memory_bytes();
  const uint32_t ranks_on_node = std::max(1u, config.parallel().data_parallel_size_local());
  rc.process_seed = model.seed();
  LLMSERVE_ASSIGN_OR_RETURN(const worker::Quantization quantization,
                            worker::ResolveQuantization(model.quantization(), model_config.quantization));
  rc.quantization = model.quantization();
  rc.precision = worker::PrecisionForDtype(model.dtype(), model_config.torch_dtype,
                                           quantization != worker::Quantization::kNone);
  LLMSERVE_ASSIGN_OR_RETURN(rc.device, worker::ResolveDevice(config.parallel().device(), model.dtype(),
                                                             std::max(1u, config.parallel().tensor_parallel_size())));
  if (rc.device == "cuda") {
    // The GPU computes in bf16 (vLLM's "auto" on a GPU also takes fp32 checkpoints to half precision).
    if (model.dtype() == "float32" || model.dtype() == "float16")
      return Status::InvalidArgument("--dtype " + model.dtype() +
                                     " is not supported by the CUDA backend yet: use auto or bfloat16");
    rc.precision = kernels::cpu::MatmulPrecision::kBF16;
    rc.enforce_eager = model.enforce_eager();
  }
  rc.dummy_weights = model.load_format() == "dummy";
  if (model.has_pooler()) {
    LLMSERVE_ASSIGN_OR_RETURN(const worker::PoolingType pooling, worker::ParsePoolingType(model.pooler().pooling_type()));
    rc.pooling = pooling;
  }
  const auto& spec = config.speculative();
  if (!spec.method().empty() && spec.method() != "ngram" && spec.method() != "suffix")
    return Status::InvalidArgument("speculative decoding method '" + spec.method() +
                                   "' is not supported (only ngram and suffix)");
  if (!spec.method().empty() && rc.device == "cuda")
    return Status::InvalidArgument(
        "speculative decoding runs on the CPU backend only so far: use --device cpu or drop --speculative-config");
  rc.kv_cache_dtype = worker::KvDTypeFor(config.cache().kv_cache_dtype(), rc.precision);
  if (config.lora().enable_lora()) {
    rc.lora_limits.max_rank = config.lora().max_lora_rank();
    rc.max_cpu_loras = config.lora().max_cpu_loras();
    for (const auto& m : config.lora().modules()) rc.lora_modules.push_back({m.name(), m.path()});
  }
  rc.memory_fraction = worker::WorkerMemoryFraction(config.cache(), rc.device, 1, ranks_on_node);
  LLMSERVE_ASSIGN_OR_RETURN(common::KVTransferConfig kv_transfer,
                            common::ParseKVTransferConfig(config.kv_transfer_config()));
  // vLLM: each data-parallel engine has its own id.
  if (kv_transfer.enabled() && config.parallel().data_parallel_size() > 1)
    kv_transfer.engine_id += "_dp" + std::to_string(engine_index);
  if (kv_transfer.enabled() && rc.device != "cpu")
    return Status::InvalidArgument("--kv-transfer-config: KV connectors run on the CPU backend only so far; pass "
                                   "--device cpu");
  rc.kv_transfer = kv_transfer;
  BuiltEngine built;
  if (rc.device == "cpu") {
    if (config.cache().memory_utilization() > 0)
      LOG(WARNING) << "--gpu-memory-utilization has no effect on the CPU backend: size the KV cache with "
                      "--kv-cache-memory (bytes or a fraction of RAM)";
    // Taken before the model loads, so engines starting beside this one count it when they size their caches.
    auto share = common::MemoryShare::Take();
    if (share.ok()) built.memory_share = std::move(share).value();
    else LOG(WARNING) << share.status().message() << ": this engine's KV cache does not count in other engines' share";
  }
  // Data-parallel ranks on one node share its cores: an equal share each.
  rc.num_threads = worker::CoreShare(ranks_on_node);
  // Tensor parallelism runs one worker process per rank; otherwise the model
  // runs in this process.
  std::unique_ptr<Executor> executor;
  if (config.parallel().tensor_parallel_size() > 1) {
    LLMSERVE_ASSIGN_OR_RETURN(executor,
                              MultiProcExecutor::Start(config, common::ExecutableDirectory() + "/llmserve-worker"));
  } else {
    LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<worker::ModelRunner> runner, worker::ModelRunner::Create(rc));
    executor = std::make_unique<InProcExecutor>(std::move(runner));
  }

  if (wrap) executor = wrap(std::move(executor));

  built.block_size = static_cast<uint32_t>(rc.block_size);
  built.max_model_len = model.max_model_len() ? model.max_model_len()
                                               : static_cast<uint32_t>(model_config.max_position_embeddings);
  if (model_config.max_position_embeddings && built.max_model_len > model_config.max_position_embeddings)
    return Status::InvalidArgument("--max-model-len " + std::to_string(built.max_model_len) +
                                   " exceeds the model's max_position_embeddings " +
                                   std::to_string(model_config.max_position_embeddings));

  EngineCoreConfig ec;
  ec.engine_index = engine_index;
  ec.scheduler.max_num_batched_tokens = static_cast<int32_t>(config.scheduler().max_num_batched_tokens());
  ec.scheduler.max_num_seqs = static_cast<int32_t>(config.scheduler().max_num_seqs());
  ec.scheduler.max_model_len = static_cast<int32_t>(built.max_model_len);
  ec.scheduler.long_prefill_token_threshold = static_cast<int32_t>(config.scheduler().long_prefill_token_threshold());
  ec.scheduler.enable_chunked_prefill = config.scheduler().enable_chunked_prefill();
  ec.scheduler.pooling_runner = rc.pooling.has_value();
  ec.scheduler.policy = config.scheduler().policy() == proto::SchedulerConfig::PRIORITY ? SchedulingPolicy::kPriority
                                                                                         : SchedulingPolicy::kFcfs;
  ec.scheduler.max_waiting_requests = static_cast<int32_t>(config.scheduler().max_waiting_requests());
  if (config.lora().enable_lora()) {
    ec.scheduler.max_loras = static_cast<int32_t>(config.lora().max_loras());
    for (const auto& m : config.lora().modules()) ec.lora_modules.push_back({m.name(), m.path(), m.base_model_name()});
  }
  if (spec.method() == "ngram" || spec.method() == "suffix") {
    ec.scheduler.suffix_decoding = spec.method() == "suffix";
    ec.scheduler.suffix.max_tree_depth = static_cast<int32_t>(spec.suffix_decoding_max_tree_depth());
    ec.scheduler.suffix.max_cached_requests = static_cast<int32_t>(spec.suffix_decoding_max_cached_requests());
    ec.scheduler.suffix.max_spec_factor = spec.suffix_decoding_max_spec_factor();
    ec.scheduler.suffix.min_token_prob = spec.suffix_decoding_min_token_prob();
    ec.scheduler.num_speculative_tokens = static_cast<int32_t>(spec.num_speculative_tokens());
    ec.scheduler.ngram.min_n = static_cast<int32_t>(spec.prompt_lookup_min());
    ec.scheduler.ngram.max_n = static_cast<int32_t>(spec.prompt_lookup_max());
    ec.scheduler.spec_disable_by_batch_size = static_cast<int32_t>(spec.disable_by_batch_size());
    if (ec.scheduler.num_speculative_tokens < 1)
      return Status::InvalidArgument("speculative decoding needs num_speculative_tokens >= 1");
  }
  ec.kv_transfer = kv_transfer;
  ec.tensor_parallel_size = std::max(1u, config.parallel().tensor_parallel_size());
  ec.kv.block_size = static_cast<int32_t>(rc.block_size);
  ec.kv.max_model_len = static_cast<int32_t>(built.max_model_len);
  ec.kv.enable_prefix_caching = config.cache().enable_prefix_caching();
  if (ec.kv.enable_prefix_caching && rc.pooling && *rc.pooling != worker::PoolingType::kLast) {
    // MEAN and CLS pooling read every prompt position's hidden state (vLLM turns it off too).
    LOG(INFO) << "Prefix caching is off: " << model.pooler().pooling_type() << " pooling reads the whole prompt";
    ec.kv.enable_prefix_caching = false;
  }
  ec.kv.hash_algo = config.cache().prefix_caching_hash_algo() == "xxhash" ? HashAlgo::kXxHash : HashAlgo::kSha256;
  ec.kv.num_blocks = static_cast<int32_t>(config.cache().num_kv_blocks_override());
  const proto::KVEventsConfig& kv_events = config.kv_events();
  const bool publish_kv_events = kv_events.enable_kv_cache_events() && kv_events.publisher() == "zmq";
  ec.kv.enable_kv_cache_events = publish_kv_events;
  if (rc.device == "cpu" && worker::KvCacheSizeIsDefault(config.cache()))
    ec.kv.profile_block_cap = static_cast<int32_t>(std::min<size_t>(
        worker::SchedulerUsableBlocks(rc.max_num_seqs, built.max_model_len, rc.block_size), INT32_MAX));
  // Structured outputs: the vocabulary is read from the tokenizer on first use.
  auto structured_output = std::make_unique<StructuredOutputManager>(
      [dir = model.tokenizer().empty() ? model.model_dir() : model.tokenizer(), vocab_size = static_cast<int32_t>(model_config.vocab_size)] {
        return LoadGrammarVocabulary(dir, vocab_size);
      });
  LLMSERVE_ASSIGN_OR_RETURN(built.core,
                            EngineCore::Create(ec, std::move(executor), std::move(structured_output)));
  if (publish_kv_events) {
    if (!ec.kv.enable_prefix_caching)
      LOG(WARNING) << "--kv-events-config: prefix caching is off, so no block is ever cached and no event published";
    LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<ZmqKVEventPublisher> publisher,
                              ZmqKVEventPublisher::Start(kv_events, engine_index));
    built.core->SetKVEventPublisher(std::move(publisher));
  }
  return built;
}

}  // namespace llmserve::engine_core
