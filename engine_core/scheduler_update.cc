// Scheduler, part 3: applying the workers' output of a step (sampled tokens,
// stop conditions, freeing finished requests) and grouping the outputs per
// frontend. See scheduler.h.
#include <algorithm>

#include <glog/logging.h>

#include "engine_core/scheduler.h"

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
  static_assert(sizeof(proto::EngineCoreOutput) == 416,
                "proto::EngineCoreOutput changed: reset the new field in Scheduler::NextOutput "
                "and update this size");
  proto::EngineCoreOutput& out = v[used];
  out.new_logprobs.reset();
  out.new_prompt_logprobs.reset();
  out.pooling_output.reset();
  out.finish_reason.reset();
  out.stop_token_id.reset();
  out.stop_string.reset();
  out.events.clear();
  out.num_cached_tokens = 0;
  out.error_code.reset();
  out.error_message.reset();
  out.kv_transfer_params.msgpack.clear();
  return out;
}

// Inlined into UpdateFromOutput's per-row loop, its only caller (as is
// ApplySampled), as when the loop was one function.
[[gnu::always_inline]] inline void Scheduler::PrefetchRowsAhead(size_t row, size_t rows, const proto::ModelRunnerOutput& model_output) const {
  // After a model step the caches hold weights and logits, not requests: each
  // row's request would miss several times in turn. Prefetch the request a
  // few rows ahead (by last step's row guess), and its id and tokens once the
  // object itself has had time to arrive.
  auto guessed = [&](size_t ahead) -> const Request* {
    if (ahead >= rows || ahead >= row_handle_.size() || row_handle_[ahead] < 0) return nullptr;
    const auto h = static_cast<size_t>(row_handle_[ahead]);
    return h < requests_.size() ? requests_[h].get() : nullptr;
  };
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
}

void Scheduler::RollBackRejected(Request& r, int32_t num_drafts, size_t num_sampled) {
  CHECK_LE(num_sampled, static_cast<size_t>(num_drafts) + 1) << "request " << r.request_id
                                                             << ": more tokens than drafts + 1";
  const int32_t accepted = num_sampled == 0 ? 0 : static_cast<int32_t>(num_sampled) - 1;
  // The rejected drafts' KV slots are recomputed with the real tokens later.
  // Blocks enter the prefix cache only up to num_tokens() (real tokens), so
  // no cached block ever held a rejected draft.
  r.num_computed_tokens -= num_drafts - accepted;
  spec_stats_.Record(num_drafts, accepted);
}

void Scheduler::ProposeDrafts(Request& r) {
  r.spec_token_ids.clear();
  if (r.structured_output != nullptr) return;  // drafts would need the grammar's check
  // vLLM's disable_by_batch_size: a large batch gains little from drafts.
  // (Requests finishing in this update still count: the next step may be one
  // smaller, and then goes without drafts once.)
  if (config_.spec_disable_by_batch_size > 0 &&
      running_.size() >= static_cast<size_t>(config_.spec_disable_by_batch_size))
    return;
  // A step verifying d drafts emits up to d + 1 tokens at positions up to
  // num_tokens - 1 + d: stay within max_tokens and max_model_len.
  const int32_t max_drafts = std::min({config_.num_speculative_tokens, r.stop.max_tokens - r.num_output_tokens() - 1,
                                       config_.max_model_len - r.num_tokens()});
  if (suffix_ != nullptr) {
    suffix_->Propose(r.request_id, r.all_token_ids(), r.num_prompt_tokens(), max_drafts, &r.spec_token_ids);
  } else {
    ProposeNgram(r.all_token_ids(), config_.ngram, max_drafts, &r.spec_token_ids);
  }
}

