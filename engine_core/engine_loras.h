#pragma once
// EngineLoras: the LoRA adapters one engine serves, by the name requests use
// (vLLM's EngineCore add_lora / remove_lora / list_loras). Each load gets a
// worker key: the name itself the first time, "name#N" when the name is
// loaded again after an unload. Requests travel to the workers and into the
// block hashes with the key, so a request still running with the unloaded
// adapter keeps it, and no prefix-cache block computed with one adapter is
// reused for another of the same name.
//
// An unloaded adapter's key stays on the workers until no request of the
// scheduler uses it (ReleaseUnused, after each step): a request accepted
// before the unload runs to its end with the adapter it started with.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status_or.h"
#include "engine_core/executor.h"

namespace llmserve::engine_core {

struct LoraAdapterInfo {
  std::string name;             // what requests name
  std::string path;             // the PEFT directory
  std::string base_model_name;  // "" : the served model
};

class EngineLoras {
 public:
  // Adapters the workers loaded at start (--lora-modules): key = name.
  void AddStartup(const LoraAdapterInfo& adapter);
  // Loads `adapter` on the workers under a fresh key. A name already served
  // is InvalidArgument; the executor's error (a bad path or adapter) as is.
  Status Add(const LoraAdapterInfo& adapter, Executor& executor);
  // Stops serving `name` (NotFound if not served); its key is released once unused.
  Status Remove(const std::string& name);
  // The worker key of adapter `name` for a new request; NotFound with
  // vLLM's unknown-model message otherwise.
  StatusOr<std::string> KeyFor(const std::string& name) const;
  // Removes from the workers every unloaded key for which `in_use` is false.
  void ReleaseUnused(const std::function<bool(const std::string& key)>& in_use, Executor& executor);
  bool has_unreleased() const { return !unloaded_keys_.empty(); }
  // The adapters served now, in load order.
  std::vector<LoraAdapterInfo> List() const;

 private:
  struct Entry {
    LoraAdapterInfo info;
    std::string key;
    uint64_t order = 0;
  };
  // A worker key in use, or a served adapter's name (which a later load of it takes).
  bool KeyTaken(const std::string& key) const;

  std::map<std::string, Entry> served_;         // by name
  std::map<std::string, uint64_t> loads_;       // times each name was loaded
  std::vector<std::string> unloaded_keys_;      // on the workers, no longer served
  uint64_t next_order_ = 0;
};

}  // namespace llmserve::engine_core
