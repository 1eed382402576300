#pragma once
// ResponseStore: the conversations of stored /v1/responses answers (store:
// true, the default), by response id, so that a request naming one as
// previous_response_id continues it. In this process's memory only (each API
// server has its own), bounded: past `capacity` the oldest is forgotten.

#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace llmserve::frontend::serving {

class ResponseStore {
 public:
  explicit ResponseStore(size_t capacity = 4096) : capacity_(capacity) {}

  // Keeps `messages` (the chat messages up to and including the answer,
  // without the request's instructions) under `id`.
  void Put(const std::string& id, nlohmann::json messages);

  // The messages stored under `id`, if still kept.
  std::optional<nlohmann::json> Get(const std::string& id) const;

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, nlohmann::json> conversations_;
  std::deque<std::string> order_;  // ids, oldest first
};

}  // namespace llmserve::frontend::serving
