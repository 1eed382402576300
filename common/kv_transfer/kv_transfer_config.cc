#include "common/kv_transfer/kv_transfer_config.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <random>

namespace llmserve::common {

namespace {

constexpr char kPrefix[] = "--kv-transfer-config: ";
constexpr char kKeys[] =
    "kv_connector, kv_role, engine_id, kv_buffer_device, kv_buffer_size, kv_rank, kv_parallel_size, kv_ip, kv_port, "
    "kv_connector_extra_config, kv_connector_module_path, kv_load_failure_policy, enable_permute_local_kv";

// vLLM's connectors (0.11 and main) that llmserve does not have yet.
constexpr const char* kNotImplemented[] = {
    "P2pNcclConnector",  "LMCacheConnectorV1", "LMCacheMPConnector",  "NixlConnector",
    "MultiConnector",    "OffloadingConnector", "DecodeBenchConnector", "MooncakeConnector",
    "MoRIIOConnector",   "ExampleHiddenStatesConnector", "MooncakeStoreConnector", "FlexKVConnectorV1",
    "SimpleCPUOffloadConnector", "HF3FSKVConnector",
};

Status Error(const std::string& message) { return Status::InvalidArgument(kPrefix + message); }

// Reads optional key `key` with `read` unless it is absent or (when `nullable`) null.
template <typename ReadFn>
Status Optional(const nlohmann::json& j, const char* key, bool nullable, ReadFn read) {
  auto it = j.find(key);
  if (it == j.end() || (nullable && it->is_null())) return Status::Ok();
  return read(*it);
}

Status ReadString(const nlohmann::json& v, const char* key, std::string* out) {
  if (!v.is_string()) return Error(std::string(key) + " must be a string, got " + v.dump());
  *out = v.get<std::string>();
  return Status::Ok();
}

Status ReadInt(const nlohmann::json& v, const char* key, int64_t min, int64_t max, int32_t* out) {
  if (!v.is_number_integer() || v.get<int64_t>() < min || v.get<int64_t>() > max)
    return Error(std::string(key) + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                 "], got " + v.dump());
  *out = static_cast<int32_t>(v.get<int64_t>());
  return Status::Ok();
}

StatusOr<KVRole> ParseRole(const std::string& role) {
  if (role == "kv_producer") return KVRole::kProducer;
  if (role == "kv_consumer") return KVRole::kConsumer;
  if (role == "kv_both") return KVRole::kBoth;
  return Error("kv_role must be kv_producer, kv_consumer or kv_both, got \"" + role + "\"");
}

Status CheckConnector(const std::string& name) {
  const auto& implemented = ImplementedKVConnectors();
  if (std::find(implemented.begin(), implemented.end(), name) != implemented.end()) return Status::Ok();
  std::string list;
  for (const std::string& n : implemented) list += (list.empty() ? "" : ", ") + n;
  for (const char* n : kNotImplemented) {
    if (name == n) return Error("kv_connector \"" + name + "\" is not implemented yet; llmserve has " + list);
  }
  return Error("unknown kv_connector \"" + name + "\"; llmserve has " + list);
}

}  // namespace

std::string_view KVRoleName(KVRole role) {
  switch (role) {
    case KVRole::kProducer: return "kv_producer";
    case KVRole::kConsumer: return "kv_consumer";
    case KVRole::kBoth: return "kv_both";
  }
  return "kv_both";
}

const std::vector<std::string>& ImplementedKVConnectors() {
  // ExampleConnector is vLLM main's name for SharedStorageConnector (#30201).
  static const std::vector<std::string> names = {"SharedStorageConnector", "ExampleConnector"};
  return names;
}

std::string RandomUuid4() {
  std::random_device device;
  std::mt19937_64 rng((static_cast<uint64_t>(device()) << 32) ^ device());
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~uint64_t{0xf000}) | 0x4000;                      // version 4
  lo = (lo & ~(uint64_t{0xc} << 60)) | (uint64_t{0x8} << 60);  // variant 10xx
  char text[37];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48), static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return text;
}

StatusOr<std::string> KVTransferConfig::ExtraString(const std::string& key, const std::string& fallback) const {
  auto it = kv_connector_extra_config.find(key);
  if (it == kv_connector_extra_config.end() || it->is_null()) return fallback;
  if (!it->is_string())
    return Error("kv_connector_extra_config." + key + " must be a string, got " + it->dump());
  return it->get<std::string>();
}

