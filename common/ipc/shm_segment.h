#pragma once
// ShmSegment: one POSIX shared-memory object (shm_open + mmap), owned by this
// process's mapping. The creator names it so that concurrent and crashed runs
// never collide ("/llmserve-<tag>-<pid>-<random>") and unlinks the name as soon
// as every peer has attached (Unlink), or at destruction at the latest, so a run
// that crashes after start-up leaves nothing in /dev/shm.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"
#include "base/status_or.h"

namespace llmserve::common::ipc {

class ShmSegment final {
 public:
  // Creates a new zero-filled segment of `size` bytes with a unique name built
  // from `tag`; this process owns the name (unlinks it at destruction).
  static StatusOr<std::unique_ptr<ShmSegment>> Create(std::string_view tag, size_t size);
  // Creates `name` exclusively (fails with kResourceExhausted if it exists).
  static StatusOr<std::unique_ptr<ShmSegment>> CreateNamed(const std::string& name, size_t size);
  // Maps an existing segment; its size must be exactly `expected_size`.
  static StatusOr<std::unique_ptr<ShmSegment>> Open(const std::string& name, size_t expected_size);

  ~ShmSegment();
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Removes the name (mappings stay valid); idempotent, no-op for non-owners
  // unless `force`.
  void Unlink(bool force = false);
  // Base address of the mapping.
  void* data() const { return data_; }
  // Mapped size in bytes.
  size_t size() const { return size_; }
  // The shm_open name ("/llmserve-...").
  const std::string& name() const { return name_; }

 private:
  ShmSegment(std::string name, void* data, size_t size, bool owner)
      : name_(std::move(name)), data_(data), size_(size), owner_(owner) {}

  std::string name_;
  void* data_;
  size_t size_;
  bool owner_;
  bool unlinked_ = false;
};

// A name for a new segment: "/llmserve-<tag>-<pid>-<16 hex random>".
std::string UniqueShmName(std::string_view tag);

}  // namespace llmserve::common::ipc
