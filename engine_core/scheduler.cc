#include "engine_core/scheduler.h"

#include <algorithm>
#include <chrono>
#include <tuple>

#include <glog/logging.h>

namespace llmserve::engine_core {

namespace {
std::optional<proto::FinishReason> FinishReasonOf(RequestStatus s) {
  switch (s) {
    case RequestStatus::kFinishedStopped: return proto::FinishReason::kStop;
    case RequestStatus::kFinishedLengthCapped: return proto::FinishReason::kLength;
    case RequestStatus::kFinishedAborted: return proto::FinishReason::kAbort;
    case RequestStatus::kFinishedError: return proto::FinishReason::kError;
    default: return std::nullopt;
  }
}
}  // namespace

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

Status Scheduler::AddRequest(proto::EngineCoreRequest request) {
  if (config_.max_waiting_requests > 0 && waiting_.size() >= config_.max_waiting_requests) {
    return Status::ResourceExhausted("the engine's waiting queue is full (" +
                                     std::to_string(config_.max_waiting_requests) +
                                     " requests); retry later");
  }
  if (id_to_handle_.count(request.request_id) != 0) {
    return Status::InvalidArgument("request id '" + request.request_id + "' is already in use");
  }
  int32_t handle;
  if (!free_handles_.empty()) {
    handle = free_handles_.back();
  } else {
    handle = static_cast<int32_t>(requests_.size());
  }
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
      CHECK(waiting_.Remove(h)) << "request " << id << " is neither running nor waiting";
    }
    r.status = status;
    ReleaseFinished(h);
  }
}

void Scheduler::ReleaseFinished(int32_t handle) {
  std::unique_ptr<Request> r = std::move(requests_[handle]);
  EraseMapEntry(handle);
  kv_.Free(*r);
  if (static_cast<size_t>(r->client_index) >= finished_for_clients_.size()) {
    finished_for_clients_.resize(static_cast<size_t>(r->client_index) + 1);
  }
  finished_for_clients_[r->client_index].push_back(r->request_id);
  id_to_handle_.erase(r->request_id);
  finished_for_workers_.push_back(r->request_id);
  free_handles_.push_back(handle);
}

// ---------------------------------------------------------------------------
// Schedule
// ---------------------------------------------------------------------------

const proto::SchedulerOutput& Scheduler::Schedule() {
  ++step_;
  decision_.clear();
  output_.preempted_req_ids.clear();
  int32_t budget = config_.max_num_batched_tokens;
  bool preempted = false;
  ScheduleRunning(&budget, &preempted);
  // As in vLLM: a step that had to preempt admits nobody new.
  if (!preempted) ScheduleWaiting(&budget);

  BuildOutput();  // reads last_scheduled_step of the previous step
  // Advance computed tokens now, so the next step can be planned before this
  // one's output arrives.
  for (size_t i = 0; i < decision_.size(); ++i) {
    Request& r = *requests_[decision_[i].handle];
    r.num_computed_tokens += decision_[i].num_tokens;
    r.last_scheduled_step = step_;
    r.scheduled_index = static_cast<int32_t>(i);
  }
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
    int32_t n = r.num_tokens() - r.num_computed_tokens;
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
    decision_.push_back(Scheduled{r.handle, n, r.num_computed_tokens, blocks_before, Kind::kRunning});
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
  ++r.num_preemptions;
  ++num_preemptions_;
  RecordEvent(r, RequestEventType::kPreempted);
  output_.preempted_req_ids.push_back(r.request_id);
  waiting_.PushFront(handle);
}

