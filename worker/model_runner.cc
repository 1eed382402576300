#include "worker/model_runner.h"

#include <glog/logging.h>

#include <algorithm>
#include <deque>
#include <set>
#include <span>

#include "worker/cuda_backend.h"
#include "worker/kv_connector/kv_connector_step.h"
#include "worker/kv_connector/kv_connector_worker_factory.h"
#include "worker/rejection_sampler.h"
#include "worker/sampler_exp.h"

namespace llmserve::worker {

SamplingParams FromProto(const proto::SamplingParams& p) {
  SamplingParams s;
  s.temperature = static_cast<float>(p.temperature);
  s.top_k = p.top_k;
  s.top_p = static_cast<float>(p.top_p);
  s.min_p = static_cast<float>(p.min_p);
  if (p.seed.has_value()) s.seed = static_cast<uint64_t>(*p.seed);
  s.repetition_penalty = static_cast<float>(p.repetition_penalty);
  s.presence_penalty = static_cast<float>(p.presence_penalty);
  s.frequency_penalty = static_cast<float>(p.frequency_penalty);
  for (const auto& [t, b] : p.logit_bias) s.logit_bias.emplace_back(t, static_cast<float>(b));
  s.allowed_token_ids = p.allowed_token_ids;
  s.logprobs = p.logprobs.has_value() ? *p.logprobs : -1;
  s.min_tokens = p.min_tokens;
  s.stop_token_ids = p.all_stop_token_ids;
  for (int32_t t : p.stop_token_ids) s.stop_token_ids.push_back(t);
  return s;
}

DeviceSampling DeviceSamplingFor(const SamplerRow& row) {
  const SamplingParams& sp = *row.params;
  DeviceSampling d;
  d.on_device = row.grammar_mask == nullptr && !Sampler::ProcessesLogits(row) && sp.logprobs < 0;
  d.temperature = sp.temperature;
  d.top_k = sp.top_k;
  d.top_p = sp.top_p;
  d.min_p = sp.min_p;
  d.uniform = Sampler::Uniform(row.seed, row.output_position);
  return d;
}

kernels::cpu::MatmulPrecision PrecisionForDtype(const std::string& dtype, const std::string& torch_dtype,
                                                bool quantized) {
  // A quantized model's auto (a GGUF's too) is bf16: its quantized weights
  // take the integer kernels, the others bf16.
  const bool bf16 = dtype == "bfloat16" || (dtype == "auto" && (torch_dtype == "bfloat16" || quantized));
  return bf16 ? kernels::cpu::MatmulPrecision::kBF16 : kernels::cpu::MatmulPrecision::kF32;
}

kernels::cpu::KvDType KvDTypeFor(const std::string& kv_cache_dtype, kernels::cpu::MatmulPrecision precision) {
  if (kv_cache_dtype == "bfloat16") return kernels::cpu::KvDType::kBF16;
  if (kv_cache_dtype == "float32") return kernels::cpu::KvDType::kF32;
  if (kv_cache_dtype == "fp8" || kv_cache_dtype == "fp8_e4m3") return kernels::cpu::KvDType::kFp8E4M3;
  if (kv_cache_dtype == "fp8_e5m2") return kernels::cpu::KvDType::kFp8E5M2;
  // auto: the bf16 attention products round K and V to bf16 anyway, so a bf16
  // cache loses nothing there and halves the memory per block.
  return precision == kernels::cpu::MatmulPrecision::kBF16 ? kernels::cpu::KvDType::kBF16
                                                           : kernels::cpu::KvDType::kF32;
}

StatusOr<std::string> ResolveDevice(const std::string& device, const std::string& dtype, size_t tp_size) {
  if (device == "cpu") return std::string("cpu");
  if (device == "cuda") return std::string("cuda");
  if (!device.empty() && device != "auto")
    return Status::InvalidArgument("--device must be auto, cpu or cuda, got '" + device + "'");
  if (!CudaBackendAvailable()) return std::string("cpu");
  // auto takes the GPU only for what its backend runs in bf16 and has been
  // run at on a GPU (one rank; tensor parallelism needs --device cuda).
  const bool bf16 = dtype.empty() || dtype == "auto" || dtype == "bfloat16";
  if (bf16 && tp_size == 1) return std::string("cuda");
  LOG(WARNING) << "--device auto takes the GPU for bfloat16 at tensor-parallel size 1; --dtype " << dtype
               << " at tensor-parallel size " << tp_size
               << " runs on the CPU (pass --device cuda for tensor parallelism over NCCL, one GPU per rank)";
  return std::string("cpu");
}

namespace {

// What the CUDA backend does not run yet: mixture-of-experts models and
// quantized safetensors checkpoints (GGUF files are refused by the backend).
Status RefuseOnCuda(const ModelRunnerConfig& config) {
  LLMSERVE_ASSIGN_OR_RETURN(ModelConfig c, LoadModelConfig(config.model_dir));
  if (c.has_moe()) {
    return Status::Unimplemented(std::string("--device cuda: ") + ArchitectureName(c.architecture) +
                                 " (mixture of experts) runs on the CPU backend only for now; pass --device cpu");
  }
  LLMSERVE_ASSIGN_OR_RETURN(Quantization q, ResolveQuantization(config.quantization, c.quantization));
  if (q == Quantization::kCompressedTensorsInt8 || q == Quantization::kCompressedTensorsWna16 ||
      q == Quantization::kCompressedTensorsFp8 || q == Quantization::kInt8AtLoad) {
    return Status::Unimplemented(std::string("--device cuda: ") + QuantizationName(q) +
                                 " quantization runs on the CPU backend only for now; pass --device cpu");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<ModelRunner>> ModelRunner::Create(const ModelRunnerConfig& config, common::ipc::Communicator* comm) {
  if (config.block_size == 0) return Status::InvalidArgument("block_size must be positive");
  if (config.max_num_batched_tokens == 0 || config.max_num_seqs == 0) {
    return Status::InvalidArgument("max_num_batched_tokens and max_num_seqs must be positive");
  }
  if (config.pooling && config.kv_transfer.enabled())
    return Status::InvalidArgument("KV connectors (--kv-transfer-config) serve generation, not the pooling runner");
  std::unique_ptr<ModelRunner> r(new ModelRunner());
  r->config_ = config;
  r->pool_ = std::make_unique<kernels::cpu::ThreadPool>(config.num_threads);
  if (config.device == "cuda") {
    if (config.kv_transfer.enabled()) {
      return Status::Unimplemented("KV connectors (--kv-transfer-config) run on the CPU backend only so far: use "
                                   "--device cpu");
    }
    if (!config.lora_modules.empty()) {
      return Status::Unimplemented("LoRA adapters run on the CPU backend only so far: use --device cpu");
    }
    LLMSERVE_RETURN_IF_ERROR(RefuseOnCuda(config));
    LLMSERVE_ASSIGN_OR_RETURN(r->backend_, CreateCudaBackend(config, comm));
  } else if (config.device == "cpu") {
    if (config.dummy_weights) {
      return Status::Unimplemented(
          "--load-format dummy (random weights) runs on --device cuda only so far; on the CPU, write a random-weight "
          "checkpoint with `llmserve make-model` instead");
    }
    LoadOptions opts;
    opts.tp_rank = config.tp_rank;
    opts.tp_size = config.tp_size;
    opts.precision = config.precision;
    opts.quantization = config.quantization;
    opts.expert_parallel = config.expert_parallel;
    opts.expert_placement = config.expert_placement;
    opts.show_progress = config.show_progress;
    LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, Model::Load(config.model_dir, opts, comm, r->pool_.get()));
    r->loras_ = std::make_unique<LoraCache>(model.get(), config.lora_limits, config.max_cpu_loras);
    for (const auto& m : config.lora_modules) {
      Status added = r->loras_->Add(m.name, m.path);
      if (!added.ok()) return Status(added.code(), "LoRA adapter '" + m.name + "': " + added.message());
    }
    CpuBackendOptions cpu;
    cpu.block_size = config.block_size;
    cpu.kv_cache_dtype = config.kv_cache_dtype;
    cpu.kv_cache_memory_bytes = config.kv_cache_memory_bytes;
    cpu.memory_fraction = config.memory_fraction;
    auto backend = std::make_unique<CpuBackend>(std::move(model), cpu, r->pool_.get());
    r->cpu_ = backend.get();
    r->backend_ = std::move(backend);
    LLMSERVE_ASSIGN_OR_RETURN(r->kv_connector_,
                              CreateKVConnectorWorker(config.kv_transfer, config.tp_rank, config.tp_size));
    r->cpu_->model().set_kv_layer_hooks(r->kv_connector_.get());
  } else {
    return Status::InvalidArgument("unknown device '" + config.device + "' (cpu or cuda)");
  }
  r->sampler_ = std::make_unique<Sampler>(config.process_seed != 0 ? config.process_seed : RandomProcessSeed());
  return r;
}

Status ModelRunner::AddLora(const std::string& name, const std::string& dir) {
  if (loras_ == nullptr)
    return Status::Unimplemented("LoRA adapters run on the CPU backend only so far: use --device cpu");
  return loras_->Add(name, dir);
}

Status ModelRunner::RemoveLora(const std::string& name) {
  if (loras_ == nullptr) return Status::NotFound("no LoRA adapter named '" + name + "' is loaded");
  return loras_->Remove(name);
}

std::vector<std::string> ModelRunner::ResidentLoras() const {
  return loras_ ? loras_->Resident() : std::vector<std::string>();
}

StatusOr<KvCacheBudget> ModelRunner::ProfileKvCache() {
  // Dummy batch: max_num_batched_tokens tokens over up to max_num_seqs
  // requests, logits for each request. Every block table points at one
  // zeroed block and no K/V is written, so the run needs no real cache.
  const size_t tokens = config_.max_num_batched_tokens;
  const size_t reqs = std::min(config_.max_num_seqs, tokens);
  ForwardBatch b;
  b.query_start.push_back(0);
  size_t max_len = 0;
  for (size_t r = 0; r < reqs; ++r) {
    const size_t n = tokens / reqs + (r < tokens % reqs ? 1 : 0);
    max_len = std::max(max_len, n);
    for (size_t i = 0; i < n; ++i) {
      b.token_ids.push_back(static_cast<int32_t>((r * 31 + i) % backend_->config().vocab_size));
      b.positions.push_back(static_cast<int32_t>(i));
      b.slot_mapping.push_back(-1);
    }
    b.query_start.push_back(static_cast<int32_t>(b.token_ids.size()));
    b.context_lens.push_back(static_cast<int32_t>(n));
    b.logits_indices.push_back(static_cast<int32_t>(b.token_ids.size()) - 1);
  }
  b.block_table_stride = (max_len + config_.block_size - 1) / config_.block_size;
  b.block_tables.assign(reqs * b.block_table_stride, 0);
  LLMSERVE_ASSIGN_OR_RETURN(KvCacheBudget budget, backend_->ProfileKvCache(b));
  if (budget.num_blocks == 0) {
    return Status::ResourceExhausted("no KV cache block fits: budget " + std::to_string(budget.budget_bytes) +
                                     " bytes, one block needs " + std::to_string(budget.bytes_per_block));
  }
  return budget;
}

Status ModelRunner::InitializeKvCache(size_t num_blocks) {
  if (num_blocks == 0) return Status::InvalidArgument("the KV cache needs at least one block");
  LLMSERVE_RETURN_IF_ERROR(backend_->InitializeKvCache(num_blocks));
  if (kv_connector_ != nullptr) return kv_connector_->RegisterKvCaches(cpu_->kv_cache());
  return Status::Ok();
}

Status ModelRunner::ValidateDiff(const proto::SchedulerOutput& step) const {
  std::set<std::string> known;
  for (const auto& [id, st] : requests_) known.insert(id);
  for (const auto& id : step.finished_req_ids) known.erase(id);
  for (const auto& nr : step.scheduled_new_reqs) {
    if (nr.num_computed_tokens < 0 || static_cast<size_t>(nr.num_computed_tokens) > nr.prompt_token_ids.size()) {
      return Status::InvalidArgument("request " + nr.req_id + ": num_computed_tokens outside its prompt");
    }
    if (nr.lora_name.has_value() && !nr.lora_name->empty() && (loras_ == nullptr || !loras_->Registered(*nr.lora_name))) {
      return Status::InvalidArgument("request " + nr.req_id + ": no LoRA adapter named '" + *nr.lora_name +
                                     "' is loaded");
    }
    if (nr.pooling_params.has_value() != config_.pooling.has_value()) {
      return Status::InvalidArgument("request " + nr.req_id +
                                     (config_.pooling ? ": this worker runs the pooling runner; the request does not pool"
                                                      : ": pooling_params need the pooling runner (--runner pooling)"));
    }
    // MEAN and CLS read the prompt from its first position: no prefix-cache hits.
    if (config_.pooling && *config_.pooling != PoolingType::kLast && nr.num_computed_tokens > 0)
      return Status::InvalidArgument("request " + nr.req_id + ": MEAN / CLS pooling needs the whole prompt computed");
    known.insert(nr.req_id);
  }
  const auto& c = step.scheduled_cached_reqs;
  const size_t n = c.req_ids.size();
  if (c.num_computed_tokens.size() != n || c.new_block_ids.size() != n ||
      (!c.new_token_ids.empty() && c.new_token_ids.size() != n)) {
    return Status::InvalidArgument("scheduled_cached_reqs: parallel lists differ in length");
  }
  for (const auto& id : c.req_ids) {
    if (!known.count(id)) return Status::InvalidArgument("cached request " + id + " is unknown to the worker");
  }
  for (const auto& [id, count] : step.num_scheduled_tokens) {
    if (!known.count(id)) return Status::InvalidArgument("scheduled request " + id + " is unknown to the worker");
    if (count <= 0) return Status::InvalidArgument("request " + id + ": non-positive num_scheduled_tokens");
  }
  for (const auto& [id, drafts] : step.scheduled_spec_decode_tokens) {
    auto it = step.num_scheduled_tokens.find(id);
    if (it == step.num_scheduled_tokens.end() || static_cast<size_t>(it->second) <= drafts.size())
      return Status::InvalidArgument("request " + id + ": its drafts need its last token scheduled before them");
  }
  if (!step.scheduled_spec_decode_tokens.empty() && backend_->samples_on_device())
    return Status::Unimplemented("speculative decoding is not supported by the " + config_.device + " backend yet");
  return Status::Ok();
}

StatusOr<std::map<std::string, int32_t>> ModelRunner::AcquireLoras(const proto::SchedulerOutput& step) {
  std::map<std::string, int32_t> slots;
  for (const auto& nr : step.scheduled_new_reqs) {
    if (!nr.lora_name.has_value() || nr.lora_name->empty()) continue;
    auto slot = loras_->Acquire(*nr.lora_name);
    if (!slot.ok()) {
      for (const auto& [id, held] : slots) loras_->Release(held);
      return slot.status().WithContext("request " + nr.req_id);
    }
    if (auto [it, fresh] = slots.emplace(nr.req_id, *slot); !fresh) {
      loras_->Release(it->second);  // the same id twice in one diff: the last one counts
      it->second = *slot;
    }
  }
  return slots;
}

void ModelRunner::EraseRequest(const std::string& id) {
  auto it = requests_.find(id);
  if (it == requests_.end()) return;
  if (loras_) loras_->Release(it->second.lora_slot);
  requests_.erase(it);
}

void ModelRunner::ApplyDiff(const proto::SchedulerOutput& step, const std::map<std::string, int32_t>& lora_slots) {
  for (const auto& id : step.finished_req_ids) EraseRequest(id);
  for (const auto& nr : step.scheduled_new_reqs) {
    RequestState st;
    st.prompt_tokens = nr.prompt_token_ids;
    st.params = FromProto(nr.sampling_params);
    st.seed = sampler_->EffectiveSeed(st.params, nr.req_id);
    if (!nr.block_ids.empty()) st.block_ids = nr.block_ids[0];
    st.num_computed_tokens = nr.num_computed_tokens;
    if (auto slot = lora_slots.find(nr.req_id); slot != lora_slots.end()) st.lora_slot = slot->second;
    if (nr.sampling_params.prompt_logprobs && *nr.sampling_params.prompt_logprobs >= 0)
      st.prompt_logprobs.emplace(*nr.sampling_params.prompt_logprobs, st.prompt_tokens.size());
    if (nr.pooling_params && config_.pooling)
      st.pooler.emplace(*config_.pooling, backend_->config().hidden_size, st.prompt_tokens.size());
    EraseRequest(nr.req_id);
    requests_[nr.req_id] = std::move(st);
  }
  const auto& c = step.scheduled_cached_reqs;
  std::set<std::string> resumed(c.resumed_req_ids.begin(), c.resumed_req_ids.end());
  for (size_t i = 0; i < c.req_ids.size(); ++i) {
    RequestState& st = requests_[c.req_ids[i]];
    st.num_computed_tokens = c.num_computed_tokens[i];
    if (auto it = c.all_token_ids.find(c.req_ids[i]); it != c.all_token_ids.end()) {
      const auto& all = it->second;
      const size_t np = std::min(st.prompt_tokens.size(), all.size());
      st.output_tokens.assign(all.begin() + static_cast<std::ptrdiff_t>(np), all.end());
    }
    if (!c.new_token_ids.empty() && !c.new_token_ids[i].empty()) {
      // Tokens the workers could not know (pipeline parallel): the request's
      // tokens end at num_computed + these; append the ones not held yet.
      const auto& fresh = c.new_token_ids[i];
      const size_t have = st.num_tokens(), computed = static_cast<size_t>(st.num_computed_tokens);
      const size_t want = computed + fresh.size();
      if (have >= computed) {
        for (size_t k = have; k < want; ++k) st.output_tokens.push_back(fresh[fresh.size() - (want - k)]);
      }
    }
    // The scheduler may have dropped the token sampled last step (a KV
    // connector's load failed under it): it is the authority on the count.
    if (i < c.num_output_tokens.size() && c.num_output_tokens[i] >= 0 &&
        st.output_tokens.size() > static_cast<size_t>(c.num_output_tokens[i]))
      st.output_tokens.resize(static_cast<size_t>(c.num_output_tokens[i]));
    const auto& nb = c.new_block_ids[i];
    if (resumed.count(c.req_ids[i])) st.block_ids.clear();
    if (nb.has_value() && !nb->empty()) st.block_ids.insert(st.block_ids.end(), (*nb)[0].begin(), (*nb)[0].end());
  }
}

StatusOr<proto::ModelRunnerOutput> ModelRunner::Run(const proto::SchedulerOutput& step) {
  if (!backend_->kv_cache_ready()) return Status::Unavailable("the KV cache is not initialized");
  LLMSERVE_RETURN_IF_ERROR(ValidateDiff(step));
  LLMSERVE_ASSIGN_OR_RETURN(auto lora_slots, AcquireLoras(step));
  // Lengths are checked against the state the diff produces before anything changes.
  ApplyDiff(step, lora_slots);
  if (config_.pooling) return RunPooling(step);
  if (kv_connector_ != nullptr) LLMSERVE_RETURN_IF_ERROR(BeginKVConnectorStep(*kv_connector_, step));
  ForwardBatch batch;
  std::vector<std::string> ids;
  std::vector<bool> samples;
  std::vector<const std::vector<int32_t>*> drafts;
  std::vector<PromptLogprobsChunk> prompt_chunks;
  std::vector<std::string> prompt_finishing;
  const size_t bs = config_.block_size;
  for (const auto& [id, count] : step.num_scheduled_tokens) {
    RequestState& st = requests_[id];
    auto d = step.scheduled_spec_decode_tokens.find(id);
    const std::vector<int32_t>* draft = d == step.scheduled_spec_decode_tokens.end() ? nullptr : &d->second;
    const size_t num_drafts = draft != nullptr ? draft->size() : 0, known = st.num_tokens() + num_drafts;
    const size_t start = static_cast<size_t>(st.num_computed_tokens), n = static_cast<size_t>(count);
    if (start + n > known || (num_drafts > 0 && start + n != known)) {
      return Status::InvalidArgument("request " + id + ": scheduled tokens [" + std::to_string(start) + ", " +
                                     std::to_string(start + n) + ") do not end at its " + std::to_string(known) +
                                     " known tokens and drafts");
    }
    if ((start + n + bs - 1) / bs > st.block_ids.size()) {
      return Status::InvalidArgument("request " + id + ": its block table has " + std::to_string(st.block_ids.size()) +
                                     " blocks, too few for " + std::to_string(start + n) + " tokens");
    }
    std::vector<int32_t> chunk(n);
    const size_t real = st.num_tokens();
    for (size_t i = 0; i < n; ++i) chunk[i] = start + i < real ? st.token(start + i) : (*draft)[start + i - real];
    const bool sample = start + n == known;
    if (st.prompt_logprobs) {
      const size_t rows = PromptLogprobRows(st.prompt_tokens.size(), start, n);
      if (rows > 0) prompt_chunks.push_back({id, start, rows, batch.num_tokens()});
      if (FinishesPrompt(st.prompt_tokens.size(), start, n)) prompt_finishing.push_back(id);
    }
    // A verifying request needs the logits of its last real token and of each draft.
    batch.AddRequest(chunk, static_cast<int32_t>(start), st.block_ids, bs, sample && num_drafts == 0, st.lora_slot);
    if (sample && num_drafts > 0) batch.AddLogitsRows(num_drafts + 1);
    ids.push_back(id);
    samples.push_back(sample);
    drafts.push_back(num_drafts > 0 ? draft : nullptr);
  }
  // Prompt rows go after every sampled row: the sampler's rows keep their
  // order, and only batches holding such a request pay for them.
  for (const PromptLogprobsChunk& c : prompt_chunks)
    for (size_t i = 0; i < c.num_rows; ++i) batch.logits_indices.push_back(static_cast<int32_t>(c.first_token + i));
  batch.FinishBlockTables();
  proto::ModelRunnerOutput out;
  if (batch.num_tokens() == 0) {
    if (kv_connector_ != nullptr) FinishKVConnectorStep(*kv_connector_, step, &out);
    return out;
  }
  const float* prompt_logits = nullptr;
  LLMSERVE_ASSIGN_OR_RETURN(std::vector<std::vector<SampledToken>> sampled,
                            SampleStep(step, batch, ids, samples, drafts, &out.num_nans_in_logits, &prompt_logits));
  CollectPromptLogprobs(prompt_chunks, prompt_logits, prompt_finishing, &out);
  for (size_t r = 0, si = 0; r < ids.size(); ++r) {
    if (samples[r]) {
      Emit(ids[r], sampled[si++], &out);
    } else {
      out.req_ids.push_back(ids[r]);
      out.sampled_token_ids.emplace_back();
      out.logprobs.emplace_back();
    }
  }
  if (kv_connector_ != nullptr) FinishKVConnectorStep(*kv_connector_, step, &out);
  return out;
}

void ModelRunner::CollectPromptLogprobs(const std::vector<PromptLogprobsChunk>& chunks, const float* logits,
                                        const std::vector<std::string>& finishing, proto::ModelRunnerOutput* out) {
  const size_t vocab = backend_->config().vocab_size;
  for (const PromptLogprobsChunk& c : chunks) {
    RequestState& st = requests_[c.id];
    const std::span<const int32_t> targets(st.prompt_tokens.data() + c.first_row + 1, c.num_rows);
    st.prompt_logprobs->Fill(logits, vocab, c.first_row, targets, *pool_);
    logits += c.num_rows * vocab;
  }
  for (const std::string& id : finishing) {
    RequestState& st = requests_[id];
    out->prompt_logprobs[id] = st.prompt_logprobs->Take();
    st.prompt_logprobs.reset();  // a recompute after preemption does not send them again
  }
}

void ModelRunner::Emit(const std::string& id, const std::vector<SampledToken>& tokens,
                       proto::ModelRunnerOutput* out) {
  RequestState& st = requests_[id];
  out->req_ids.push_back(id);
  std::vector<int32_t>& ids = out->sampled_token_ids.emplace_back();
  for (const SampledToken& s : tokens) {
    st.output_tokens.push_back(s.token);
    ids.push_back(s.token);
  }
  if (st.params.logprobs < 0) {
    out->logprobs.emplace_back();
    return;
  }
  proto::Logprobs& lp = out->logprobs.emplace_back().emplace();
  for (const SampledToken& s : tokens) {
    std::vector<int32_t> toks = {s.token};
    std::vector<float> vals = {s.logprob};
    for (const auto& [t, v] : s.top) {
      toks.push_back(t);
      vals.push_back(v);
    }
    lp.token_ids.push_back(std::move(toks));
    lp.logprobs.push_back(std::move(vals));
    lp.sampled_token_ranks.push_back(s.rank);
  }
}

StatusOr<std::vector<std::vector<SampledToken>>> ModelRunner::SampleStep(
    const proto::SchedulerOutput& step, const ForwardBatch& batch, const std::vector<std::string>& ids,
    const std::vector<bool>& samples, const std::vector<const std::vector<int32_t>*>& drafts, int32_t* num_nans,
    const float** extra_logits) {
  // The sampled rows, in logits order (a verifying request has one per draft
  // plus one); their logits are known after the forward pass.
  std::vector<SamplerRow> rows;
  std::vector<size_t> first_row;  // per sampling request
  std::vector<const std::vector<int32_t>*> request_drafts;
  std::deque<std::vector<int32_t>> outputs_with_drafts;  // row j's output tokens (penalties see the drafts)
  for (size_t r = 0; r < ids.size(); ++r) {
    if (!samples[r]) continue;
    const RequestState& st = requests_[ids[r]];
    first_row.push_back(rows.size());
    request_drafts.push_back(drafts[r]);
    rows.push_back({nullptr, &st.params, &st.prompt_tokens, &st.output_tokens, st.seed, st.output_tokens.size()});
    if (auto g = step.structured_output_request_ids.find(ids[r]); g != step.structured_output_request_ids.end()) {
      // Rows are validated by the SchedulerOutput decoder: equal widths, indices in range.
      const size_t width = step.grammar_bitmask.words.size() / step.structured_output_request_ids.size();
      rows.back().grammar_mask = step.grammar_bitmask.words.data() + static_cast<size_t>(g->second) * width;
      rows.back().grammar_mask_words = width;
    }
    for (size_t j = 1; drafts[r] != nullptr && j <= drafts[r]->size(); ++j) {
      std::vector<int32_t>& out = outputs_with_drafts.emplace_back(st.output_tokens);
      out.insert(out.end(), drafts[r]->begin(), drafts[r]->begin() + static_cast<std::ptrdiff_t>(j));
      rows.push_back({nullptr, &st.params, &st.prompt_tokens, &out, st.seed, st.output_tokens.size() + j});
    }
  }
  std::vector<DeviceSampling> sampling;
  if (backend_->samples_on_device()) {
    for (const SamplerRow& row : rows) sampling.push_back(DeviceSamplingFor(row));
    sampling.resize(batch.logits_indices.size());  // the extra rows come back as logits
  }
  LLMSERVE_ASSIGN_OR_RETURN(ForwardOutput fwd, backend_->Forward(batch, sampling));
  const size_t vocab = backend_->config().vocab_size;
  std::vector<int32_t> device_token(rows.size(), -1);
  size_t host_rows = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!fwd.sampled.empty() && fwd.sampled[i] >= 0) {
      device_token[i] = fwd.sampled[i];
      continue;
    }
    rows[i].logits = fwd.logits + host_rows++ * vocab;
  }
  *extra_logits = fwd.logits + host_rows * vocab;
  {
    // Row by row on the pool: at 256 rows of a 152k vocabulary this scan reads 156 MB.
    std::vector<size_t> nans(pool_->size(), 0);
    pool_->ParallelFor(host_rows, 1, [&](size_t begin, size_t end, size_t thread) {
      nans[thread] += CountNans(fwd.logits + begin * vocab, (end - begin) * vocab);
    });
    size_t total = static_cast<size_t>(fwd.device_nans);
    for (size_t n : nans) total += n;
    *num_nans = static_cast<int32_t>(total);
  }
  // Requests sample in parallel; each one's tokens depend on its rows alone.
  std::vector<std::vector<SampledToken>> sampled(first_row.size());
  pool_->ParallelFor(first_row.size(), 1, [&](size_t begin, size_t end, size_t) {
    for (size_t q = begin; q < end; ++q) {
      const size_t i = first_row[q];
      if (request_drafts[q] != nullptr) {
        sampled[q] = RejectionSample(std::span<const SamplerRow>(rows).subspan(i, request_drafts[q]->size() + 1),
                                     *request_drafts[q], vocab);
      } else if (device_token[i] >= 0) {
        sampled[q].emplace_back().token = device_token[i];
      } else {
        sampled[q].push_back(Sampler::SampleRow(rows[i], vocab));
      }
    }
  });
  return sampled;
}

proto::ModelRunnerOutput ModelRunner::Execute(const proto::SchedulerOutput& step) {
  auto result = Run(step);
  if (result.ok()) return std::move(result).value();
  LOG(ERROR) << "model runner step failed: " << result.status().ToString();
  proto::ModelRunnerOutput out;
  out.error = result.status().ToString();
  return out;
}

}  // namespace llmserve::worker
