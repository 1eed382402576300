#pragma once
// ModelRunner: the worker's per-step entry point. It keeps every running
// request's state (token ids, block table, sampling parameters) keyed by
// request id, applies the scheduler's per-step diff to it, lays the
// scheduled tokens out as one flattened batch, runs the model, samples, and
// reports the sampled tokens.
//
// Lifecycle (vLLM's): Create → ProfileKvCache (dummy forward at the largest
// batch, measures the activation peak, says how many KV blocks fit) →
// InitializeKvCache(num_blocks) → Execute per step.

#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/linear.h"
#include "kernels/cpu/thread_pool.h"
#include "proto/model_runner_output.h"
#include "proto/scheduler_output.h"
#include "base/status_or.h"
#include "common/ipc/communicator.h"
#include "common/kv_transfer/kv_transfer_config.h"
#include "worker/cpu_backend.h"
#include "worker/forward_backend.h"
#include "worker/kv_cache.h"
#include "worker/kv_connector/kv_connector_worker.h"
#include "worker/lora_adapter.h"
#include "worker/lora_cache.h"
#include "worker/model.h"
#include "worker/prompt_logprobs.h"
#include "worker/prompt_pooler.h"
#include "worker/sampler.h"
#include "worker/sampling_params.h"

namespace llmserve::worker {

// One adapter of --lora-modules: the name requests use and its PEFT directory.
struct LoraModule {
  std::string name;
  std::string path;
};

struct ModelRunnerConfig {
  std::string model_dir;
  std::string device = "cpu";                // cpu | cuda (the CUDA backend, when built)
  bool enforce_eager = false;                // cuda: no CUDA graphs for decode steps
  bool dummy_weights = false;                // --load-format dummy: random weights, no weight files read
  size_t tp_rank = 0;
  size_t tp_size = 1;
  // Matmul precision: kF32 matches an fp32 reference; kBF16 is faster on AMX or AVX512-BF16.
  kernels::cpu::MatmulPrecision precision = kernels::cpu::MatmulPrecision::kF32;
  std::string quantization;                  // --quantization ("" = the checkpoint's own)
  bool expert_parallel = false;              // --enable-expert-parallel (over the tp_size ranks)
  ExpertPlacement expert_placement = ExpertPlacement::kLinear;
  size_t block_size = kDefaultCpuBlockSize;  // tokens per KV block
  kernels::cpu::KvDType kv_cache_dtype = kernels::cpu::KvDType::kF32;  // kBF16: half the KV memory
  size_t num_threads = 0;                    // 0: all hardware threads
  size_t max_num_batched_tokens = 2048;      // largest step (the profile run's size)
  size_t max_num_seqs = 256;                 // most requests in a step
  size_t kv_cache_memory_bytes = 0;          // > 0: the KV cache gets exactly this much
  double memory_fraction = 0.5;              // else: this share of RAM (on cuda: GPU memory) for everything
  uint64_t process_seed = 0;                 // seed of unseeded requests; 0: random
  bool show_progress = true;                 // loading progress on a terminal
  // LoRA adapters loaded at start (--lora-modules), by request lora_name (cpu only).
  std::vector<LoraModule> lora_modules;
  LoraLimits lora_limits;
  size_t max_cpu_loras = 0;  // adapters resident at once (LoraCache); 0: no limit
  // Set: the pooling runner (--runner pooling): requests are pooled prompts,
  // nothing is sampled.
  std::optional<PoolingType> pooling;
  // --kv-transfer-config: this worker runs the worker side of the connector it names (cpu only).
  common::KVTransferConfig kv_transfer;
};

class ModelRunner {
 public:
  // Loads the model. `comm` (may be null for tp_size 1) must outlive the runner.
  static StatusOr<std::unique_ptr<ModelRunner>> Create(const ModelRunnerConfig& config,
                                                       common::ipc::Communicator* comm = nullptr);
  ModelRunner(const ModelRunner&) = delete;
  ModelRunner& operator=(const ModelRunner&) = delete;

  // Runs a dummy forward of max_num_batched_tokens tokens over max_num_seqs
  // requests, then fits KV blocks into the budget (kv_cache_memory_bytes, or
  // memory_fraction × RAM minus weights and the activation peak).
  StatusOr<KvCacheBudget> ProfileKvCache();
  // Allocates the KV cache. Must precede Execute.
  Status InitializeKvCache(size_t num_blocks);

  // One engine step: applies the diff, runs the scheduled tokens, samples
  // where a request's chunk reaches its last known token. On failure the
  // output's `error` says why; a diff naming unknown requests or malformed
  // lists is rejected before any state changes.
  proto::ModelRunnerOutput Execute(const proto::SchedulerOutput& step);

  // Number of requests whose state is held.
  size_t num_requests() const { return requests_.size(); }
  // The CPU model (device cpu only).
  Model& model() { return cpu_->model(); }
  kernels::cpu::ThreadPool& pool() { return *pool_; }
  const ModelRunnerConfig& config() const { return config_; }

  // Run-time LoRA adapters (vLLM's add_lora / remove_lora), between steps:
  // Add reads the adapter now (errors name what is wrong); Remove stops new
  // requests from using it, and requests that hold it keep it to their end.
  Status AddLora(const std::string& name, const std::string& dir);
  Status RemoveLora(const std::string& name);
  // The adapters resident in memory now (at most max_cpu_loras while none is held beyond it).
  std::vector<std::string> ResidentLoras() const;

