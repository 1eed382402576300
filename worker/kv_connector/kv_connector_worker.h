#pragma once
// The worker side of a KV connector (vLLM's KVConnectorBase_V1 in the WORKER
// role): it moves KV between this worker's paged cache and the outside, as
// the scheduler side's per-step metadata says, and reports which transfers
// finished and which blocks failed to load.
//
// A step (driven by BeginKVConnectorStep / FinishKVConnectorStep, vLLM's
// KVConnectorModelRunnerMixin, around the forward):
//   BindConnectorMetadata → StartLoadKv →
//   per layer, inside the forward: WaitForLayerLoad, (the layer writes its
//   K/V), SaveKvLayer →
//   WaitForSave → GetFinished, GetBlockIdsWithLoadErrors → ClearConnectorMetadata.
// A step with nothing to compute still runs these calls (without the layers),
// so asynchronous transfers keep being reported.
//
// Not thread-safe: the model runner's thread calls it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/encoded_value.h"
#include "worker/kv_cache.h"

namespace llmserve::worker {

// What Model::Forward calls around each layer (vLLM's attention-layer wrapper).
class KvLayerHooks {
 public:
  virtual ~KvLayerHooks() = default;
  // Before layer `layer` reads the cache: blocks until its loaded KV is in place.
  virtual void WaitForLayerLoad(size_t layer) = 0;
  // After layer `layer` wrote this step's K/V into `cache`: starts saving what
  // the metadata asks of that layer.
  virtual void SaveKvLayer(size_t layer, KvCache& cache) = 0;
};

// Requests whose transfers finished since the last report.
struct FinishedTransfers {
  std::vector<std::string> sending;  // sends done: the scheduler may free their blocks
  std::vector<std::string> recving;  // asynchronous loads done
};

class KVConnectorWorker : public KvLayerHooks {
 public:
  // vLLM's register_kv_caches: the cache the connector loads into and saves
  // from (it outlives the connector's use). An error when the connector
  // cannot handle its layout (e.g. its element type).
  virtual Status RegisterKvCaches(KvCache* cache) = 0;
  // vLLM's bind_connector_metadata: this step's SchedulerOutput.kv_connector_metadata
  // (empty: nothing this step). An error when it cannot be decoded.
  virtual Status BindConnectorMetadata(const proto::EncodedValue& metadata) = 0;
  // vLLM's clear_connector_metadata, at the end of the step.
  virtual void ClearConnectorMetadata() = 0;
  // vLLM's start_load_kv: starts loading the bound requests' KV into the cache.
  virtual void StartLoadKv() = 0;
  // vLLM's wait_for_save: blocks until this step's saves are done (the
  // scheduler may reuse the blocks afterwards).
  virtual void WaitForSave() = 0;
  // vLLM's get_finished: the transfers that finished; `finished_req_ids` are
  // the requests the scheduler finished since the last step (their
  // transfers may still be running).
  virtual FinishedTransfers GetFinished(std::span<const std::string> finished_req_ids) = 0;
  // vLLM's get_block_ids_with_load_errors: blocks whose load failed since
  // the last call (their requests recompute them).
  virtual std::vector<int32_t> GetBlockIdsWithLoadErrors() = 0;
};

}  // namespace llmserve::worker
