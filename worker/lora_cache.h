#pragma once
// LoraCache: the LoRA adapters a worker may serve (name -> PEFT directory)
// and the ones resident in its model, at most `capacity` (--max-cpu-loras,
// vLLM's LRUCacheWorkerLoRAManager). Loading one more evicts the least
// recently used resident adapter that no request holds; an evicted adapter
// is read again from its directory when a request names it. An adapter a
// request holds is never evicted: when every resident one is held the cache
// grows past its capacity until they are released.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "worker/lora_adapter.h"

namespace llmserve::worker {

class Model;

class LoraCache {
 public:
  // `capacity` 0: no limit. `model` must outlive the cache.
  LoraCache(Model* model, LoraLimits limits, size_t capacity) : model_(model), limits_(limits), capacity_(capacity) {}

  // Registers `name` for `dir` and reads it now (so a bad adapter is refused
  // here, not at a request's step). A name already registered is an error,
  // and so is one whose removed copy a request still holds.
  Status Add(const std::string& name, const std::string& dir);
  // Forgets `name` (NotFound if not registered): new requests may no longer
  // use it; its resident copy is freed once no request holds it.
  Status Remove(const std::string& name);
  bool Registered(const std::string& name) const { return known_.count(name) != 0; }

  // The model slot of `name` for a new request, reading the adapter again if
  // it was evicted; the request holds it until Release(slot).
  StatusOr<int32_t> Acquire(const std::string& name);
  // A request holding `slot` ended (or was replaced); -1 is ignored.
  void Release(int32_t slot);

  // The resident adapters' names (registered or still held), sorted.
  std::vector<std::string> Resident() const;

 private:
  struct Entry {
    std::string name;
    int32_t holders = 0;    // requests using it
    uint64_t last_use = 0;  // clock_ at its last Acquire or load
    bool registered = true;
  };
  // Reads `name` from `dir` into the model, then evicts down to the capacity.
  StatusOr<int32_t> Load(const std::string& name, const std::string& dir);
  // Evicts least recently used unheld adapters (never `keep`) while over the capacity.
  void EvictOverCapacity(int32_t keep);
  void Drop(int32_t slot);

  Model* model_;
  LoraLimits limits_;
  size_t capacity_;
  std::map<std::string, std::string> known_;  // registered name -> directory
  std::map<int32_t, Entry> resident_;      // model slot -> state
  uint64_t clock_ = 0;
};

}  // namespace llmserve::worker
