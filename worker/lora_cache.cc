#include "worker/lora_cache.h"

#include <algorithm>

#include "worker/model.h"

namespace llmserve::worker {

Status LoraCache::Add(const std::string& name, const std::string& dir) {
  if (known_.count(name) != 0) return Status::InvalidArgument("a LoRA adapter named '" + name + "' is already loaded");
  if (model_->LoraSlot(name) >= 0)
    return Status::InvalidArgument("LoRA adapter '" + name + "' was removed but requests still use it");
  LLMSERVE_ASSIGN_OR_RETURN(int32_t slot, Load(name, dir));
  (void)slot;
  known_[name] = dir;
  return Status::Ok();
}

Status LoraCache::Remove(const std::string& name) {
  if (known_.erase(name) == 0) return Status::NotFound("no LoRA adapter named '" + name + "' is loaded");
  const int32_t slot = model_->LoraSlot(name);
  auto it = resident_.find(slot);
  if (it == resident_.end()) return Status::Ok();
  it->second.registered = false;
  if (it->second.holders == 0) Drop(slot);
  return Status::Ok();
}

StatusOr<int32_t> LoraCache::Acquire(const std::string& name) {
  auto known = known_.find(name);
  if (known == known_.end()) return Status::NotFound("no LoRA adapter named '" + name + "' is loaded");
  int32_t slot = model_->LoraSlot(name);
  if (slot < 0) {
    auto loaded = Load(name, known->second);
    if (!loaded.ok()) return loaded.status().WithContext("reloading evicted LoRA adapter '" + name + "'");
    slot = *loaded;
  }
  Entry& r = resident_[slot];
  ++r.holders;
  r.last_use = ++clock_;
  return slot;
}

void LoraCache::Release(int32_t slot) {
  auto it = resident_.find(slot);
  if (it == resident_.end()) return;
  if (--it->second.holders <= 0) {
    it->second.holders = 0;
    if (!it->second.registered) Drop(slot);
    else EvictOverCapacity(-1);  // it may have grown past its capacity while every adapter was held
  }
}

std::vector<std::string> LoraCache::Resident() const {
  std::vector<std::string> names;
  for (const auto& [slot, r] : resident_) names.push_back(r.name);
  std::sort(names.begin(), names.end());
  return names;
}

StatusOr<int32_t> LoraCache::Load(const std::string& name, const std::string& dir) {
  // Read first, so that a bad adapter evicts nothing.
  LLMSERVE_ASSIGN_OR_RETURN(int32_t slot, model_->LoadLoraAdapter(name, dir, limits_));
  resident_[slot] = Entry{name, 0, ++clock_, true};
  EvictOverCapacity(slot);
  return slot;
}

void LoraCache::EvictOverCapacity(int32_t keep) {
  while (capacity_ > 0 && resident_.size() > capacity_) {
    auto victim = resident_.end();
    for (auto it = resident_.begin(); it != resident_.end(); ++it) {
      if (it->first == keep || it->second.holders > 0) continue;
      if (victim == resident_.end() || it->second.last_use < victim->second.last_use)
        victim = it;
    }
    if (victim == resident_.end()) return;  // every resident adapter is in use: grow past the capacity
    Drop(victim->first);
  }
}

void LoraCache::Drop(int32_t slot) {
  auto it = resident_.find(slot);
  (void)model_->RemoveLoraAdapter(it->second.name);
  resident_.erase(it);
}

}  // namespace llmserve::worker
