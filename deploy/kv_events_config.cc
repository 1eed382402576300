#include "deploy/kv_events_config.h"

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace llmserve::deploy {

namespace {

constexpr char kKVEventsPrefix[] = "--kv-events-config: ";
constexpr char kKVEventsKeys[] = "enable_kv_cache_events, publisher, endpoint, replay_endpoint, buffer_steps, hwm, "
                         "max_queue_size, topic";

Status KVEventsError(const std::string& message) { return Status::InvalidArgument(kKVEventsPrefix + message); }

Status KVEventsBool(const nlohmann::json& j, const char* key, bool* out) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_boolean()) return KVEventsError(std::string(key) + " must be true or false, got " + it->dump());
  *out = it->get<bool>();
  return Status::Ok();
}

// A string key; `nullable` also accepts null (read as "").
Status KVEventsString(const nlohmann::json& j, const char* key, bool nullable, std::string* out) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Ok();
  if (nullable && it->is_null()) {
    out->clear();
    return Status::Ok();
  }
  if (!it->is_string())
    return KVEventsError(std::string(key) + " must be a string" + (nullable ? " or null" : "") + ", got " + it->dump());
  *out = it->get<std::string>();
  return Status::Ok();
}

Status KVEventsCount(const nlohmann::json& j, const char* key, int64_t min, uint32_t* out) {
  auto it = j.find(key);
  if (it == j.end()) return Status::Ok();
  if (!it->is_number_integer() || it->get<int64_t>() < min ||
      it->get<int64_t>() > std::numeric_limits<int32_t>::max())
    return KVEventsError(std::string(key) + " must be an integer >= " + std::to_string(min) + ", got " + it->dump());
  *out = static_cast<uint32_t>(it->get<int64_t>());
  return Status::Ok();
}

}  // namespace

Status ParseKVEventsConfig(const std::string& json, proto::KVEventsConfig* out) {
  out->Clear();
  bool enable = false;
  std::string endpoint = "tcp://*:5557", replay, topic;
  uint32_t buffer_steps = 10000, hwm = 100000, max_queue_size = 100000;
  std::string publisher;
  bool publisher_set = false;
  if (!json.empty()) {
    const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object())
      return KVEventsError("must be a JSON object, such as '{\"enable_kv_cache_events\": true, \"publisher\": \"zmq\"}'");
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& key = it.key();
      if (key != "enable_kv_cache_events" && key != "publisher" && key != "endpoint" && key != "replay_endpoint" &&
          key != "buffer_steps" && key != "hwm" && key != "max_queue_size" && key != "topic")
        return KVEventsError("unknown key \"" + key + "\"; the keys are " + kKVEventsKeys);
    }
    LLMSERVE_RETURN_IF_ERROR(KVEventsBool(j, "enable_kv_cache_events", &enable));
    publisher_set = j.contains("publisher");
    LLMSERVE_RETURN_IF_ERROR(KVEventsString(j, "publisher", /*nullable=*/true, &publisher));
    LLMSERVE_RETURN_IF_ERROR(KVEventsString(j, "endpoint", /*nullable=*/false, &endpoint));
    LLMSERVE_RETURN_IF_ERROR(KVEventsString(j, "replay_endpoint", /*nullable=*/true, &replay));
    LLMSERVE_RETURN_IF_ERROR(KVEventsCount(j, "buffer_steps", 0, &buffer_steps));
    LLMSERVE_RETURN_IF_ERROR(KVEventsCount(j, "hwm", 0, &hwm));
    LLMSERVE_RETURN_IF_ERROR(KVEventsCount(j, "max_queue_size", 1, &max_queue_size));
    LLMSERVE_RETURN_IF_ERROR(KVEventsString(j, "topic", /*nullable=*/false, &topic));
  }
  if (!publisher_set) publisher = enable ? "zmq" : "null";
  if (publisher.empty()) publisher = "null";
  if (publisher != "zmq" && publisher != "null")
    return KVEventsError("publisher must be \"zmq\" or null, got \"" + publisher + "\"");
  if (enable && publisher == "zmq" && endpoint.empty()) return KVEventsError("endpoint must not be empty");
  out->set_enable_kv_cache_events(enable);
  out->set_publisher(publisher);
  out->set_endpoint(endpoint);
  out->set_replay_endpoint(replay);
  out->set_buffer_steps(buffer_steps);
  out->set_hwm(hwm);
  out->set_max_queue_size(max_queue_size);
  out->set_topic(topic);
  return Status::Ok();
}

}  // namespace llmserve::deploy
