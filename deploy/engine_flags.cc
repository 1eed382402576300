#include "deploy/engine_flags.h"

#include <gflags/gflags.h>

#include <set>
#include <string>

#include "common/kv_transfer/kv_transfer_config.h"
#include "deploy/kv_events_config.h"
#include "deploy/lora_flags.h"
#include "deploy/pooler_config.h"
#include "deploy/speculative_config.h"
#include "worker/expert_placement.h"
#include "worker/quantization_config.h"

DEFINE_string(served_model_name, "",
              "Model name in the API; defaults to the Hugging Face id MODEL was given as, else the model "
              "directory's name.");
DEFINE_int32(max_model_len, 0, "Context length (prompt + output); 0 = the model's max_position_embeddings.");
DEFINE_string(dtype, "auto",
              "Matmul compute type: auto (the checkpoint's torch_dtype: bfloat16 checkpoints compute in bfloat16, "
              "on AMX where the CPU has it; GGUF files too, with their Q8_0 and Q4_K weights kept quantized; others in float32), "
              "bfloat16, float16 (computed as float32 on CPU), float32 (for a GGUF: the exactly dequantized "
              "weights, the reference mode).");
DEFINE_string(quantization, "",
              "Weight quantization (-q): empty or None runs what the checkpoint declares in config.json's "
              "quantization_config (compressed-tensors W8A8 int8: int8 weights with per-channel scales, on the int8 "
              "kernels, activations quantized as they run; GPTQ and AWQ 4-bit, widened to int8 for the same "
              "kernels; FP8 E4M3 with block or tensor scales, scaled to the model's float type at load); int8 "
              "quantizes a float checkpoint's linear layers (not the output layer) to per-channel int8 at load; "
              "compressed-tensors, gptq (gptq_marlin), awq (awq_marlin), fp8 and gguf must match the model. With "
              "--dtype float32 quantized weights are exactly dequantized (the reference mode). Other vLLM methods "
              "(modelopt, bitsandbytes, ...) are an error.");
DEFINE_int64(seed, 0, "Seed for requests that do not set one (0 = random per process).");
DEFINE_int32(tensor_parallel_size, 1, "Worker processes per engine (tensor-parallel ranks).");
DEFINE_bool(enable_expert_parallel, false,
            "Mixture-of-experts models: each tensor-parallel rank of an engine holds whole experts (placed by "
            "--expert-placement-strategy) instead of a slice of every expert, and the ranks' partial sums are "
            "added as before. Expert placement across data-parallel ranks is not implemented yet: with "
            "--data-parallel-size > 1 each engine holds every expert among its own ranks.");
DEFINE_string(expert_placement_strategy, "linear",
              "With --enable-expert-parallel: linear (each rank a contiguous range of experts, the first "
              "E mod ranks one more) or round_robin (expert e on rank e mod ranks).");
DEFINE_string(device, "auto", "Device for workers: auto (cuda when a GPU is visible, else cpu), cpu, cuda.");
DEFINE_int32(block_size, 0, "Tokens per KV-cache block; 0 = the device's default (CPU: 32, CUDA: 16).");
DEFINE_bool(enable_prefix_caching, true, "Reuse KV blocks of identical prompt prefixes.");
DEFINE_string(prefix_caching_hash_algo, "sha256", "Block hash for prefix caching: sha256 or xxhash.");
DEFINE_string(kv_cache_memory, "",
              "KV cache size: bytes (e.g. 4G, 512M), or a fraction (e.g. 0.5) of the memory (RAM on CPU, GPU memory "
              "on CUDA) for weights, activations and KV cache together. Empty: on CPU, what the scheduler can use "
              "(--max-num-seqs requests of --max-model-len tokens), capped at 0.9 of RAM less weights and "
              "activations; on CUDA, --gpu-memory-utilization of the GPU. On CPU a fraction (given or 0.9) is "
              "split evenly among the engines running on the host with the same runtime directory "
              "($LLMSERVE_RUNTIME_DIR, $XDG_RUNTIME_DIR or /tmp). The engine commits (zeroes) the cache at startup, "
              "so a host that lacks the memory fails then rather than mid-request; the log says the size and why.");