void Scheduler::ScheduleWaiting(int32_t* budget) {
  const int32_t threshold = config_.long_prefill_token_threshold;
  skipped_waiting_.clear();
  while (!waiting_.empty() && *budget > 0 &&
         static_cast<int32_t>(running_.size()) < config_.max_num_seqs) {
    const int32_t h = waiting_.Front();
    Request& r = *requests_[h];
    if (r.status == RequestStatus::kWaitingForStructuredOutputGrammar) {
      // Not ready; look past it without losing its place.
      waiting_.Pop();
      skipped_waiting_.push_back(h);
      continue;
    }
    DCHECK_EQ(r.num_computed_tokens, 0);
    hit_blocks_.clear();
    const int32_t hit = kv_.GetComputedBlocks(r, &hit_blocks_);
    int32_t n = r.num_tokens() - hit;
    if (threshold > 0 && n > threshold) n = threshold;
    if (!config_.enable_chunked_prefill && n > *budget) break;
    n = std::min(n, *budget);
    if (!kv_.AllocateSlots(r, n, hit, hit_blocks_, config_.num_lookahead_tokens,
                           config_.reserve_full_prompt)) {
      break;  // waiting requests never preempt
    }
    waiting_.Pop();
    running_.push_back(h);
    const Kind kind = r.status == RequestStatus::kPreempted ? Kind::kResumed : Kind::kNew;
    r.status = RequestStatus::kRunning;
    r.num_computed_tokens = hit;
    if (r.num_cached_tokens < 0) r.num_cached_tokens = hit;
    RecordEvent(r, RequestEventType::kScheduled);
    decision_.push_back(Scheduled{h, n, hit, 0, kind});
    *budget -= n;
  }
  for (auto it = skipped_waiting_.rbegin(); it != skipped_waiting_.rend(); ++it) {
    waiting_.PushFront(*it);
  }
}

void Scheduler::BuildOutput() {
  proto::SchedulerOutput& o = output_;
  proto::CachedRequestData& c = o.scheduled_cached_reqs;
  size_t num_new = 0;
  size_t num_cached = 0;
  for (const Scheduled& s : decision_) (s.kind == Kind::kNew ? num_new : num_cached)++;
  // resize() keeps the surviving elements' buffers, so steady-state steps reuse them.
  o.scheduled_new_reqs.resize(num_new);
  c.req_ids.resize(num_cached);
  req_id_owner_.resize(num_cached, 0);
  c.new_block_ids.resize(num_cached);
  c.num_computed_tokens.resize(num_cached);
  c.num_output_tokens.resize(num_cached);
  c.resumed_req_ids.clear();
  c.new_token_ids.clear();
  c.all_token_ids.clear();

  UpdateScheduledMap();

  int32_t total = 0;
  size_t ni = 0;
  size_t ci = 0;
  for (const Scheduled& s : decision_) {
    const Request& r = *requests_[s.handle];
    total += s.num_tokens;
    if (s.kind == Kind::kNew) {
      proto::NewRequestData& n = o.scheduled_new_reqs[ni++];
      n.req_id.assign(r.request_id);
      const auto prompt = r.prompt_token_ids();
      n.prompt_token_ids.assign(prompt.begin(), prompt.end());
      n.sampling_params = r.sampling_params;
      n.block_ids.resize(1);
      n.block_ids[0].assign(r.block_ids.begin(), r.block_ids.end());
      n.num_computed_tokens = s.num_computed_before;
      if (r.lora_name.empty()) {
        n.lora_name.reset();
      } else {
        n.lora_name = r.lora_name;
      }
      continue;
    }
    // Decode steps list the same requests in the same slots: skip the copy.
    const uint64_t owner = r.sequence_number + 1;
    if (req_id_owner_[ci] != owner) {
      c.req_ids[ci].assign(r.request_id);
      req_id_owner_[ci] = owner;
    }
    c.num_computed_tokens[ci] = s.num_computed_before;
    c.num_output_tokens[ci] = r.num_output_tokens();
    auto& blocks = c.new_block_ids[ci];
    if (static_cast<size_t>(s.first_new_block) < r.block_ids.size()) {
      if (!blocks) {
        if (spare_block_lists_.empty()) {
          blocks.emplace();
        } else {
          blocks.emplace(std::move(spare_block_lists_.back()));
          spare_block_lists_.pop_back();
        }
      }
      blocks->resize(1);
      (*blocks)[0].assign(r.block_ids.begin() + s.first_new_block, r.block_ids.end());
    } else if (blocks) {
      // Keep the lists' capacity for the next request that gets blocks.
      spare_block_lists_.push_back(std::move(*blocks));
      blocks.reset();
    }
    // Workers hold tokens only of requests they saw last step; resend the rest.
    const bool resumed = s.kind == Kind::kResumed;
    if (resumed) c.resumed_req_ids.push_back(r.request_id);
    if (resumed || r.last_scheduled_step != step_ - 1) {
      const auto all = r.all_token_ids();
      c.all_token_ids[r.request_id].assign(all.begin(), all.begin() + s.num_computed_before + s.num_tokens);
    }
    ++ci;
  }
  o.total_num_scheduled_tokens = total;
  o.scheduled_spec_decode_tokens.clear();
  o.num_common_prefix_blocks.assign(1, 0);
  o.finished_req_ids.swap(finished_for_workers_);
  finished_for_workers_.clear();
}

