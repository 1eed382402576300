#pragma once
// Builds the worker side of the connector a KVTransferConfig names (vLLM's
// KVConnectorFactory, WORKER role).

#include <cstddef>
#include <memory>

#include "base/status_or.h"
#include "common/kv_transfer/kv_transfer_config.h"
#include "worker/kv_connector/kv_connector_worker.h"

namespace llmserve::worker {

// nullptr when `config` names no connector; this worker is tensor-parallel
// rank `tp_rank` of `tp_size`.
StatusOr<std::unique_ptr<KVConnectorWorker>> CreateKVConnectorWorker(const common::KVTransferConfig& config,
                                                                     size_t tp_rank, size_t tp_size);

}  // namespace llmserve::worker
