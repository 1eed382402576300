#pragma once
// How big a worker's KV cache may be, from the engine's CacheConfig. The
// order of precedence:
//  - kv_cache_memory_bytes: exactly that much, split evenly over the
//    engine's tensor-parallel workers;
//  - else a fraction of the device's memory for weights, activations and KV
//    together: --kv-cache-memory F, else on CUDA --gpu-memory-utilization,
//    else 0.9. On CUDA the node's data-parallel ranks split it (each
//    tensor-parallel rank has a GPU of its own); on CPU the engines of the
//    host split it when the worker profiles (MemoryShare).
//  - On CPU with nothing given, the engine also keeps no more blocks than its
//    scheduler can use (SchedulerUsableBlocks).

#include <cstddef>
#include <cstdint>
#include <string>

#include "proto/engine_config.pb.h"

namespace llmserve::worker {

// The default fraction of the device's memory when no size is given.
inline constexpr double kDefaultMemoryFraction = 0.9;

// The share of the device's memory one of the engine's `tp_size` workers
// sizes its KV cache from (see above); `device` is the resolved device.
double WorkerMemoryFraction(const proto::CacheConfig& cache, const std::string& device, uint32_t tp_size,
                            uint32_t dp_local);

// True when the user named no KV cache size (bytes or fraction).
bool KvCacheSizeIsDefault(const proto::CacheConfig& cache);

// Blocks that hold `max_num_seqs` requests of `max_model_len` tokens each,
// plus the null block: more would only ever hold prefix-cache leftovers.
size_t SchedulerUsableBlocks(size_t max_num_seqs, size_t max_model_len, size_t block_size);

}  // namespace llmserve::worker
