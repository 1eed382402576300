// Scheduler, KV connector hooks (vLLM's scheduler with a KVConnector): the
// admission of requests whose KV a connector supplies, the per-step metadata,
// the workers' reports of finished transfers and failed loads, and blocks
// held past a request's finish. See scheduler.h and
// engine_core/kv_connector/kv_connector_scheduler.h.
//
// Blocks that receive loaded KV enter the prefix cache only once the workers'
// report shows the load worked, so no other request can reuse a block that
// failed to load; a request whose load failed recomputes from its first bad
// block (or, under the fail policy, finishes with an error) and never asks
// the connector again.
#include <algorithm>
#include <unordered_set>

#include <glog/logging.h>

#include "engine_core/scheduler.h"

namespace llmserve::engine_core {

void Scheduler::SetKVConnector(std::unique_ptr<KVConnectorScheduler> connector, common::KVLoadFailurePolicy policy) {
  CHECK(requests_.empty()) << "the KV connector must be set before the first request";
  connector_ = std::move(connector);
  kv_failure_policy_ = policy;
}

void Scheduler::AdmittedWithConnector(Request& r, int32_t end_token, int32_t num_external, bool load_async) {
  connector_->UpdateStateAfterAlloc(r, r.block_ids, num_external);
  r.num_external_computed_tokens = num_external;
  if (num_external > 0) {
    ++kv_counters_.loaded_requests;
    kv_counters_.loaded_tokens += num_external;
  }
  if (load_async) {
    r.status = RequestStatus::kWaitingForRemoteKVs;
  } else if (num_external > 0) {
    loaded_this_step_.push_back(PendingLoad{r.handle, r.sequence_number, end_token, num_external});
  }
}

bool Scheduler::PromoteLoadedRequest(Request& r) {
  auto it = finished_recving_.find(r.request_id);
  if (it == finished_recving_.end()) return false;
  finished_recving_.erase(it);
  if (r.num_computed_tokens == 0) {
    kv_.Free(r);  // nothing arrived that is worth keeping: start over
  } else {
    kv_.CacheBlocks(r, r.num_computed_tokens);
  }
  r.status = r.num_preemptions > 0 ? RequestStatus::kPreempted : RequestStatus::kWaiting;
  return true;
}

void Scheduler::BuildKVConnectorMeta() {
  connector_scheduled_.clear();
  for (const Scheduled& s : decision_) {
    connector_scheduled_.push_back(ScheduledRequest{requests_[s.handle].get(), s.num_computed_before, s.num_tokens});
  }
  output_.kv_connector_metadata = connector_->BuildConnectorMeta(output_, connector_scheduled_);
}

void Scheduler::ApplyKVConnectorOutput(const proto::ModelRunnerOutput& model_output) {
  if (model_output.kv_connector_output) {
    const proto::KVConnectorOutput& o = *model_output.kv_connector_output;
    connector_->UpdateConnectorOutput(o);
    if (!o.invalid_block_ids.empty()) HandleInvalidBlocks(o.invalid_block_ids);
    for (const std::string& id : o.finished_recving) {
      if (held_blocks_.count(id) != 0) {
        FreeHeldBlocks(id);  // finished while its load was in flight
        continue;
      }
      auto h = id_to_handle_.find(id);
      if (h != id_to_handle_.end() && requests_[h->second]->status == RequestStatus::kWaitingForRemoteKVs)
        finished_recving_.insert(id);
    }
    for (const std::string& id : o.finished_sending) {
      if (held_blocks_.count(id) != 0) FreeHeldBlocks(id);
    }
  }
  // The synchronous loads that did not fail: their blocks may be shared now.
  for (const PendingLoad& p : loaded_this_step_) {
    Request* r = requests_[p.handle].get();
    if (r == nullptr || r->sequence_number != p.sequence_number || r->kv_load_failed) continue;
    kv_.CacheBlocks(*r, r->num_computed_tokens);
  }
  loaded_this_step_.clear();
}

void Scheduler::HandleInvalidBlocks(const std::vector<int32_t>& invalid_block_ids) {
  const std::unordered_set<int32_t> invalid(invalid_block_ids.begin(), invalid_block_ids.end());
  const int32_t bs = kv_.config().block_size;
  // The index of r's first block among its first `tokens` tokens that failed to load, or -1.
  auto first_invalid = [&](const Request& r, int32_t tokens) {
    const auto blocks = std::min<size_t>(static_cast<size_t>((tokens + bs - 1) / bs), r.block_ids.size());
    for (size_t i = 0; i < blocks; ++i)
      if (invalid.count(r.block_ids[i]) != 0) return static_cast<int32_t>(i);
    return -1;
  };
  auto roll_back = [&](Request& r, int32_t end_token, int32_t num_external, int32_t bad_block) {
    const int32_t keep = bad_block * bs;
    const int32_t first_loaded = end_token - num_external;
    kv_counters_.failed_loads += 1;
    kv_counters_.recomputed_tokens += end_token - std::max(keep, first_loaded);
    LOG(WARNING) << "request " << r.request_id << ": KV for tokens [" << std::max(keep, first_loaded) << ", "
                 << end_token << ") failed to load; "
                 << (kv_failure_policy_ == common::KVLoadFailurePolicy::kFail ? "failing it" : "recomputing them");
    r.kv_load_failed = true;
    r.num_computed_tokens = keep;
    r.num_external_computed_tokens = std::max(0, keep - first_loaded);
    if (r.num_cached_tokens > keep) r.num_cached_tokens = keep;
    if (kv_failure_policy_ == common::KVLoadFailurePolicy::kFail) kv_load_failed_.push_back(r.handle);
  };
  // Synchronous loads of this step: the request ran on whatever its blocks
  // held, so this step's token is dropped (its computed tokens fall below
  // its length) and it computes again from the first bad block.
  for (const PendingLoad& p : loaded_this_step_) {
    Request* r = requests_[p.handle].get();
    if (r == nullptr || r->sequence_number != p.sequence_number) continue;
    const int32_t bad = first_invalid(*r, p.end_token);
    if (bad >= 0) roll_back(*r, p.end_token, p.num_external, bad);
  }
  // Asynchronous loads still waiting: they keep what arrived before the bad block.
  for (const auto& r : requests_) {
    if (r == nullptr || r->status != RequestStatus::kWaitingForRemoteKVs) continue;
    const int32_t bad = first_invalid(*r, r->num_computed_tokens);
    if (bad >= 0) roll_back(*r, r->num_computed_tokens, r->num_external_computed_tokens, bad);
  }
}

void Scheduler::FailKVLoads() {
  for (int32_t h : kv_load_failed_) {
    Request& r = *requests_[h];
    if (r.is_finished()) continue;
    if (r.status == RequestStatus::kWaitingForRemoteKVs) {
      HoldBlocksOfUnfinishedLoad(r);
      CHECK(waiting_.Remove(h));
    }
    r.status = RequestStatus::kFinishedError;
    proto::EngineCoreOutput& out = NextOutput(r.client_index);
    out.request_id.assign(r.request_id);
    out.new_token_ids.clear();
    out.finish_reason = proto::FinishReason::kError;
    out.error_code = StatusCode::kUnavailable;
    out.error_message = "the KV cache of request " + r.request_id +
                        " failed to load from the KV connector (kv_load_failure_policy fail)";
    out.kv_transfer_params = NotifyConnectorFinished(r);
    finished_handles_.push_back(h);
  }
  kv_load_failed_.clear();
}

proto::EncodedValue Scheduler::NotifyConnectorFinished(Request& r) {
  if (r.connector_finished) return {};
  r.connector_finished = true;
  FinishedTransfer f = connector_->RequestFinished(r, r.block_ids);
  if (f.delay_free_blocks) r.hold_blocks = true;
  return std::move(f.kv_transfer_params);
}

void Scheduler::HoldBlocksOfUnfinishedLoad(Request& r) {
  // A load reported done but not yet promoted writes nothing more.
  if (finished_recving_.erase(r.request_id) == 0) r.hold_blocks = true;
}

void Scheduler::HoldFinishedBlocks(std::unique_ptr<Request> r) {
  std::string id = r->request_id;
  held_blocks_.emplace(std::move(id), std::move(r));
}

void Scheduler::FreeHeldBlocks(const std::string& request_id) {
  auto it = held_blocks_.find(request_id);
  if (it == held_blocks_.end()) return;
  kv_.Free(*it->second);
  held_blocks_.erase(it);
}

}  // namespace llmserve::engine_core
