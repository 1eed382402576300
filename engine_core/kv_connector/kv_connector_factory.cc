#include "engine_core/kv_connector/kv_connector_factory.h"

#include <glog/logging.h>

#include "engine_core/kv_connector/shared_storage_connector_scheduler.h"

namespace llmserve::engine_core {

StatusOr<std::unique_ptr<KVConnectorScheduler>> CreateKVConnectorScheduler(const common::KVTransferConfig& config,
                                                                           int32_t block_size, size_t tp_size) {
  if (!config.enabled()) return std::unique_ptr<KVConnectorScheduler>();
  if (config.kv_connector == "SharedStorageConnector" || config.kv_connector == "ExampleConnector") {
    // vLLM's default path, "/tmp", is kept; give your own.
    LLMSERVE_ASSIGN_OR_RETURN(std::string root, config.ExtraString("shared_storage_path", "/tmp"));
    LOG(INFO) << config.kv_connector << " (" << common::KVRoleName(config.kv_role) << "): shared storage path "
              << root;
    return std::unique_ptr<KVConnectorScheduler>(std::make_unique<SharedStorageConnectorScheduler>(
        root, block_size, tp_size, config.is_producer(), config.is_consumer()));
  }
  return Status::InvalidArgument("--kv-transfer-config: no KV connector \"" + config.kv_connector + "\"");
}

}  // namespace llmserve::engine_core
