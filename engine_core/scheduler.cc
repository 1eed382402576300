// Scheduler, part 1: requests in and out, and each step's decision (running
// requests first, then waiting ones; preemption). The decision becomes the
// workers' diff in scheduler_build_output.cc; the step's results are applied
// in scheduler_update.cc. See scheduler.h.
#include "engine_core/scheduler.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include <glog/logging.h>

namespace llmserve::engine_core {

StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const SchedulerConfig& config,
                                                       const KVCacheConfig& kv_config) {
  LLMSERVE_RETURN_IF_ERROR(config.Validate());
  if (kv_config.block_size <= 0) return Status::InvalidArgument("block_size must be > 0");
  if (kv_config.max_model_len != config.max_model_len) {
    return Status::InvalidArgument("KV cache and scheduler disagree on max_model_len");
  }
  const int64_t needed = (int64_t{config.max_model_len} + kv_config.block_size - 1) / kv_config.block_size;
  if (kv_config.num_blocks - 1 < needed) {
    return Status::InvalidArgument(
        "the KV cache has " + std::to_string(kv_config.num_blocks - 1) + " blocks of " +
        std::to_string(kv_config.block_size) + " tokens, fewer than the " + std::to_string(needed) +
        " one request of max_model_len " + std::to_string(config.max_model_len) +
        " needs; lower max_model_len or give the KV cache more memory");
  }
  return std::unique_ptr<Scheduler>(new Scheduler(config, kv_config));
}

Scheduler::Scheduler(const SchedulerConfig& config, const KVCacheConfig& kv_config)
    : config_(config), kv_(kv_config), waiting_(config.policy, &requests_) {
  decision_.reserve(static_cast<size_t>(config.max_num_seqs));
  running_.reserve(static_cast<size_t>(config.max_num_seqs));
  if (config.num_speculative_tokens > 0 && config.suffix_decoding) {
    suffix_ = std::make_unique<SuffixProposer>(config.suffix);
  }
}

double Scheduler::Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Scheduler::RecordEvent(Request& r, RequestEventType type) {
  if (config_.log_stats) r.events.push_back(RequestEvent{type, Now()});
}

const Request* Scheduler::FindRequest(std::string_view request_id) const {
  auto it = id_to_handle_.find(std::string(request_id));
  return it == id_to_handle_.end() ? nullptr : requests_[it->second].get();
}

bool Scheduler::UsesLora(std::string_view lora_name) const {
  for (const auto& r : requests_)
    if (r != nullptr && !r->is_finished() && r->lora_name == lora_name) return true;
  return false;
}

Status Scheduler::AddRequest(proto::EngineCoreRequest request) {
  if (config_.max_waiting_requests > 0 && waiting_.size() >= config_.max_waiting_requests) {
    return Status::ResourceExhausted("the engine's waiting queue is full (" +
                                     std::to_string(config_.max_waiting_requests) +
                                     " requests); retry later");
  }
  if (id_to_handle_.count(request.request_id) != 0 || held_blocks_.count(request.request_id) != 0) {
    return Status::InvalidArgument("request id '" + request.request_id + "' is already in use");
  }
  if (request.pooling_params.has_value() != config_.pooling_runner) {
    return Status::InvalidArgument(config_.pooling_runner
                                       ? "this engine runs a pooling model (--runner pooling): it embeds, it does "
                                         "not generate"
                                       : "this engine generates: pooling requests need --runner pooling");
  }
  if (request.sampling_params.structured_outputs && structured_ == nullptr) {
    return Status::InvalidArgument("this engine does not serve structured outputs");
  }
  int32_t handle;
  if (!free_handles_.empty()) {
    handle = free_handles_.back();
  } else {
    handle = static_cast<int32_t>(requests_.size());
  }
  const bool reasoning_ended = request.reasoning_ended.value_or(true);
  auto created = Request::Create(handle, std::move(request), config_.max_model_len);
  if (!created.ok()) return created.status();
  std::unique_ptr<Request> r = std::move(created).value();
  if (!free_handles_.empty()) {
    free_handles_.pop_back();
  } else {
    requests_.emplace_back();
    map_entry_.emplace_back();
    in_map_.push_back(0);
    map_stamp_.push_back(-1);
    map_value_.push_back(0);
  }
  r->sequence_number = next_sequence_number_++;
  r->UpdateBlockHashes(kv_.hasher(), kv_.config().block_size);
  RecordEvent(*r, RequestEventType::kQueued);
  if (r->sampling_params.structured_outputs) {
    r->structured_output = std::make_unique<StructuredOutputRequest>();
    r->structured_output->grammar = structured_->Submit(*r->sampling_params.structured_outputs);
    r->structured_output->reasoning_ended = reasoning_ended;
    r->status = RequestStatus::kWaitingForStructuredOutputGrammar;
    grammar_waiting_.push_back(handle);
    ++num_constrained_;
  }
  id_to_handle_.emplace(r->request_id, handle);
  requests_[handle] = std::move(r);
  waiting_.Push(handle);
  return Status::Ok();
}

