#include "worker/kv_connector/shared_storage_connector_worker.h"

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <glog/logging.h>

#include "common/kv_transfer/shared_storage_layout.h"
#include "worker/safetensors.h"
#include "worker/safetensors_writer.h"

namespace llmserve::worker {

namespace {

namespace cpu = kernels::cpu;

constexpr char kTensorName[] = "kv_cache";

// The safetensors dtype of a cache element type ("" where there is none).
const char* SafetensorsDType(cpu::KvDType t) {
  switch (t) {
    case cpu::KvDType::kF32: return "F32";
    case cpu::KvDType::kBF16: return "BF16";
    case cpu::KvDType::kFp8E4M3: return "F8_E4M3";
    case cpu::KvDType::kFp8E5M2: return "";
  }
  return "";
}

cpu::WeightDType FileDType(cpu::KvDType t) {
  return t == cpu::KvDType::kF32 ? cpu::WeightDType::kF32
         : t == cpu::KvDType::kBF16 ? cpu::WeightDType::kBF16
                                    : cpu::WeightDType::kF8E4M3;
}

// The cache row (head_dim elements) of token slot `slot` of KV head `head` in `block` of `pool`.
uint8_t* Row(void* pool, const KvCacheShape& s, int32_t block, size_t head, size_t slot) {
  const size_t row_bytes = s.head_dim * cpu::KvElementSize(s.dtype);
  const size_t index = (static_cast<size_t>(block) * s.num_kv_heads + head) * s.block_size + slot;
  return static_cast<uint8_t*>(pool) + index * row_bytes;
}

void* Pool(KvCache& cache, size_t layer, size_t pool) { return pool == 0 ? cache.keys(layer) : cache.values(layer); }

Status CheckBlocks(const proto::SharedStorageRequestMeta& m, const KvCacheShape& s) {
  const size_t bs = s.block_size;
  if (m.first_token % bs != 0 || m.end_token % bs != 0 || m.block_ids.size() < m.end_token / bs)
    return Status::InvalidArgument("request " + m.req_id + ": tokens [" + std::to_string(m.first_token) + ", " +
                                   std::to_string(m.end_token) + ") do not fit its " +
                                   std::to_string(m.block_ids.size()) + " blocks of " + std::to_string(bs));
  for (int32_t b : m.block_ids) {
    if (b < 0 || static_cast<size_t>(b) >= s.num_blocks)
      return Status::InvalidArgument("request " + m.req_id + ": block " + std::to_string(b) + " is outside the cache");
  }
  return Status::Ok();
}

}  // namespace

Status SharedStorageConnectorWorker::RegisterKvCaches(KvCache* cache) {
  if (std::string(SafetensorsDType(cache->shape().dtype)).empty())
    return Status::Unimplemented("SharedStorageConnector: an fp8_e5m2 KV cache cannot be stored yet; use "
                                 "--kv-cache-dtype fp8_e4m3, bfloat16 or float32");
  cache_ = cache;
  return Status::Ok();
}

Status SharedStorageConnectorWorker::BindConnectorMetadata(const proto::EncodedValue& metadata) {
  failed_saves_.clear();
  return proto::DecodeSharedStorageMetadata(metadata, &meta_);
}

void SharedStorageConnectorWorker::StartLoadKv() {
  for (const proto::SharedStorageRequestMeta& m : meta_.requests) {
    if (m.is_store || m.end_token <= m.first_token) continue;
    Status loaded = Load(m);
    if (loaded.ok()) continue;
    LOG(WARNING) << "SharedStorageConnector: request " << m.req_id << " recomputes its KV: " << loaded.message();
    const auto bs = static_cast<int32_t>(cache_->shape().block_size);
    for (int32_t b = m.first_token / bs; b < m.end_token / bs && static_cast<size_t>(b) < m.block_ids.size(); ++b)
      invalid_blocks_.push_back(m.block_ids[static_cast<size_t>(b)]);
  }
}

Status SharedStorageConnectorWorker::Load(const proto::SharedStorageRequestMeta& m) {
  const KvCacheShape& s = cache_->shape();
  LLMSERVE_RETURN_IF_ERROR(CheckBlocks(m, s));
  const std::string folder = common::SharedStorageFolder(root_, m.key);
  const std::vector<size_t> want = {s.pools(), static_cast<size_t>(m.end_token), s.num_kv_heads, s.head_dim};
  const size_t row_bytes = s.head_dim * cpu::KvElementSize(s.dtype);
  for (size_t layer = 0; layer < s.num_layers; ++layer) {
    LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsFile> file,
                              SafetensorsFile::Open(common::SharedStorageLayerFile(folder, layer, tp_rank_, tp_size_)));
    const TensorView* t = file->Find(kTensorName);
    if (t == nullptr) return Status::DataLoss(file->path() + ": no tensor " + kTensorName);
    if (t->dtype != FileDType(s.dtype) || t->shape != want)
      return Status::DataLoss(file->path() + ": kv_cache is " + t->ShapeString() + " of another type or shape than " +
                              "this cache's [" + std::to_string(want[0]) + ", " + std::to_string(want[1]) + ", " +
                              std::to_string(want[2]) + ", " + std::to_string(want[3]) + "] " +
                              SafetensorsDType(s.dtype));
    const auto* data = static_cast<const uint8_t*>(t->data);
    for (size_t pool = 0; pool < s.pools(); ++pool) {
      void* dst = Pool(*cache_, layer, pool);
      for (auto token = static_cast<size_t>(m.first_token); token < static_cast<size_t>(m.end_token); ++token) {
        const int32_t block = m.block_ids[token / s.block_size];
        for (size_t head = 0; head < s.num_kv_heads; ++head) {
          const size_t src = ((pool * want[1] + token) * s.num_kv_heads + head) * row_bytes;
          std::memcpy(Row(dst, s, block, head, token % s.block_size), data + src, row_bytes);
        }
      }
    }
  }
  return Status::Ok();
}

