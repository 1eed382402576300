// The SharedStorageConnector's worker side on bare KV caches: what a producer
// saves from some blocks, a consumer loads into others bit for bit (from the
// local prefix-cache hit on); files that are missing, cut short or of another
// shape fail the load, naming its blocks, and nothing is read from a folder
// before its marker exists.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/kv_transfer/shared_storage_layout.h"
#include "proto/shared_storage_metadata.h"
#include "tests/worker/worker_test_util.h"
#include "worker/kv_connector/kv_connector_step.h"
#include "worker/kv_connector/kv_connector_worker_factory.h"
#include "worker/kv_connector/shared_storage_connector_worker.h"

namespace llmserve::worker {
namespace kv_connector_worker_test {

using testing::ScratchDir;
namespace cpu = kernels::cpu;

KvCacheShape Shape(cpu::KvDType dtype = cpu::KvDType::kF32, size_t head_dim = 8) {
  KvCacheShape s;
  s.num_layers = 2;
  s.num_blocks = 8;
  s.block_size = 4;
  s.num_kv_heads = 2;
  s.head_dim = head_dim;
  s.dtype = dtype;
  return s;
}

// Every byte of every pool, distinct per position.
void Fill(KvCache& cache, uint8_t salt) {
  const KvCacheShape& s = cache.shape();
  const size_t pool_bytes = s.num_blocks * s.num_kv_heads * s.block_size * s.head_dim * cpu::KvElementSize(s.dtype);
  for (size_t l = 0; l < s.num_layers; ++l) {
    auto* k = static_cast<uint8_t*>(cache.keys(l));
    auto* v = static_cast<uint8_t*>(cache.values(l));
    for (size_t i = 0; i < pool_bytes; ++i) {
      k[i] = static_cast<uint8_t>(i * 7 + l * 13 + salt);
      v[i] = static_cast<uint8_t>(i * 11 + l * 5 + salt + 1);
    }
  }
}

// The bytes of token slot `slot` of block `block` (all heads, one layer, one pool).
std::string Token(KvCache& cache, size_t layer, bool values, int32_t block, size_t slot) {
  const KvCacheShape& s = cache.shape();
  const size_t row = s.head_dim * cpu::KvElementSize(s.dtype);
  const auto* pool = static_cast<const uint8_t*>(values ? cache.values(layer) : cache.keys(layer));
  std::string out;
  for (size_t h = 0; h < s.num_kv_heads; ++h) {
    const size_t index = (static_cast<size_t>(block) * s.num_kv_heads + h) * s.block_size + slot;
    out.append(reinterpret_cast<const char*>(pool + index * row), row);
  }
  return out;
}

proto::EncodedValue Meta(bool store, int32_t first, int32_t end, std::vector<int32_t> blocks) {
  proto::SharedStorageMetadata m;
  m.requests.push_back({"r", "prefix-key", store, first, end, std::move(blocks)});
  return proto::EncodeSharedStorageMetadata(m);
}

// One step of the connector with a forward that writes nothing (the cache is filled by the test).
proto::ModelRunnerOutput RunStep(KVConnectorWorker& c, KvCache& cache, const proto::EncodedValue& meta) {
  proto::SchedulerOutput step;
  step.kv_connector_metadata = meta;
  EXPECT_TRUE(BeginKVConnectorStep(c, step).ok());
  for (size_t l = 0; l < cache.shape().num_layers; ++l) {
    c.WaitForLayerLoad(l);
    c.SaveKvLayer(l, cache);
  }
  proto::ModelRunnerOutput out;
  FinishKVConnectorStep(c, step, &out);
  return out;
}

class SharedStorageWorkerTest : public ::testing::TestWithParam<cpu::KvDType> {
 protected:
  // Saves tokens [0, 8) of blocks {3, 5} of a filled cache under "prefix-key".
  void Produce() {
    producer_cache_ = std::make_unique<KvCache>(Shape(GetParam()));
    Fill(*producer_cache_, 1);
    SharedStorageConnectorWorker producer(dir_.path(), 0, 1);
    ASSERT_TRUE(producer.RegisterKvCaches(producer_cache_.get()).ok());
    EXPECT_FALSE(RunStep(producer, *producer_cache_, Meta(true, 0, 8, {3, 5, 6})).kv_connector_output.has_value());
  }
  std::string Folder() const { return common::SharedStorageFolder(dir_.path(), "prefix-key"); }