StatusOr<KVTransferConfig> ParseKVTransferConfig(std::string_view json) {
  KVTransferConfig c;
  if (json.empty()) return c;
  const nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    return Error("must be a JSON object, such as '{\"kv_connector\": \"SharedStorageConnector\", \"kv_role\": "
                 "\"kv_both\"}'");
  static const std::vector<std::string> kKnown = {
      "kv_connector", "kv_role", "engine_id", "kv_buffer_device", "kv_buffer_size", "kv_rank", "kv_parallel_size",
      "kv_ip", "kv_port", "kv_connector_extra_config", "kv_connector_module_path", "kv_load_failure_policy",
      "enable_permute_local_kv"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(kKnown.begin(), kKnown.end(), it.key()) == kKnown.end())
      return Error("unknown key \"" + it.key() + "\"; the keys are " + kKeys);
  }
  std::optional<std::string> role;
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_connector", true, [&](const nlohmann::json& v) {
    return ReadString(v, "kv_connector", &c.kv_connector);
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_role", true, [&](const nlohmann::json& v) {
    return ReadString(v, "kv_role", &role.emplace());
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "engine_id", true, [&](const nlohmann::json& v) {
    return ReadString(v, "engine_id", &c.engine_id);
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_buffer_device", true, [&](const nlohmann::json& v) {
    LLMSERVE_RETURN_IF_ERROR(ReadString(v, "kv_buffer_device", &c.kv_buffer_device));
    if (c.kv_buffer_device != "cpu" && c.kv_buffer_device != "cuda")
      return Error("kv_buffer_device must be cpu or cuda, got \"" + c.kv_buffer_device + "\"");
    return Status::Ok();
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_buffer_size", false, [&](const nlohmann::json& v) {
    if (!v.is_number() || v.get<double>() <= 0)
      return Error("kv_buffer_size must be a positive number, got " + v.dump());
    c.kv_buffer_size = v.get<double>();
    return Status::Ok();
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_rank", true, [&](const nlohmann::json& v) {
    return ReadInt(v, "kv_rank", 0, std::numeric_limits<int32_t>::max(), &c.kv_rank.emplace());
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_parallel_size", false, [&](const nlohmann::json& v) {
    return ReadInt(v, "kv_parallel_size", 1, std::numeric_limits<int32_t>::max(), &c.kv_parallel_size);
  }));
  LLMSERVE_RETURN_IF_ERROR(
      Optional(j, "kv_ip", false, [&](const nlohmann::json& v) { return ReadString(v, "kv_ip", &c.kv_ip); }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_port", false, [&](const nlohmann::json& v) {
    return ReadInt(v, "kv_port", 0, 65535, &c.kv_port);
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_connector_extra_config", true, [&](const nlohmann::json& v) {
    if (!v.is_object()) return Error("kv_connector_extra_config must be a JSON object, got " + v.dump());
    c.kv_connector_extra_config = v;
    return Status::Ok();
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_connector_module_path", true, [&](const nlohmann::json& v) {
    return Error("kv_connector_module_path names a Python module, and llmserve runs none; got " + v.dump());
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "kv_load_failure_policy", false, [&](const nlohmann::json& v) {
    std::string policy;
    LLMSERVE_RETURN_IF_ERROR(ReadString(v, "kv_load_failure_policy", &policy));
    if (policy == "recompute") c.kv_load_failure_policy = KVLoadFailurePolicy::kRecompute;
    else if (policy == "fail") c.kv_load_failure_policy = KVLoadFailurePolicy::kFail;
    else return Error("kv_load_failure_policy must be recompute or fail, got \"" + policy + "\"");
    return Status::Ok();
  }));
  LLMSERVE_RETURN_IF_ERROR(Optional(j, "enable_permute_local_kv", false, [&](const nlohmann::json& v) {
    if (!v.is_boolean()) return Error("enable_permute_local_kv must be true or false, got " + v.dump());
    if (v.get<bool>()) return Error("enable_permute_local_kv (a NIXL layout option) is not supported");
    return Status::Ok();
  }));

  if (role) {
    LLMSERVE_ASSIGN_OR_RETURN(c.kv_role, ParseRole(*role));
  }
  if (c.kv_connector.empty()) return c;  // the other keys do nothing without a connector
  LLMSERVE_RETURN_IF_ERROR(CheckConnector(c.kv_connector));
  if (!role) return Error("kv_role is required with a kv_connector (kv_producer, kv_consumer or kv_both)");
  if (c.engine_id.empty()) c.engine_id = RandomUuid4();
  return c;
}

std::string KVTransferConfigToJson(const KVTransferConfig& c) {
  nlohmann::json j;
  j["kv_connector"] = c.kv_connector.empty() ? nlohmann::json() : nlohmann::json(c.kv_connector);
  j["kv_role"] = c.kv_connector.empty() ? nlohmann::json() : nlohmann::json(std::string(KVRoleName(c.kv_role)));
  j["engine_id"] = c.engine_id.empty() ? nlohmann::json() : nlohmann::json(c.engine_id);
  j["kv_buffer_device"] = c.kv_buffer_device.empty() ? nlohmann::json() : nlohmann::json(c.kv_buffer_device);
  j["kv_buffer_size"] = c.kv_buffer_size;
  j["kv_rank"] = c.kv_rank ? nlohmann::json(*c.kv_rank) : nlohmann::json();
  j["kv_parallel_size"] = c.kv_parallel_size;
  j["kv_ip"] = c.kv_ip;
  j["kv_port"] = c.kv_port;
  j["kv_connector_extra_config"] = c.kv_connector_extra_config;
  j["kv_load_failure_policy"] = c.kv_load_failure_policy == KVLoadFailurePolicy::kFail ? "fail" : "recompute";
  return j.dump();
}

}  // namespace llmserve::common