[[gnu::always_inline]] inline void Scheduler::ApplySampled(int32_t handle, size_t row, int32_t num_drafts,
                                                           const proto::ModelRunnerOutput& model_output) {
  Request& r = *requests_[handle];
  const std::vector<int32_t>& sampled = model_output.sampled_token_ids[row];
  if (num_drafts > 0) RollBackRejected(r, num_drafts, sampled.size());
  // A partial prefill chunk samples nothing (anything sampled is discarded).
  if (sampled.empty() || r.num_computed_tokens < r.num_tokens()) {
    // Only steps that finish a pooling request's prompt carry pooler output.
    if (!model_output.pooler_output.empty()) FinishPooled(handle, model_output);
    return;
  }

  const int32_t before = r.num_tokens();
  bool stopped = false;
  for (int32_t t : sampled) {
    r.AppendOutputToken(t);
    if (r.structured_output != nullptr && !AdvanceGrammar(r, t)) {
      stopped = true;
      break;
    }
    if (r.CheckStop(config_.max_model_len)) {
      stopped = true;
      break;
    }
  }
  r.UpdateBlockHashes(kv_.hasher(), kv_.config().block_size);
  if (!stopped && config_.num_speculative_tokens > 0) ProposeDrafts(r);

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
  if (!model_output.prompt_logprobs.empty()) {  // only steps finishing such a prefill
    auto it = model_output.prompt_logprobs.find(r.request_id);
    if (it != model_output.prompt_logprobs.end()) out.new_prompt_logprobs = it->second;
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
    if (connector_ != nullptr) out.kv_transfer_params = NotifyConnectorFinished(r);
    if (r.stop_reason >= 0) out.stop_token_id = r.stop_reason;
    finished_handles_.push_back(handle);
  }
}

void Scheduler::FinishPooled(int32_t handle, const proto::ModelRunnerOutput& model_output) {
  Request& r = *requests_[handle];
  auto it = model_output.pooler_output.find(r.request_id);
  if (it == model_output.pooler_output.end() || r.num_computed_tokens < r.num_prompt_tokens()) return;
  r.status = RequestStatus::kFinishedStopped;
  proto::EngineCoreOutput& out = NextOutput(r.client_index);
  out.request_id.assign(r.request_id);
  out.new_token_ids.clear();
  out.pooling_output = it->second;
  out.finish_reason = proto::FinishReason::kStop;
  out.num_cached_tokens = std::max(r.num_cached_tokens, 0);
  for (const RequestEvent& e : r.events)
    out.events.push_back(proto::EngineCoreEvent{static_cast<int32_t>(e.type), e.timestamp});
  r.events.clear();
  finished_handles_.push_back(handle);
}

void Scheduler::HandOverOutputs(std::vector<ClientOutputs>* outputs) {
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

void Scheduler::UpdateFromOutput(const proto::SchedulerOutput& scheduler_output,
                                 const proto::ModelRunnerOutput& model_output,
                                 std::vector<ClientOutputs>* outputs) {
  CHECK_EQ(&scheduler_output, &output_) << "UpdateFromOutput needs the output of the last Schedule()";
  std::fill(per_client_used_.begin(), per_client_used_.end(), 0);
  const size_t rows = std::min(model_output.req_ids.size(), model_output.sampled_token_ids.size());
  finished_handles_.clear();
  if (!grammar_failures_.empty()) EmitGrammarFailures();
  // Before the rows: a request whose KV failed to load drops this step's token.
  if (connector_ != nullptr) ApplyKVConnectorOutput(model_output);
  for (size_t row = 0; row < rows; ++row) {
    PrefetchRowsAhead(row, rows, model_output);
    const int32_t idx = LocateScheduled(row, model_output.req_ids[row]);
    if (row >= row_handle_.size()) row_handle_.resize(row + 1, -1);
    row_handle_[row] = idx < 0 ? -1 : decision_[idx].handle;
    if (idx < 0) continue;  // finished (e.g. aborted) since it was scheduled
    ApplySampled(decision_[idx].handle, row, decision_[idx].num_drafts, model_output);
  }
  if (!kv_load_failed_.empty()) FailKVLoads();

  if (!finished_handles_.empty()) {
    std::erase_if(running_, [this](int32_t h) { return requests_[h]->is_finished(); });
    for (int32_t h : finished_handles_) ReleaseFinished(h);
  }
  HandOverOutputs(outputs);
}

void Scheduler::TakeIdleOutputs(std::vector<ClientOutputs>* outputs) {
  std::fill(per_client_used_.begin(), per_client_used_.end(), 0);
  HandOverOutputs(outputs);
}

}  // namespace llmserve::engine_core