void Scheduler::EraseMapEntry(int32_t handle) {
  if (!in_map_[handle]) return;
  // Only Schedule() edits the output (an executor may still be reading it),
  // so the node is erased at the next UpdateScheduledMap.
  stale_entries_.push_back(map_entry_[handle]);
  in_map_[handle] = 0;
}

void Scheduler::UpdateScheduledMap() {
  ScheduledMap& m = output_.num_scheduled_tokens;
  for (ScheduledMap::iterator it : stale_entries_) spare_nodes_.push_back(m.extract(it));
  stale_entries_.clear();
  for (const Scheduled& s : decision_) {
    const int32_t h = s.handle;
    map_stamp_[h] = step_;
    if (in_map_[h]) {
      // Steady decode schedules the same count again: skip touching the node.
      if (map_value_[h] != s.num_tokens) map_entry_[h]->second = map_value_[h] = s.num_tokens;
      continue;
    }
    const std::string& id = requests_[h]->request_id;
    ScheduledMap::iterator it;
    if (spare_nodes_.empty()) {
      it = m.emplace(id, s.num_tokens).first;
    } else {
      auto node = std::move(spare_nodes_.back());
      spare_nodes_.pop_back();
      node.key().assign(id);
      node.mapped() = s.num_tokens;
      it = m.insert(std::move(node)).position;
    }
    map_entry_[h] = it;
    map_value_[h] = s.num_tokens;
    in_map_[h] = 1;
  }
  // Entries from the previous step whose request was not scheduled now.
  for (int32_t h : map_handles_) {
    if (in_map_[h] && map_stamp_[h] != step_) {
      spare_nodes_.push_back(m.extract(map_entry_[h]));
      in_map_[h] = 0;
    }
  }
  map_handles_.clear();
  for (const Scheduled& s : decision_) map_handles_.push_back(s.handle);
  DCHECK_EQ(m.size(), decision_.size());
}

// ---------------------------------------------------------------------------
// UpdateFromOutput
// ---------------------------------------------------------------------------

int32_t Scheduler::LocateScheduled(size_t row, const std::string& id) const {
  // Fast paths: the request that answered in this row last step, then the
  // one scheduled in this position.
  if (row < row_handle_.size() && row_handle_[row] >= 0 &&
      static_cast<size_t>(row_handle_[row]) < requests_.size()) {
    const Request* r = requests_[row_handle_[row]].get();
    if (r != nullptr && r->last_scheduled_step == step_ && r->request_id == id) return r->scheduled_index;
  }
  if (row < decision_.size()) {
    const Request* r = requests_[decision_[row].handle].get();
    if (r != nullptr && r->last_scheduled_step == step_ && r->request_id == id) {
      return static_cast<int32_t>(row);
    }
  }
  auto it = id_to_handle_.find(id);
  if (it == id_to_handle_.end()) return -1;
  const Request& r = *requests_[it->second];
  return r.last_scheduled_step == step_ ? r.scheduled_index : -1;
}