DEFINE_string(kv_cache_dtype, "auto",
              "KV cache element type: auto (bfloat16 when the model computes in bfloat16, as --dtype decides; "
              "float32 otherwise), bfloat16 (half the memory per block), float32, or on CPU fp8 / fp8_e4m3 / "
              "fp8_e5m2 (one byte per element: twice the blocks of bfloat16; K and V are stored divided by the "
              "checkpoint's per-layer self_attn.k_scale / v_scale, 1.0 where it has none).");
DEFINE_bool(enforce_eager, false, "CUDA: run every step eagerly (no CUDA graphs for decode steps).");
DEFINE_string(load_format, "auto",
              "How weights are loaded: auto or safetensors (the model directory's files; a GGUF file is found by "
              "itself), or dummy (random weights made at load; the directory needs only config.json and the "
              "tokenizer, e.g. from `llmserve make-model --format config`): for benchmarks. dummy runs on --device "
              "cuda only so far.");
DEFINE_double(gpu_memory_utilization, 0.9,
              "Fraction of GPU memory the worker may use (CUDA). No effect on CPU (a warning says so): size the KV "
              "cache there with --kv-cache-memory.");
DEFINE_int32(max_num_seqs, 256, "Maximum number of requests in one step, per engine.");
DEFINE_int32(max_num_batched_tokens, 2048, "Token budget of one step, per engine.");
DEFINE_int32(long_prefill_token_threshold, 0, "Chunk prompts longer than this many tokens per step (0 = off).");
DEFINE_string(scheduling_policy, "fcfs", "fcfs (first come first served) or priority.");
DEFINE_int32(max_waiting_requests, 0, "Refuse requests (HTTP 429) beyond this many waiting per engine; 0 = no bound.");
DEFINE_string(speculative_config, "",
              "Speculative decoding, as JSON with vLLM's SpeculativeConfig keys: "
              "'{\"method\": \"ngram\", \"num_speculative_tokens\": 4, \"prompt_lookup_min\": 2, "
              "\"prompt_lookup_max\": 5}' (prompt lookup: drafts copied from earlier in the prompt and output; "
              "lookup lengths default to 5). Only the n-gram method, on the CPU backend.");
DEFINE_string(kv_events_config, "",
              "KV cache events for prefix-aware routers, as JSON with vLLM's KVEventsConfig keys: "
              "'{\"enable_kv_cache_events\": true, \"publisher\": \"zmq\", \"endpoint\": \"tcp://*:5557\", "
              "\"replay_endpoint\": \"tcp://*:5558\"}' (also buffer_steps, hwm, max_queue_size, topic). Each engine "
              "publishes BlockStored / BlockRemoved / AllBlocksCleared batches in vLLM's msgpack layout; DP rank r "
              "uses tcp port + r.");
DEFINE_string(runner, "auto",
              "auto or generate (the model generates text), or pooling (it embeds: /v1/embeddings and /pooling "
              "answer, the generation endpoints do not; the CPU backend only). auto is generate.");
DEFINE_string(convert, "auto", "auto, none, or embed (= --runner pooling: a decoder served as an embedding model).");
DEFINE_string(task, "auto", "Deprecated vLLM spelling: embed = --runner pooling, generate = --runner generate.");
DEFINE_string(pooler_config, "",
              "The pooling runner's pooler, as JSON with vLLM's PoolerConfig keys: '{\"pooling_type\": \"MEAN\", "
              "\"normalize\": true}'. pooling_type is LAST (the last prompt token's final hidden state, the "
              "default), MEAN (the mean over the prompt; turns prefix caching off) or CLS (the first token's; "
              "likewise); normalize (default true) L2-normalizes embeddings unless a request says otherwise. A "
              "sentence-transformers model directory (modules.json) supplies its own defaults.");
DEFINE_string(override_pooler_config, "", "vLLM's older spelling of --pooler-config (applied before it).");
DEFINE_string(kv_transfer_config, "",
              "KV connector, as JSON with vLLM's KVTransferConfig keys: '{\"kv_connector\": "
              "\"SharedStorageConnector\", \"kv_role\": \"kv_both\", \"kv_connector_extra_config\": "
              "{\"shared_storage_path\": \"/path\"}}' (also engine_id, kv_buffer_device, kv_buffer_size, kv_rank, "
              "kv_parallel_size, kv_ip, kv_port, kv_load_failure_policy recompute|fail). kv_producer saves each "
              "prompt's KV, kv_consumer loads it instead of computing it, kv_both does either. "
              "SharedStorageConnector (vLLM main: ExampleConnector) keeps it in files; CPU backend only.");