void SharedStorageConnectorWorker::SaveKvLayer(size_t layer, KvCache& cache) {
  for (const proto::SharedStorageRequestMeta& m : meta_.requests) {
    if (!m.is_store) continue;
    if (std::find(failed_saves_.begin(), failed_saves_.end(), m.req_id) != failed_saves_.end()) continue;
    Status saved = Save(m, layer, cache);
    if (saved.ok()) continue;
    LOG(WARNING) << "SharedStorageConnector: request " << m.req_id << " is not stored: " << saved.message();
    failed_saves_.push_back(m.req_id);
  }
}

Status SharedStorageConnectorWorker::Save(const proto::SharedStorageRequestMeta& m, size_t layer, KvCache& cache) {
  const KvCacheShape& s = cache.shape();
  LLMSERVE_RETURN_IF_ERROR(CheckBlocks(m, s));
  const std::string folder = common::SharedStorageFolder(root_, m.key);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) return Status::Unavailable("cannot create " + folder + ": " + ec.message());
  const size_t row_bytes = s.head_dim * cpu::KvElementSize(s.dtype);
  const auto tokens = static_cast<size_t>(m.end_token);
  TensorToWrite t;
  t.name = kTensorName;
  t.shape = {s.pools(), tokens, s.num_kv_heads, s.head_dim};
  t.dtype = SafetensorsDType(s.dtype);
  t.fill = [&](uint8_t* out) {
    for (size_t pool = 0; pool < s.pools(); ++pool) {
      void* src = Pool(cache, layer, pool);
      for (size_t token = 0; token < tokens; ++token) {
        const int32_t block = m.block_ids[token / s.block_size];
        for (size_t head = 0; head < s.num_kv_heads; ++head) {
          std::memcpy(out + ((pool * tokens + token) * s.num_kv_heads + head) * row_bytes,
                      Row(src, s, block, head, token % s.block_size), row_bytes);
        }
      }
    }
  };
  // Written under a private name, then renamed: a reader sees a whole file or none.
  const std::string path = common::SharedStorageLayerFile(folder, layer, tp_rank_, tp_size_);
  const std::string partial = path + ".partial." + std::to_string(::getpid());
  LLMSERVE_RETURN_IF_ERROR(WriteSafetensorsFile(partial, {t}));
  std::filesystem::rename(partial, path, ec);
  if (ec) return Status::Unavailable("cannot rename " + partial + ": " + ec.message());
  return Status::Ok();
}

void SharedStorageConnectorWorker::WaitForSave() {
  // Every layer is saved (synchronously, in SaveKvLayer): mark the folders complete.
  for (const proto::SharedStorageRequestMeta& m : meta_.requests) {
    if (!m.is_store || std::find(failed_saves_.begin(), failed_saves_.end(), m.req_id) != failed_saves_.end())
      continue;
    const std::string marker = common::SharedStorageMarker(common::SharedStorageFolder(root_, m.key), tp_rank_);
    std::ofstream out(marker);
    if (!out) LOG(WARNING) << "SharedStorageConnector: cannot write " << marker;
  }
  failed_saves_.clear();
}

std::vector<int32_t> SharedStorageConnectorWorker::GetBlockIdsWithLoadErrors() {
  std::vector<int32_t> out;
  out.swap(invalid_blocks_);
  return out;
}

}  // namespace llmserve::worker
