#pragma once
// Where the SharedStorageConnector keeps a prompt's KV (vLLM's layout, plus a
// completion marker): one folder per stored prefix under shared_storage_path,
// named by the scheduler side's hash of the prefix, holding one safetensors
// file per layer and, once every layer is written, one marker per worker:
//
//   <root>/<key>/model.layers.<l>.self_attn.attn.safetensors   (tensor "kv_cache")
//   <root>/<key>/rank<r>.complete
//
// With tensor parallelism each worker stores its own KV heads in files named
// ...attn.tp<r>.safetensors. A consumer trusts a folder only when every
// worker's marker is there, so a producer still writing (or killed midway)
// is never read.

#include <cstdint>
#include <string>

namespace llmserve::common {

// The prompt tokens a stored prefix holds: the largest multiple of
// `block_size` below `prompt_len`, so a consumer always computes the last
// prompt token itself (it needs that token's logits). 0 for a one-block prompt.
int32_t SharedStoragePrefixTokens(int32_t prompt_len, int32_t block_size);

// <root>/<key>
std::string SharedStorageFolder(const std::string& root, const std::string& key);
// The file of layer `layer` written by tensor-parallel rank `tp_rank` of `tp_size`.
std::string SharedStorageLayerFile(const std::string& folder, size_t layer, size_t tp_rank, size_t tp_size);
// The marker worker `tp_rank` writes after its last layer file.
std::string SharedStorageMarker(const std::string& folder, size_t tp_rank);
// True when all `tp_size` workers finished writing the folder of `key`.
bool SharedStorageComplete(const std::string& root, const std::string& key, size_t tp_size);

}  // namespace llmserve::common