void Scheduler::FinishRequests(std::span<const std::string> request_ids, RequestStatus status) {
  CHECK(IsFinished(status)) << "FinishRequests needs a FINISHED_* status";
  for (const std::string& id : request_ids) {
    auto it = id_to_handle_.find(id);
    if (it == id_to_handle_.end()) continue;
    const int32_t h = it->second;
    Request& r = *requests_[h];
    if (r.status == RequestStatus::kRunning) {
      running_.erase(std::find(running_.begin(), running_.end(), h));
    } else {
      if (r.status == RequestStatus::kWaitingForRemoteKVs) HoldBlocksOfUnfinishedLoad(r);
      CHECK(waiting_.Remove(h)) << "request " << id << " is neither running nor waiting";
    }
    r.status = status;
    ReleaseFinished(h);
  }
}

void Scheduler::ReleaseFinished(int32_t handle) {
  std::unique_ptr<Request> r = std::move(requests_[handle]);
  if (r->structured_output) {
    std::erase(grammar_waiting_, handle);
    --num_constrained_;
  }
  EraseMapEntry(handle);
  if (suffix_ != nullptr) suffix_->Finish(r->request_id);
  if (static_cast<size_t>(r->client_index) >= finished_for_clients_.size()) {
    finished_for_clients_.resize(static_cast<size_t>(r->client_index) + 1);
  }
  finished_for_clients_[r->client_index].push_back(r->request_id);
  id_to_handle_.erase(r->request_id);
  finished_for_workers_.push_back(r->request_id);
  free_handles_.push_back(handle);
  if (connector_ != nullptr) {
    (void)NotifyConnectorFinished(*r);  // a request that stopped was told already (its output has the params)
    if (r->hold_blocks) {
      HoldFinishedBlocks(std::move(r));
      return;
    }
  }
  kv_.Free(*r);
}

const proto::SchedulerOutput& Scheduler::Schedule() {
  ++step_;
  decision_.clear();
  output_.preempted_req_ids.clear();
  if (!grammar_waiting_.empty()) PromoteCompiledGrammars();
  int32_t budget = config_.max_num_batched_tokens;
  bool preempted = false;
  ScheduleRunning(&budget, &preempted);
  // As in vLLM: a step that had to preempt admits nobody new.
  if (!preempted) ScheduleWaiting(&budget);

  BuildOutput();  // reads last_scheduled_step of the previous step
  if (connector_ != nullptr) BuildKVConnectorMeta();
  // Advance computed tokens now, so the next step can be planned before this
  // one's output arrives.
  for (size_t i = 0; i < decision_.size(); ++i) {
    Request& r = *requests_[decision_[i].handle];
    r.num_computed_tokens += decision_[i].num_tokens;
    r.last_scheduled_step = step_;
    r.scheduled_index = static_cast<int32_t>(i);
  }
  // Unconstrained steps skip the bitmask (once last step's rows are cleared).
  if (num_constrained_ > 0 || !output_.structured_output_request_ids.empty()) FillGrammarBitmask();
  if (config_.log_stats) iteration_tokens_.push_back(output_.total_num_scheduled_tokens);
  return output_;
}