void Scheduler::PrefetchOutputSlot(int32_t client) const {
  // The slot the row 4 ahead will fill, if it goes to the same frontend as
  // those in between (the usual case: one frontend).
  const auto ci = static_cast<size_t>(client);
  if (ci >= per_client_.size()) return;
  const std::vector<proto::EngineCoreOutput>& v = per_client_[ci].outputs.outputs;
  const auto slot = static_cast<size_t>(per_client_used_[ci]) + 4;
  if (slot >= v.size()) return;
  const char* p = reinterpret_cast<const char*>(&v[slot]);
  for (size_t off = 0; off < sizeof(proto::EngineCoreOutput); off += 64) __builtin_prefetch(p + off, 1);
  if (slot >= 4) {
    // Two rows further on, the slot itself has arrived: its heap buffers next.
    const proto::EngineCoreOutput& near = v[slot - 2];
    __builtin_prefetch(near.request_id.data(), 1);
    __builtin_prefetch(near.new_token_ids.data(), 1);
  }
}

proto::EngineCoreOutput& Scheduler::NextOutput(int32_t client) {
  const auto ci = static_cast<size_t>(client);
  if (ci >= per_client_.size()) {
    per_client_.resize(ci + 1);
    per_client_used_.resize(ci + 1, 0);
  }
  std::vector<proto::EngineCoreOutput>& v = per_client_[ci].outputs.outputs;
  const auto used = static_cast<size_t>(per_client_used_[ci]++);
  if (used == v.size()) return v.emplace_back();
  // Reuse the slot: the caller overwrites id and tokens; reset the rest
  // field by field (assigning a fresh struct costs a fifth of a 1024-request
  // step). The size check stops the build when the wire struct grows a field
  // that must be reset here too.
  static_assert(sizeof(proto::EngineCoreOutput) == 272,
                "proto::EngineCoreOutput changed: reset the new field in Scheduler::NextOutput "
                "and update this size");
  proto::EngineCoreOutput& out = v[used];
  out.new_logprobs.reset();
  out.finish_reason.reset();
  out.stop_token_id.reset();
  out.stop_string.reset();
  out.events.clear();
  out.num_cached_tokens = 0;
  out.error_code.reset();
  out.error_message.reset();
  return out;
}