  ScratchDir dir_;
  std::unique_ptr<KvCache> producer_cache_;
};

TEST_P(SharedStorageWorkerTest, WhatOneCacheSavesAnotherLoadsIntoOtherBlocks) {
  Produce();
  EXPECT_TRUE(std::filesystem::exists(Folder() + "/model.layers.0.self_attn.attn.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(Folder() + "/model.layers.1.self_attn.attn.safetensors"));
  EXPECT_TRUE(common::SharedStorageComplete(dir_.path(), "prefix-key", 1));
  EXPECT_FALSE(common::SharedStorageComplete(dir_.path(), "prefix-key", 2));  // rank 1 wrote nothing

  KvCache consumer_cache(Shape(GetParam()));
  Fill(consumer_cache, 99);
  const std::string untouched = Token(consumer_cache, 0, false, 1, 0);
  auto connector = CreateKVConnectorWorker(
      *common::ParseKVTransferConfig(R"({"kv_connector": "SharedStorageConnector", "kv_role": "kv_consumer",
          "kv_connector_extra_config": {"shared_storage_path": ")" + dir_.path() + "\"}}"),
      0, 1);
  ASSERT_TRUE(connector.ok() && *connector != nullptr);
  KVConnectorWorker& consumer = **connector;
  ASSERT_TRUE(consumer.RegisterKvCaches(&consumer_cache).ok());
  // Block 1 holds a local prefix-cache hit: only tokens [4, 8) are loaded, into block 6.
  EXPECT_FALSE(RunStep(consumer, consumer_cache, Meta(false, 4, 8, {1, 6})).kv_connector_output.has_value());
  EXPECT_EQ(Token(consumer_cache, 0, false, 1, 0), untouched);
  for (size_t layer = 0; layer < 2; ++layer) {
    for (bool values : {false, true}) {
      for (size_t slot = 0; slot < 4; ++slot) {
        EXPECT_EQ(Token(consumer_cache, layer, values, 6, slot), Token(*producer_cache_, layer, values, 5, slot))
            << "layer " << layer << (values ? " V" : " K") << " slot " << slot;
      }
    }
  }
}

TEST_P(SharedStorageWorkerTest, BadFilesFailTheLoadAndNameItsBlocks) {
  Produce();
  const std::string layer1 = Folder() + "/model.layers.1.self_attn.attn.safetensors";
  KvCache cache(Shape(GetParam()));
  SharedStorageConnectorWorker consumer(dir_.path(), 0, 1);
  ASSERT_TRUE(consumer.RegisterKvCaches(&cache).ok());
  auto expect_invalid = [&](const char* what) {
    proto::ModelRunnerOutput out = RunStep(consumer, cache, Meta(false, 4, 8, {1, 6}));
    ASSERT_TRUE(out.kv_connector_output.has_value()) << what;
    EXPECT_EQ(out.kv_connector_output->invalid_block_ids, std::vector<int32_t>{6}) << what;
    EXPECT_TRUE(consumer.GetBlockIdsWithLoadErrors().empty()) << "reported once";
  };
  // Cut short.
  std::filesystem::resize_file(layer1, std::filesystem::file_size(layer1) - 5);
  expect_invalid("truncated");
  // Not a safetensors file at all.
  { std::ofstream(layer1, std::ios::trunc) << "garbage"; }
  expect_invalid("garbage");
  // Missing.
  std::filesystem::remove(layer1);
  expect_invalid("missing");
}

TEST_P(SharedStorageWorkerTest, ACacheOfAnotherShapeDoesNotLoad) {
  Produce();
  KvCache wider(Shape(GetParam(), 16));
  SharedStorageConnectorWorker consumer(dir_.path(), 0, 1);
  ASSERT_TRUE(consumer.RegisterKvCaches(&wider).ok());
  proto::ModelRunnerOutput out = RunStep(consumer, wider, Meta(false, 0, 8, {2, 4}));
  ASSERT_TRUE(out.kv_connector_output.has_value());
  EXPECT_EQ(out.kv_connector_output->invalid_block_ids, (std::vector<int32_t>{2, 4}));
  const cpu::KvDType other = GetParam() == cpu::KvDType::kF32 ? cpu::KvDType::kBF16 : cpu::KvDType::kF32;
  KvCache retyped(Shape(other));
  SharedStorageConnectorWorker consumer2(dir_.path(), 0, 1);
  ASSERT_TRUE(consumer2.RegisterKvCaches(&retyped).ok());
  out = RunStep(consumer2, retyped, Meta(false, 0, 8, {2, 4}));
  ASSERT_TRUE(out.kv_connector_output.has_value());
  EXPECT_EQ(out.kv_connector_output->invalid_block_ids, (std::vector<int32_t>{2, 4}));
}

INSTANTIATE_TEST_SUITE_P(KvDTypes, SharedStorageWorkerTest,
                         ::testing::Values(cpu::KvDType::kF32, cpu::KvDType::kBF16, cpu::KvDType::kFp8E4M3));

TEST(SharedStorageWorker, RefusesWhatItCannotStoreAndBadMetadata) {
  ScratchDir dir;
  KvCache e5m2(Shape(cpu::KvDType::kFp8E5M2));
  SharedStorageConnectorWorker c(dir.path(), 0, 1);
  EXPECT_EQ(c.RegisterKvCaches(&e5m2).code(), StatusCode::kUnimplemented);
  KvCache cache(Shape());
  ASSERT_TRUE(c.RegisterKvCaches(&cache).ok());
  EXPECT_FALSE(c.BindConnectorMetadata(proto::EncodedValue{"\xa3"
                                                           "abc"})
                   .ok());
  // Blocks outside the cache are a failed load, not a crash.
  proto::ModelRunnerOutput out = RunStep(c, cache, Meta(false, 0, 8, {2, 99}));
  ASSERT_TRUE(out.kv_connector_output.has_value());
  EXPECT_EQ(out.kv_connector_output->invalid_block_ids, (std::vector<int32_t>{2, 99}));
  EXPECT_EQ(CreateKVConnectorWorker(common::KVTransferConfig{}, 0, 1).value(), nullptr);
}

}  // namespace kv_connector_worker_test
}  // namespace llmserve::worker
