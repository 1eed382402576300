#pragma once
// ResponseStore: the stored /v1/responses answers (store: true, the default),
// by response id: the response object as POST /v1/responses returned it (for
// GET /v1/responses/{id}) and its conversation (for a request naming it as
// previous_response_id). In this process's memory only (each API server has
// its own), bounded: past `capacity` the oldest is forgotten.

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

  // Keeps, under `id`, `messages` (the chat messages up to and including the
  // answer, without the request's instructions) and `response` (the response object).
  void Put(const std::string& id, nlohmann::json messages, nlohmann::json response);

  // The messages stored under `id`, if still kept.
  std::optional<nlohmann::json> Get(const std::string& id) const;

  // The response object stored under `id`, if still kept.
  std::optional<nlohmann::json> GetResponse(const std::string& id) const;

 private:
  struct Stored {
    nlohmann::json messages;
    nlohmann::json response;
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Stored> stored_;
  std::deque<std::string> order_;  // ids, oldest first
};

}  // namespace llmserve::frontend::serving
