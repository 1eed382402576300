// Scheduler, part 2: the step's decision as the SchedulerOutput diff the
// workers read (new requests in full, running ones as changes only), with the
// num_scheduled_tokens map kept across steps so steady decode rewrites counts
// instead of rebuilding nodes. See scheduler.h.
#include <glog/logging.h>

#include "engine_core/scheduler.h"

namespace llmserve::engine_core {

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
      n.pooling_params = r.pooling_params;
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
      // Drafts are not tokens yet: they travel in scheduled_spec_decode_tokens.
      const int32_t known = s.num_computed_before + s.num_tokens - s.num_drafts;
      c.all_token_ids[r.request_id].assign(all.begin(), all.begin() + known);
    }
    ++ci;
  }
  o.total_num_scheduled_tokens = total;
  o.scheduled_spec_decode_tokens.clear();
  for (size_t i = 0; config_.num_speculative_tokens > 0 && i < decision_.size(); ++i) {
    const Scheduled& s = decision_[i];
    if (s.num_drafts == 0) continue;
    const std::vector<int32_t>& drafts = requests_[s.handle]->spec_token_ids;
    o.scheduled_spec_decode_tokens[requests_[s.handle]->request_id].assign(drafts.begin(),
                                                                          drafts.begin() + s.num_drafts);
  }
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

}  // namespace llmserve::engine_core
