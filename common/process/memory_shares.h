#pragma once
// Engines on one host split the memory their KV caches may take. Each engine
// holds a MemoryShare (a lease file "llmserve-memory-share-<pid>-<n>" in the
// runtime directory) while it runs; a CPU worker divides its memory fraction
// by CountMemoryShares() when it sizes the KV cache. So deployments started
// with the same runtime directory ($LLMSERVE_RUNTIME_DIR, else
// $XDG_RUNTIME_DIR, else /tmp) share the host instead of each claiming all of
// it. Engines count the shares after loading the model, by when the engines
// started beside them have taken theirs. Leases of processes that are gone
// are not counted (and are removed).

#include <memory>
#include <string>

#include "base/status_or.h"

namespace llmserve::common {

class MemoryShare final {
 public:
  // Takes a share in `dir` (empty: the runtime directory).
  static StatusOr<std::unique_ptr<MemoryShare>> Take(const std::string& dir = "");
  // Gives the share back.
  ~MemoryShare();
  MemoryShare(const MemoryShare&) = delete;
  MemoryShare& operator=(const MemoryShare&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit MemoryShare(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// The shares held by live processes in `dir` (empty: the runtime directory);
// at least 1, so a lone caller without a share gets the whole host.
size_t CountMemoryShares(const std::string& dir = "");

}  // namespace llmserve::common
