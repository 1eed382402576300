#pragma once
// The worker side of the SharedStorageConnector: saves the blocks the
// metadata names, layer by layer as the forward writes them, to safetensors
// files (tensor "kv_cache", shape [pools, tokens, kv_heads, head_dim] in the
// cache's element type; pools are K and V, or MLA's one latent pool), and
// loads them back into other blocks before the forward. Layout and markers:
// common/kv_transfer/shared_storage_layout.h. A load that fails (a missing
// or unreadable file, a shape or type that does not match this cache) marks
// the request's blocks invalid, and the scheduler has them recomputed.

#include <cstddef>
#include <string>
#include <vector>

#include "proto/shared_storage_metadata.h"
#include "worker/kv_connector/kv_connector_worker.h"

namespace llmserve::worker {

class SharedStorageConnectorWorker final : public KVConnectorWorker {
 public:
  // `root`: shared_storage_path; this worker is tensor-parallel rank
  // `tp_rank` of `tp_size`.
  SharedStorageConnectorWorker(std::string root, size_t tp_rank, size_t tp_size)
      : root_(std::move(root)), tp_rank_(tp_rank), tp_size_(tp_size) {}

  Status RegisterKvCaches(KvCache* cache) override;
  Status BindConnectorMetadata(const proto::EncodedValue& metadata) override;
  void ClearConnectorMetadata() override { meta_.requests.clear(); }
  void StartLoadKv() override;
  void WaitForLayerLoad(size_t) override {}  // loads finish in StartLoadKv
  void SaveKvLayer(size_t layer, KvCache& cache) override;
  void WaitForSave() override;
  FinishedTransfers GetFinished(std::span<const std::string>) override { return {}; }
  std::vector<int32_t> GetBlockIdsWithLoadErrors() override;

 private:
  // Loads request `m`'s tokens into the cache, every layer; an error says why not.
  Status Load(const proto::SharedStorageRequestMeta& m);
  // Writes layer `layer` of request `m`'s tokens to its file.
  Status Save(const proto::SharedStorageRequestMeta& m, size_t layer, KvCache& cache);

  const std::string root_;
  const size_t tp_rank_;
  const size_t tp_size_;
  KvCache* cache_ = nullptr;
  proto::SharedStorageMetadata meta_;
  std::vector<std::string> failed_saves_;   // this step's stores that lost a layer (req ids)
  std::vector<int32_t> invalid_blocks_;
};

}  // namespace llmserve::worker
