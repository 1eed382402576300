#pragma once
// Builds the scheduler side of the connector a KVTransferConfig names
// (vLLM's KVConnectorFactory, SCHEDULER role).

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status_or.h"
#include "common/kv_transfer/kv_transfer_config.h"
#include "engine_core/kv_connector/kv_connector_scheduler.h"

namespace llmserve::engine_core {

// nullptr when `config` names no connector. `block_size` is the engine's;
// `tp_size` its workers per engine. Errors name what in the config is wrong.
StatusOr<std::unique_ptr<KVConnectorScheduler>> CreateKVConnectorScheduler(const common::KVTransferConfig& config,
                                                                           int32_t block_size, size_t tp_size);

}  // namespace llmserve::engine_core
