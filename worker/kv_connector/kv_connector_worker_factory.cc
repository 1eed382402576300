#include "worker/kv_connector/kv_connector_worker_factory.h"

#include "worker/kv_connector/shared_storage_connector_worker.h"

namespace llmserve::worker {

StatusOr<std::unique_ptr<KVConnectorWorker>> CreateKVConnectorWorker(const common::KVTransferConfig& config,
                                                                     size_t tp_rank, size_t tp_size) {
  if (!config.enabled()) return std::unique_ptr<KVConnectorWorker>();
  if (config.kv_connector == "SharedStorageConnector" || config.kv_connector == "ExampleConnector") {
    LLMSERVE_ASSIGN_OR_RETURN(std::string root, config.ExtraString("shared_storage_path", "/tmp"));
    return std::unique_ptr<KVConnectorWorker>(std::make_unique<SharedStorageConnectorWorker>(root, tp_rank, tp_size));
  }
  return Status::InvalidArgument("--kv-transfer-config: no KV connector \"" + config.kv_connector + "\"");
}

}  // namespace llmserve::worker
