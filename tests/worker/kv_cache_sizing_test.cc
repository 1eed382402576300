// Which memory fraction a worker sizes its KV cache from, and how many blocks
// a scheduler can use.
#include "worker/kv_cache_sizing.h"

#include <gtest/gtest.h>

namespace llmserve::worker {
namespace {

TEST(KvCacheSizing, CpuTakesTheGivenFractionOrTheDefaultSplitOverTensorParallelWorkers) {
  proto::CacheConfig cache;
  EXPECT_TRUE(KvCacheSizeIsDefault(cache));
  EXPECT_DOUBLE_EQ(WorkerMemoryFraction(cache, "cpu", 1, 4), kDefaultMemoryFraction);  // engines split it later
  EXPECT_DOUBLE_EQ(WorkerMemoryFraction(cache, "cpu", 2, 1), kDefaultMemoryFraction / 2);
  cache.set_memory_utilization(0.3);  // --gpu-memory-utilization: no effect on CPU
  EXPECT_DOUBLE_EQ(WorkerMemoryFraction(cache, "cpu", 1, 1), kDefaultMemoryFraction);
  cache.set_kv_cache_memory_fraction(0.5);
  EXPECT_FALSE(KvCacheSizeIsDefault(cache));
  EXPECT_DOUBLE_EQ(WorkerMemoryFraction(cache, "cpu", 2, 1), 0.25);
}

TEST(KvCacheSizing, CudaTakesTheKvFractionThenGpuUtilizationSplitOverTheNodesRanks) {
  proto::CacheConfig cache;
  EXPECT_DOUBLE_EQ(WorkerMemoryFraction(cache, "cuda", 1, 1), kDefaultMemoryFraction);
  cache.set_memory_utilization(0.6);
  EXPECT_DOUBLE_EQ(WorkerMemoryFraction(cache, "cuda", 1, 2), 0.3);
  cache.set_kv_cache_memory_fraction(0.4);
  EXPECT_DOUBLE_EQ(WorkerMemoryFraction(cache, "cuda", 2, 1), 0.4);  // a GPU per tensor-parallel rank
}

TEST(KvCacheSizing, BytesAreNotTheDefault) {
  proto::CacheConfig cache;
  cache.set_kv_cache_memory_bytes(1 << 20);
  EXPECT_FALSE(KvCacheSizeIsDefault(cache));
}

TEST(KvCacheSizing, SchedulerUsableBlocksRoundsEachRequestUpAndAddsTheNullBlock) {
  EXPECT_EQ(SchedulerUsableBlocks(256, 4096, 32), 256u * 128 + 1);
  EXPECT_EQ(SchedulerUsableBlocks(3, 33, 32), 3u * 2 + 1);
  EXPECT_EQ(SchedulerUsableBlocks(1, 1, 16), 2u);
}

}  // namespace
}  // namespace llmserve::worker