void Scheduler::UpdateFromOutput(const proto::SchedulerOutput& scheduler_output,
                                 const proto::ModelRunnerOutput& model_output,
                                 std::vector<ClientOutputs>* outputs) {
  CHECK_EQ(&scheduler_output, &output_) << "UpdateFromOutput needs the output of the last Schedule()";
  std::fill(per_client_used_.begin(), per_client_used_.end(), 0);
  const size_t rows = std::min(model_output.req_ids.size(), model_output.sampled_token_ids.size());
  finished_handles_.clear();
  // After a model step the caches hold weights and logits, not requests: each
  // row's request would miss several times in turn. Prefetch the request a
  // few rows ahead (by last step's row guess), and its id and tokens once the
  // object itself has had time to arrive.
  auto guessed = [&](size_t row) -> const Request* {
    if (row >= rows || row >= row_handle_.size() || row_handle_[row] < 0) return nullptr;
    const auto h = static_cast<size_t>(row_handle_[row]);
    return h < requests_.size() ? requests_[h].get() : nullptr;
  };
  for (size_t row = 0; row < rows; ++row) {
    if (const Request* ahead = guessed(row + 8)) {
      // A decode step reads the request's first three lines (see Request).
      const char* p = reinterpret_cast<const char*>(ahead);
      for (size_t line = 0; line < 3; ++line) __builtin_prefetch(p + 64 * line);
      __builtin_prefetch(model_output.req_ids[row + 8].data());
      __builtin_prefetch(model_output.sampled_token_ids[row + 8].data());
    }
    if (const Request* near = guessed(row + 4)) {
      __builtin_prefetch(near->request_id.data());
      __builtin_prefetch(near->all_token_ids().data() + near->num_tokens(), 1);
      PrefetchOutputSlot(near->client_index);
    }
    const int32_t idx = LocateScheduled(row, model_output.req_ids[row]);
    if (row >= row_handle_.size()) row_handle_.resize(row + 1, -1);
    row_handle_[row] = idx < 0 ? -1 : decision_[idx].handle;
    if (idx < 0) continue;  // finished (e.g. aborted) since it was scheduled
    const int32_t h = decision_[idx].handle;
    Request& r = *requests_[h];
    const std::vector<int32_t>& sampled = model_output.sampled_token_ids[row];
    // A partial prefill chunk samples nothing (anything sampled is discarded).
    if (sampled.empty() || r.num_computed_tokens < r.num_tokens()) continue;

    const int32_t before = r.num_tokens();
    bool stopped = false;
    for (int32_t t : sampled) {
      r.AppendOutputToken(t);
      if (r.CheckStop(config_.max_model_len)) {
        stopped = true;
        break;
      }
    }
    r.UpdateBlockHashes(kv_.hasher(), kv_.config().block_size);

    proto::EngineCoreOutput& out = NextOutput(r.client_index);
    out.request_id.assign(r.request_id);
    const auto all = r.all_token_ids();
    out.new_token_ids.assign(all.begin() + before, all.end());
    if (row < model_output.logprobs.size() && model_output.logprobs[row]) {
      out.new_logprobs = *model_output.logprobs[row];
      // Keep only the rows of tokens actually appended (a stop may cut the rest).
      const size_t kept = out.new_token_ids.size();
      if (out.new_logprobs->token_ids.size() > kept) {
        out.new_logprobs->token_ids.resize(kept);
        out.new_logprobs->logprobs.resize(kept);
        out.new_logprobs->sampled_token_ranks.resize(kept);
      }
    }
    out.num_cached_tokens = std::max(r.num_cached_tokens, 0);
    if (!r.events.empty()) {
      out.events.reserve(r.events.size());
      for (const RequestEvent& e : r.events) {
        out.events.push_back(proto::EngineCoreEvent{static_cast<int32_t>(e.type), e.timestamp});
      }
      r.events.clear();
    }
    if (stopped) {
      out.finish_reason = FinishReasonOf(r.status);
      if (r.stop_reason >= 0) out.stop_token_id = r.stop_reason;
      finished_handles_.push_back(h);
    }
  }

  if (!finished_handles_.empty()) {
    std::erase_if(running_, [this](int32_t h) { return requests_[h]->is_finished(); });
    for (int32_t h : finished_handles_) ReleaseFinished(h);
  }

  // Hand each frontend's share over by swapping buffers with `outputs`, whose
  // entries (last step's) become this scheduler's buffers for the next step.
  const double now = Now();
  const size_t clients = std::max(per_client_.size(), finished_for_clients_.size());
  if (per_client_.size() < clients) {
    per_client_.resize(clients);
    per_client_used_.resize(clients, 0);
  }
  size_t k = 0;
  for (size_t ci = 0; ci < clients; ++ci) {
    const auto used = static_cast<size_t>(per_client_used_[ci]);
    const bool has_finished = ci < finished_for_clients_.size() && !finished_for_clients_[ci].empty();
    if (used == 0 && !has_finished) continue;
    ClientOutputs& mine = per_client_[ci];
    // Everything but the output slots starts fresh (the caller may have set
    // other fields on the buffers it handed back).
    std::vector<proto::EngineCoreOutput> slots = std::move(mine.outputs.outputs);
    slots.resize(used);
    mine.outputs = proto::EngineCoreOutputs{};
    mine.outputs.outputs = std::move(slots);
    mine.client_index = static_cast<int32_t>(ci);
    if (has_finished) mine.outputs.finished_requests.emplace().swap(finished_for_clients_[ci]);
    mine.outputs.timestamp = now;
    if (k == outputs->size()) outputs->emplace_back();
    std::swap((*outputs)[k], mine);
    ++k;
  }
  outputs->resize(k);
  if (config_.log_stats) {
    if (outputs->empty()) {
      outputs->emplace_back().outputs.timestamp = now;
    }
    outputs->front().outputs.scheduler_stats = MakeStats();
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
  return s;
}

proto::SchedulerStats Scheduler::MakeStats() {
  proto::SchedulerStats s = PeekStats();
  reported_prefix_ = kv_.prefix_cache_stats();
  reported_preemptions_ = num_preemptions_;
  iteration_tokens_.clear();
  return s;
}

}  // namespace llmserve::engine_core
