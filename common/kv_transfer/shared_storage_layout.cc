#include "common/kv_transfer/shared_storage_layout.h"

#include <sys/stat.h>

namespace llmserve::common {

int32_t SharedStoragePrefixTokens(int32_t prompt_len, int32_t block_size) {
  if (prompt_len <= 1 || block_size <= 0) return 0;
  return (prompt_len - 1) / block_size * block_size;
}

std::string SharedStorageFolder(const std::string& root, const std::string& key) { return root + "/" + key; }

std::string SharedStorageLayerFile(const std::string& folder, size_t layer, size_t tp_rank, size_t tp_size) {
  std::string name = folder + "/model.layers." + std::to_string(layer) + ".self_attn.attn";
  if (tp_size > 1) name += ".tp" + std::to_string(tp_rank);
  return name + ".safetensors";
}

std::string SharedStorageMarker(const std::string& folder, size_t tp_rank) {
  return folder + "/rank" + std::to_string(tp_rank) + ".complete";
}

bool SharedStorageComplete(const std::string& root, const std::string& key, size_t tp_size) {
  const std::string folder = SharedStorageFolder(root, key);
  struct stat st;
  for (size_t r = 0; r < tp_size; ++r) {
    if (::stat(SharedStorageMarker(folder, r).c_str(), &st) != 0) return false;
  }
  return true;
}

}  // namespace llmserve::common