DEFINE_double(shutdown_timeout, 30, "Seconds a draining engine may spend finishing requests on SIGTERM.");

namespace llmserve::deploy {

namespace {
// Parses "4G", "512M", "1000000" as bytes, or "0.5" as a fraction (returned negative).
bool ParseMemory(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string suffix(end);
  if (v <= 0) return false;
  if (suffix.empty() && v < 1.0) {
    *value = -v;
    return true;
  }
  double scale = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") scale = 1024.0;
  else if (suffix == "M" || suffix == "MiB") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GiB") scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty()) return false;
  *value = v * scale;
  return true;
}
}  // namespace

Status EngineConfigFromFlags(const std::string& model_dir, proto::EngineConfig* config,
                             const std::string& model_name) {
  auto* model = config->mutable_model();
  model->set_model_dir(model_dir);
  std::string name = FLAGS_served_model_name.empty() ? model_name : FLAGS_served_model_name;
  if (name.empty()) {
    name = model_dir;
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    name = name.substr(name.rfind('/') + 1);
  }
  model->set_served_model_name(name);
  if (FLAGS_max_model_len < 0) return Status::InvalidArgument("--max-model-len must not be negative");
  model->set_max_model_len(static_cast<uint32_t>(FLAGS_max_model_len));
  // vLLM's other spellings: half is float16, float is float32.
  const std::string dtype = FLAGS_dtype == "half" ? "float16" : FLAGS_dtype == "float" ? "float32" : FLAGS_dtype;
  if (dtype != "auto" && dtype != "bfloat16" && dtype != "float16" && dtype != "float32")
    return Status::InvalidArgument("--dtype must be auto, bfloat16, float16 (half) or float32 (float), got '" +
                                   FLAGS_dtype + "'");
  model->set_dtype(dtype);
  LLMSERVE_RETURN_IF_ERROR(worker::ValidateQuantizationFlag(FLAGS_quantization));
  model->set_quantization(FLAGS_quantization == "None" || FLAGS_quantization == "none" ? "" : FLAGS_quantization);
  model->set_seed(static_cast<uint64_t>(FLAGS_seed));
  model->set_enforce_eager(FLAGS_enforce_eager);
  if (FLAGS_load_format != "auto" && FLAGS_load_format != "safetensors" && FLAGS_load_format != "dummy")
    return Status::InvalidArgument("--load-format must be auto, safetensors or dummy, got '" + FLAGS_load_format +
                                   "'");
  model->set_load_format(FLAGS_load_format);

  auto* parallel = config->mutable_parallel();
  if (FLAGS_tensor_parallel_size < 1) return Status::InvalidArgument("--tensor-parallel-size must be at least 1");
  parallel->set_tensor_parallel_size(static_cast<uint32_t>(FLAGS_tensor_parallel_size));
  if (FLAGS_device != "auto" && FLAGS_device != "cpu" && FLAGS_device != "cuda")
    return Status::InvalidArgument("--device must be auto, cpu or cuda, got '" + FLAGS_device + "'");
  parallel->set_device(FLAGS_device);
  LLMSERVE_RETURN_IF_ERROR(worker::ParseExpertPlacement(FLAGS_expert_placement_strategy).status());
  parallel->set_enable_expert_parallel(FLAGS_enable_expert_parallel);
  parallel->set_expert_placement_strategy(FLAGS_expert_placement_strategy);

  auto* cache = config->mutable_cache();
  if (FLAGS_block_size < 0 || FLAGS_block_size > 1024)
    return Status::InvalidArgument("--block-size must be in 1..1024 (or 0 for the default)");
  cache->set_block_size(static_cast<uint32_t>(FLAGS_block_size));
  cache->set_enable_prefix_caching(FLAGS_enable_prefix_caching);
  if (FLAGS_prefix_caching_hash_algo != "sha256" && FLAGS_prefix_caching_hash_algo != "xxhash")
    return Status::InvalidArgument("--prefix-caching-hash-algo must be sha256 or xxhash");
  cache->set_prefix_caching_hash_algo(FLAGS_prefix_caching_hash_algo);
  if (!FLAGS_kv_cache_memory.empty()) {
    double v = 0;
    if (!ParseMemory(FLAGS_kv_cache_memory, &v))
      return Status::InvalidArgument("--kv-cache-memory must be bytes (4G, 512M, 1000000) or a fraction (0.5), got '" +
                                     FLAGS_kv_cache_memory + "'");
    if (v < 0) cache->set_kv_cache_memory_fraction(-v);
    else cache->set_kv_cache_memory_bytes(static_cast<uint64_t>(v));
  }
  static const std::set<std::string> kKvDTypes = {"auto", "bfloat16", "float32", "fp8", "fp8_e4m3", "fp8_e5m2"};
  if (kKvDTypes.count(FLAGS_kv_cache_dtype) == 0)
    return Status::InvalidArgument(
        "--kv-cache-dtype must be auto, bfloat16, float32, fp8, fp8_e4m3 or fp8_e5m2, got '" + FLAGS_kv_cache_dtype +
        "'");
  cache->set_kv_cache_dtype(FLAGS_kv_cache_dtype);
  if (FLAGS_gpu_memory_utilization <= 0 || FLAGS_gpu_memory_utilization > 1)
    return Status::InvalidArgument("--gpu-memory-utilization must be in (0, 1]");
  if (!gflags::GetCommandLineFlagInfoOrDie("gpu_memory_utilization").is_default)
    cache->set_memory_utilization(FLAGS_gpu_memory_utilization);

  auto* sched = config->mutable_scheduler();
  if (FLAGS_max_num_seqs < 1) return Status::InvalidArgument("--max-num-seqs must be at least 1");
  if (FLAGS_max_num_batched_tokens < 1) return Status::InvalidArgument("--max-num-batched-tokens must be at least 1");
  if (FLAGS_long_prefill_token_threshold < 0) return Status::InvalidArgument("--long-prefill-token-threshold must not be negative");
  if (FLAGS_max_waiting_requests < 0) return Status::InvalidArgument("--max-waiting-requests must not be negative");
  sched->set_max_num_seqs(static_cast<uint32_t>(FLAGS_max_num_seqs));
  sched->set_max_num_batched_tokens(static_cast<uint32_t>(FLAGS_max_num_batched_tokens));
  sched->set_long_prefill_token_threshold(static_cast<uint32_t>(FLAGS_long_prefill_token_threshold));
  sched->set_max_waiting_requests(static_cast<uint32_t>(FLAGS_max_waiting_requests));
  sched->set_enable_chunked_prefill(true);
  if (FLAGS_scheduling_policy == "fcfs") sched->set_policy(proto::SchedulerConfig::FCFS);
  else if (FLAGS_scheduling_policy == "priority") sched->set_policy(proto::SchedulerConfig::PRIORITY);
  else return Status::InvalidArgument("--scheduling-policy must be fcfs or priority, got '" + FLAGS_scheduling_policy + "'");
  if (FLAGS_shutdown_timeout < 0) return Status::InvalidArgument("--shutdown-timeout must not be negative");
  config->set_shutdown_timeout_s(FLAGS_shutdown_timeout);
  LLMSERVE_RETURN_IF_ERROR(ParseSpeculativeConfig(FLAGS_speculative_config, config->mutable_speculative()));
  LLMSERVE_RETURN_IF_ERROR(ParseKVEventsConfig(FLAGS_kv_events_config, config->mutable_kv_events()));
  // Parsed once here, so every engine and worker gets the same engine_id.
  LLMSERVE_ASSIGN_OR_RETURN(const common::KVTransferConfig kv_transfer,
                            common::ParseKVTransferConfig(FLAGS_kv_transfer_config));
  config->set_kv_transfer_config(kv_transfer.enabled() ? common::KVTransferConfigToJson(kv_transfer) : "");
  LLMSERVE_RETURN_IF_ERROR(LoraConfigFromFlags(name, config->mutable_lora()));
  LLMSERVE_RETURN_IF_ERROR(ResolvePoolingRunner(
      {FLAGS_runner, FLAGS_convert, FLAGS_task, FLAGS_pooler_config, FLAGS_override_pooler_config}, model_dir, model));
  if (model->has_pooler()) {
    if (kv_transfer.enabled())
      return Status::InvalidArgument("--kv-transfer-config: KV connectors serve generation, not --runner pooling");
    if (FLAGS_device == "cuda") return Status::InvalidArgument("--runner pooling runs on the CPU backend only: use --device cpu");
    parallel->set_device("cpu");
  }
  return Status::Ok();
}

}  // namespace llmserve::deploy
