#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/common/wait_until.h"

namespace llmserve::kernels::cpu {
namespace {

TEST(ThreadPool, CoversEveryIndexOnceWithFixedChunks) {
  for (size_t threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (size_t n : {1, 2, 5, 16, 17, 1000}) {
      for (size_t grain : {1, 4, 64}) {
        std::vector<std::atomic<int>> hits(n);
        std::mutex mu;
        std::set<std::pair<size_t, size_t>> ranges;
        std::vector<std::atomic<int>> busy(threads);
        pool.ParallelFor(n, grain, [&](size_t b, size_t e, size_t t) {
          ASSERT_LT(t, threads);
          EXPECT_EQ(busy[t].fetch_add(1), 0) << "thread index used twice at once";
          {
            std::lock_guard<std::mutex> lock(mu);
            ranges.insert({b, e});
          }
          for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
          busy[t].fetch_sub(1);
        });
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
        // Range boundaries are a function of (n, grain, threads) only.
        const size_t chunks = std::min(threads, (n + grain - 1) / grain);
        const size_t chunk = (n + chunks - 1) / chunks;
        std::set<std::pair<size_t, size_t>> expect;
        for (size_t b = 0; b < n; b += chunk) expect.insert({b, std::min(n, b + chunk)});
        EXPECT_EQ(ranges, expect) << n << " " << grain << " " << threads;
      }
    }
  }
}

TEST(ThreadPool, ExplicitChunksCoverEverything) {
  ThreadPool pool(2);
  for (size_t n : {1, 7, 64, 1001}) {
    for (size_t chunk : {1, 3, 64}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<size_t> calls{0};
      pool.ParallelForChunks(n, chunk, [&](size_t b, size_t e, size_t t) {
        ASSERT_LT(t, 2u);
        ASSERT_EQ(b % chunk, 0u);
        ASSERT_EQ(e, std::min(n, b + chunk));
        calls.fetch_add(1);
        for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
      });
      EXPECT_EQ(calls.load(), (n + chunk - 1) / chunk);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << chunk;
    }
  }
}

TEST(ThreadPool, ManyBackToBackLoopsAndSleepingHelpers) {
  ThreadPool pool(2);
  std::atomic<long> sum{0};
  for (int round = 0; round < 5000; ++round) {
    pool.ParallelFor(2, 1, [&](size_t b, size_t e, size_t) { sum.fetch_add(long(e - b)); });
  }
  EXPECT_EQ(sum.load(), 10000);
  pool.set_spin_us(0);  // helpers go to sleep at once: exercises the futex path
  for (int round = 0; round < 200; ++round) {
    if (round % 50 == 0) {  // every helper asleep: this round has to wake it
      ASSERT_TRUE(test_util::WaitUntil([&] { return pool.sleeping_helpers() == pool.size() - 1; },
                                       std::chrono::milliseconds(5000)));
    }
    pool.ParallelFor(10, 1, [&](size_t b, size_t e, size_t) { sum.fetch_add(long(e - b)); });
  }
  EXPECT_EQ(sum.load(), 12000);
}

TEST(ThreadPool, ConcurrentCallersAreSerialised) {
  ThreadPool pool(2);
  std::atomic<long> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 2000; ++round)
        pool.ParallelFor(8, 1, [&](size_t b, size_t e, size_t) { sum.fetch_add(long(e - b)); });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(sum.load(), 3 * 2000 * 8);
}

TEST(CpuFeatures, NamesRoundTripAndCapApplies) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAvx512Bf16, Isa::kAmx}) {
    Isa parsed;
    ASSERT_TRUE(ParseIsa(IsaName(isa), &parsed));
    EXPECT_EQ(parsed, isa);
  }
  Isa unused;
  EXPECT_FALSE(ParseIsa("sse9", &unused));
  const CpuFeatures& f = GetCpuFeatures();
  EXPECT_LE(static_cast<int>(ActiveIsa()), static_cast<int>(f.best));
  EXPECT_TRUE(!f.amx || f.avx512_bf16);
  EXPECT_TRUE(!f.avx512_bf16 || f.avx512);
  EXPECT_TRUE(!f.avx512 || f.avx2);
  SetMaxIsa(Isa::kScalar);
  EXPECT_EQ(ActiveIsa(), Isa::kScalar);
  SetMaxIsa(Isa::kAmx);
  EXPECT_EQ(ActiveIsa(), f.best);
}

}  // namespace
}  // namespace llmserve::kernels::cpu