 private:
  struct RequestState {
    std::vector<int32_t> prompt_tokens;
    std::vector<int32_t> output_tokens;
    SamplingParams params;
    uint64_t seed = 0;
    std::vector<int32_t> block_ids;
    int32_t num_computed_tokens = 0;
    int32_t lora_slot = -1;  // its LoRA adapter in the model, or -1
    // Set from admission until its prefill ends when it asked for prompt_logprobs.
    std::optional<PromptLogprobsCollector> prompt_logprobs;
    // Set for a pooling request (the pooling runner).
    std::optional<PromptPooler> pooler;
    size_t num_tokens() const { return prompt_tokens.size() + output_tokens.size(); }
    int32_t token(size_t i) const {
      return i < prompt_tokens.size() ? prompt_tokens[i] : output_tokens[i - prompt_tokens.size()];
    }
  };

  // The prompt positions one request's chunk computes logits for (prompt_logprobs).
  struct PromptLogprobsChunk {
    std::string id;
    size_t first_row = 0;    // prompt position of the first row (it scores prompt token first_row + 1)
    size_t num_rows = 0;
    size_t first_token = 0;  // the batch index of that position's token
  };

  ModelRunner() = default;
  // Checks that the diff can be applied (known ids, consistent lengths).
  Status ValidateDiff(const proto::SchedulerOutput& step) const;
  // The adapter slot of each new request that names one (read again from
  // its directory if evicted); on failure nothing is held.
  StatusOr<std::map<std::string, int32_t>> AcquireLoras(const proto::SchedulerOutput& step);
  // Applies a validated diff to requests_; `lora_slots` from AcquireLoras.
  void ApplyDiff(const proto::SchedulerOutput& step, const std::map<std::string, int32_t>& lora_slots);
  // Drops request `id`'s state and its adapter hold.
  void EraseRequest(const std::string& id);
  StatusOr<proto::ModelRunnerOutput> Run(const proto::SchedulerOutput& step);
  // Run's pooling-runner half (model_runner_pooling.cc), on an applied diff:
  // forwards the prompt chunks and pools their hidden states; a request
  // whose prefill ends gets its vector in pooler_output.
  StatusOr<proto::ModelRunnerOutput> RunPooling(const proto::SchedulerOutput& step);
  // Runs the batch and samples its sampled rows (`ids[r]` samples where
  // samples[r]; with drafts[r] non-null it verifies them with the rejection
  // sampler): on the device where the backend can, else on the host. One
  // list of emitted tokens per sampling request. Logits rows past the sampled
  // ones (prompt logprobs) are left at *extra_logits, back to back.
  StatusOr<std::vector<std::vector<SampledToken>>> SampleStep(const proto::SchedulerOutput& step,
                                                              const ForwardBatch& batch,
                                                              const std::vector<std::string>& ids,
                                                              const std::vector<bool>& samples,
                                                              const std::vector<const std::vector<int32_t>*>& drafts,
                                                              int32_t* num_nans, const float** extra_logits);
  // Scores the prompt chunks' rows (their logits back to back at `logits`)
  // and moves the rows of requests whose prefill `finishing` ends to `out`.
  void CollectPromptLogprobs(const std::vector<PromptLogprobsChunk>& chunks, const float* logits,
                             const std::vector<std::string>& finishing, proto::ModelRunnerOutput* out);
  // Appends request `id`'s emitted tokens to its state and to `out`.
  void Emit(const std::string& id, const std::vector<SampledToken>& tokens, proto::ModelRunnerOutput* out);

  ModelRunnerConfig config_;
  std::unique_ptr<kernels::cpu::ThreadPool> pool_;
  std::unique_ptr<ForwardBackend> backend_;
  CpuBackend* cpu_ = nullptr;  // backend_, when it runs on the CPU
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<LoraCache> loras_;  // cpu only
  std::unique_ptr<KVConnectorWorker> kv_connector_;  // with --kv-transfer-config (cpu only)
  std::map<std::string, RequestState> requests_;
};

// The matmul precision for a --dtype value: "bfloat16" gives kBF16, "auto"
// follows the checkpoint's torch_dtype as vLLM does (a bf16 checkpoint or a
// `quantized` model computes in bf16, its quantized weights with integer
// kernels); anything else (float32, float16, an fp32 or fp16 checkpoint under
// auto) computes with fp32 activations: for a quantized model, over the
// exactly dequantized weights.
kernels::cpu::MatmulPrecision PrecisionForDtype(const std::string& dtype, const std::string& torch_dtype,
                                                bool quantized);

// The device a --device value names: "auto" (or empty) is cuda where
// CudaBackendAvailable() and the CUDA backend runs the configuration (dtype
// auto or bfloat16, tensor-parallel size 1), else cpu.
StatusOr<std::string> ResolveDevice(const std::string& device, const std::string& dtype, size_t tp_size);

// The KV cache element type for --kv-cache-dtype ("auto" or empty: bf16 when
// the matmuls compute in bf16, fp32 otherwise; fp8 is fp8_e4m3, as vLLM's).
kernels::cpu::KvDType KvDTypeFor(const std::string& kv_cache_dtype, kernels::cpu::MatmulPrecision precision);

// Converts the wire's sampling parameters to the sampler's.
SamplingParams FromProto(const proto::SamplingParams& p);

// What a device sampler needs of `row`, and whether it may take the row.
DeviceSampling DeviceSamplingFor(const SamplerRow& row);

}  // namespace llmserve::worker
