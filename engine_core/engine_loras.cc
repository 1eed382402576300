#include "engine_core/engine_loras.h"

#include <algorithm>

#include <glog/logging.h>

namespace llmserve::engine_core {

void EngineLoras::AddStartup(const LoraAdapterInfo& adapter) {
  served_[adapter.name] = Entry{adapter, adapter.name, next_order_++};
  loads_[adapter.name] = 1;
}

Status EngineLoras::Add(const LoraAdapterInfo& adapter, Executor& executor) {
  if (served_.count(adapter.name) != 0)
    return Status::InvalidArgument("The lora adapter '" + adapter.name + "' has already been loaded.");
  uint64_t loads = loads_[adapter.name];
  std::string key = loads == 0 ? adapter.name : adapter.name + "#" + std::to_string(loads);
  while (KeyTaken(key)) key = adapter.name + "#" + std::to_string(++loads);  // another adapter's name
  LLMSERVE_RETURN_IF_ERROR(executor.AddLora(key, adapter.path));
  loads_[adapter.name] = loads + 1;
  served_[adapter.name] = Entry{adapter, key, next_order_++};
  return Status::Ok();
}

bool EngineLoras::KeyTaken(const std::string& key) const {
  for (const auto& [name, e] : served_)
    if (e.key == key || name == key) return true;
  return std::find(unloaded_keys_.begin(), unloaded_keys_.end(), key) != unloaded_keys_.end();
}

Status EngineLoras::Remove(const std::string& name) {
  auto it = served_.find(name);
  if (it == served_.end()) return Status::NotFound("The lora adapter '" + name + "' cannot be found.");
  unloaded_keys_.push_back(it->second.key);
  served_.erase(it);
  return Status::Ok();
}

StatusOr<std::string> EngineLoras::KeyFor(const std::string& name) const {
  auto it = served_.find(name);
  if (it == served_.end()) return Status::NotFound("The model `" + name + "` does not exist.");
  return it->second.key;
}

void EngineLoras::ReleaseUnused(const std::function<bool(const std::string& key)>& in_use, Executor& executor) {
  std::vector<std::string> kept;
  for (const auto& key : unloaded_keys_) {
    if (in_use(key)) {
      kept.push_back(key);
      continue;
    }
    if (Status s = executor.RemoveLora(key); !s.ok())
      LOG(WARNING) << "releasing unloaded LoRA adapter '" << key << "': " << s.message();
    else
      LOG(INFO) << "unloaded LoRA adapter '" << key << "' released: no request uses it any more";
  }
  unloaded_keys_ = std::move(kept);
}

std::vector<LoraAdapterInfo> EngineLoras::List() const {
  std::vector<const Entry*> entries;
  for (const auto& [name, e] : served_) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(), [](const Entry* a, const Entry* b) { return a->order < b->order; });
  std::vector<LoraAdapterInfo> out;
  for (const Entry* e : entries) out.push_back(e->info);
  return out;
}

}  // namespace llmserve::engine_core