void Scheduler::ScheduleRunning(int32_t* budget, bool* preempted) {
  const int32_t threshold = config_.long_prefill_token_threshold;
  size_t i = 0;
  while (i < running_.size() && *budget > 0) {
    // Running requests are cold after a model step: fetch the two hot lines
    // of the one 8 ahead while this one is planned (a decode step that needs
    // no new block reads nothing else of it).
    if (i + 8 < running_.size()) {
      const char* p = reinterpret_cast<const char*>(requests_[running_[i + 8]].get());
      __builtin_prefetch(p);
      __builtin_prefetch(p + 64);
    }
    Request& r = *requests_[running_[i]];
    const int32_t pending = r.num_tokens() - r.num_computed_tokens;
    // A decoding request verifies its drafts in the same step (they come
    // after its real tokens, so a cut budget drops drafts first).
    const int32_t held_drafts = config_.num_speculative_tokens > 0 ? static_cast<int32_t>(r.spec_token_ids.size()) : 0;
    int32_t n = pending + held_drafts;
    if (threshold > 0 && n > threshold) n = threshold;
    n = std::min(n, *budget);
    // Positions never pass max_model_len - 1.
    n = std::min(n, config_.max_model_len - 1 - r.num_computed_tokens);
    if (n <= 0) {
      ++i;
      continue;
    }
    const int32_t blocks_before = static_cast<int32_t>(r.block_ids.size());
    bool scheduled = true;
    while (!kv_.AllocateSlots(r, n, 0, {}, config_.num_lookahead_tokens)) {
      const size_t victim_pos = PickVictim();
      const int32_t victim = running_[victim_pos];
      if (victim_pos < i) {
        // Only under PRIORITY: the victim was scheduled earlier in this step.
        // Give its tokens back; it loses its blocks below.
        auto e = std::find_if(decision_.begin(), decision_.end(),
                              [victim](const Scheduled& s) { return s.handle == victim; });
        if (e != decision_.end()) {
          *budget += e->num_tokens;
          decision_.erase(e);
        }
        --i;
      }
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(victim_pos));
      Preempt(victim);
      *preempted = true;
      if (victim == r.handle) {
        scheduled = false;
        break;
      }
    }
    if (!scheduled) break;
    decision_.push_back(Scheduled{r.handle, n, r.num_computed_tokens, blocks_before, Kind::kRunning,
                                  std::max(0, n - pending)});
    *budget -= n;
    ++i;
  }
}

size_t Scheduler::PickVictim() const {
  if (config_.policy == SchedulingPolicy::kFcfs) return running_.size() - 1;
  size_t best = 0;
  for (size_t j = 1; j < running_.size(); ++j) {
    const Request& a = *requests_[running_[j]];
    const Request& b = *requests_[running_[best]];
    if (std::tie(a.priority, a.arrival_time, a.sequence_number) >
        std::tie(b.priority, b.arrival_time, b.sequence_number)) {
      best = j;
    }
  }
  return best;
}

void Scheduler::Preempt(int32_t handle) {
  Request& r = *requests_[handle];
  kv_.Free(r);
  r.status = RequestStatus::kPreempted;
  r.num_computed_tokens = 0;
  r.spec_token_ids.clear();
  ++r.num_preemptions;
  ++num_preemptions_;
  RecordEvent(r, RequestEventType::kPreempted);
  output_.preempted_req_ids.push_back(r.request_id);
  waiting_.PushFront(handle);
}

