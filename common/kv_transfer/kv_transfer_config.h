#pragma once
// --kv-transfer-config: vLLM's KVTransferConfig (vllm/config/kv_transfer.py),
// which picks a KV connector and its role. The launcher parses the flag once
// (filling defaults, e.g. a random engine_id) and hands every engine and
// worker the normalized JSON, which they parse again with the same function.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status_or.h"

namespace llmserve::common {

// vLLM's kv_role.
enum class KVRole : uint8_t {
  kProducer,  // kv_producer: computes KV and hands it on (prefill instance)
  kConsumer,  // kv_consumer: takes KV from elsewhere (decode instance)
  kBoth,      // kv_both: either, per request
};

// "kv_producer", "kv_consumer", "kv_both".
std::string_view KVRoleName(KVRole role);

// What to do with a request whose external KV failed to load (vLLM main's
// kv_load_failure_policy). vLLM main defaults to kFail; vLLM 0.11 always
// recomputed, and so does llmserve by default.
enum class KVLoadFailurePolicy : uint8_t {
  kRecompute,  // compute the tokens whose KV did not arrive, then go on
  kFail,       // finish the request with an error
};

struct KVTransferConfig {
  std::string kv_connector;  // the connector's name; empty: no connector
  KVRole kv_role = KVRole::kBoth;
  std::string engine_id;                 // this deployment's id (a random uuid4 unless given)
  std::string kv_buffer_device;          // where transfer buffers live: cpu, cuda; empty = the workers' device
  double kv_buffer_size = 1e9;           // bytes of transfer buffer (connectors that use one)
  std::optional<int32_t> kv_rank;        // this instance's rank among kv_parallel_size (P2P connectors)
  int32_t kv_parallel_size = 1;
  std::string kv_ip = "127.0.0.1";  // P2P connectors: where to meet
  int32_t kv_port = 14579;
  nlohmann::json kv_connector_extra_config = nlohmann::json::object();  // connector-specific keys
  KVLoadFailurePolicy kv_load_failure_policy = KVLoadFailurePolicy::kRecompute;

  // Whether a connector is configured.
  bool enabled() const { return !kv_connector.empty(); }
  // kv_producer or kv_both: this instance's KV may be saved or sent.
  bool is_producer() const { return kv_role != KVRole::kConsumer; }
  // kv_consumer or kv_both: this instance may load KV computed elsewhere.
  bool is_consumer() const { return kv_role != KVRole::kProducer; }
  // kv_connector_extra_config[key] as a string, `fallback` when absent; an
  // error when present but not a string.
  StatusOr<std::string> ExtraString(const std::string& key, const std::string& fallback) const;
};

// Parses `json` with vLLM's keys. Empty `json` (or {"kv_connector": null}):
// no connector. Errors name the key: unknown keys, wrong types, a connector
// without kv_role, a role other than kv_producer / kv_consumer / kv_both, a
// connector llmserve does not have (vLLM's other connectors are named as not
// implemented yet), and kv_connector_module_path (no Python modules here).
StatusOr<KVTransferConfig> ParseKVTransferConfig(std::string_view json);

// The config as JSON with every key set; ParseKVTransferConfig reads it back
// to an equal config.
std::string KVTransferConfigToJson(const KVTransferConfig& config);

// The connectors llmserve implements (vLLM's names).
const std::vector<std::string>& ImplementedKVConnectors();

// A random RFC 4122 version-4 uuid, as vLLM's default engine_id.
std::string RandomUuid4();

}  // namespace llmserve::common