void Scheduler::ScheduleWaiting(int32_t* budget) {
  const int32_t threshold = config_.long_prefill_token_threshold;
  skipped_waiting_.clear();
  // The adapters running now (vLLM counts the running requests' adapters, this step's admissions included).
  running_loras_.clear();
  if (config_.max_loras > 0) {
    for (int32_t h : running_) {
      const std::string& lora = requests_[h]->lora_name;
      if (!lora.empty()) running_loras_.insert(lora);
    }
  }
  while (!waiting_.empty() && *budget > 0 &&
         static_cast<int32_t>(running_.size()) < config_.max_num_seqs) {
    const int32_t h = waiting_.Front();
    Request& r = *requests_[h];
    if (r.status == RequestStatus::kWaitingForStructuredOutputGrammar ||
        (r.status == RequestStatus::kWaitingForRemoteKVs && !PromoteLoadedRequest(r))) {
      // Not ready; look past it without losing its place.
      waiting_.Pop();
      skipped_waiting_.push_back(h);
      continue;
    }
    if (config_.max_loras > 0 && !r.lora_name.empty() && running_loras_.count(r.lora_name) == 0 &&
        static_cast<int32_t>(running_loras_.size()) >= config_.max_loras) {
      waiting_.Pop();  // a further adapter: it waits, keeping its place
      skipped_waiting_.push_back(h);
      continue;
    }
    // A request whose asynchronous KV load finished comes back with its
    // loaded tokens computed; any other has none.
    hit_blocks_.clear();
    int32_t hit = 0;
    ExternalMatch external;
    if (r.num_computed_tokens == 0) {
      hit = kv_.GetComputedBlocks(r, &hit_blocks_);
      if (connector_ != nullptr && !r.kv_load_failed) {
        external = connector_->GetNumNewMatchedTokens(r, hit);
        if (!external.num_tokens) {
          waiting_.Pop();  // the connector cannot tell yet: ask again next step
          skipped_waiting_.push_back(h);
          continue;
        }
      }
    }
    const int32_t num_external = external.num_tokens.value_or(0);
    const int32_t computed = r.num_computed_tokens + hit + num_external;
    CHECK(num_external >= 0 && computed < r.num_tokens())
        << "request " << r.request_id << ": the KV connector offered " << num_external << " tokens past " << hit
        << " of " << r.num_tokens() << "; it must leave the last one to compute";
    int32_t n = external.load_async ? 0 : r.num_tokens() - computed;
    if (threshold > 0 && n > threshold) n = threshold;
    if (!config_.enable_chunked_prefill && n > *budget) break;
    n = std::min(n, *budget);
    // Blocks being loaded enter the prefix cache once their KV has arrived.
    const bool delay_cache_blocks = num_external > 0 || external.load_async;
    if (!kv_.AllocateSlots(r, n + num_external, hit, hit_blocks_, config_.num_lookahead_tokens,
                           config_.reserve_full_prompt, delay_cache_blocks)) {
      break;  // waiting requests never preempt
    }
    waiting_.Pop();
    if (connector_ != nullptr) AdmittedWithConnector(r, computed, num_external, external.load_async);
    if (external.load_async) {
      r.num_computed_tokens = computed;  // once loaded; it waits until the workers say so
      skipped_waiting_.push_back(h);
      continue;
    }
    running_.push_back(h);
    if (config_.max_loras > 0 && !r.lora_name.empty()) running_loras_.insert(r.lora_name);
    const Kind kind = r.status == RequestStatus::kPreempted ? Kind::kResumed : Kind::kNew;
    r.status = RequestStatus::kRunning;
    r.num_computed_tokens = computed;
    if (r.num_cached_tokens < 0) r.num_cached_tokens = computed;
    RecordEvent(r, RequestEventType::kScheduled);
    decision_.push_back(Scheduled{h, n, computed, 0, kind});
    *budget -= n;
  }
  for (auto it = skipped_waiting_.rbegin(); it != skipped_waiting_.rend(); ++it) {
    waiting_.PushFront(*it);
  }
}

proto::SchedulerStats Scheduler::PeekStats() const {
  proto::SchedulerStats s;
  s.num_running_reqs = num_running();
  s.num_waiting_reqs = num_waiting();
  s.num_waiting_tokens = waiting_.num_tokens();
  s.kv_cache_usage = kv_.usage();
  const PrefixCacheStats& p = kv_.prefix_cache_stats();
  s.prefix_cache_queries = p.queries - reported_prefix_.queries;
  s.prefix_cache_hits = p.hits - reported_prefix_.hits;
  s.num_preemptions = num_preemptions_ - reported_preemptions_;
  s.step_counter = step_;
  s.iteration_tokens = iteration_tokens_;
  if (config_.num_speculative_tokens > 0) {
    proto::SpecDecodingStats& d = s.spec_decoding_stats.emplace();
    d.num_spec_tokens = config_.num_speculative_tokens;
    d.num_drafts = spec_stats_.num_drafts - reported_spec_.num_drafts;
    d.num_draft_tokens = spec_stats_.num_draft_tokens - reported_spec_.num_draft_tokens;
    d.num_accepted_tokens = spec_stats_.num_accepted_tokens - reported_spec_.num_accepted_tokens;
    const auto& now = spec_stats_.num_accepted_tokens_per_pos;
    const auto& then = reported_spec_.num_accepted_tokens_per_pos;
    d.num_accepted_tokens_per_pos.assign(static_cast<size_t>(config_.num_speculative_tokens), 0);
    for (size_t i = 0; i < now.size() && i < d.num_accepted_tokens_per_pos.size(); ++i) {
      d.num_accepted_tokens_per_pos[i] = now[i] - (i < then.size() ? then[i] : 0);
    }
  }
  return s;
}

proto::SchedulerStats Scheduler::MakeStats() {
  proto::SchedulerStats s = PeekStats();
  reported_prefix_ = kv_.prefix_cache_stats();
  reported_preemptions_ = num_preemptions_;
  reported_spec_ = spec_stats_;
  iteration_tokens_.clear();
  return s;
}

}  // namespace llmserve::engine_core
