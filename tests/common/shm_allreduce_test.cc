#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/ipc/shm_allreduce.h"
#include "common/ipc/zmq_socket.h"
#include "tests/common/ipc_test_util.h"

namespace llmserve::common::ipc {
namespace {

using std::chrono::milliseconds;
using testing::Child;
using testing::Scaled;
using testing::SplitMix;

constexpr auto kLong = milliseconds(30000);

// Rank r's input for iteration `iter`: values of widely varying magnitude and
// sign, so that the order of the additions changes the rounded result.
void FillInput(int rank, uint64_t iter, size_t n, float* out) {
  uint64_t state = (iter << 8) ^ static_cast<uint64_t>(rank) ^ 0x5eedull;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = SplitMix(&state);
    // sign | exponent 2^-12 .. 2^11 | random mantissa
    const uint32_t bits = static_cast<uint32_t>((r >> 63) << 31) |
                          static_cast<uint32_t>(115 + (r >> 40) % 24) << 23 |
                          static_cast<uint32_t>(r & 0x7fffff);
    std::memcpy(&out[i], &bits, sizeof(float));
  }
}

// ((x0 + x1) + x2) + ... computed locally from every rank's input.
std::vector<float> RankOrderedSum(int world, uint64_t iter, size_t n) {
  std::vector<float> sum(n), term(n);
  FillInput(0, iter, n, sum.data());
  for (int r = 1; r < world; ++r) {
    FillInput(r, iter, n, term.data());
    for (size_t i = 0; i < n; ++i) sum[i] = sum[i] + term[i];
  }
  return sum;
}

struct Case {
  size_t n;
  uint64_t iterations;
};

ShmCommunicatorConfig GroupConfig(const std::string& name, int rank, int world) {
  ShmCommunicatorConfig config;
  config.name = name;
  config.rank = rank;
  config.world_size = world;
  config.timeout = kLong;
  return config;
}

// One rank: runs every case and checks each result bitwise. Returns 0 on success.
int RankBody(ShmCommunicatorConfig config, const std::vector<Case>& cases) {
  auto comm = ShmCommunicator::Create(config);
  if (!comm.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", config.rank, comm.status().ToString().c_str());
    return 2;
  }
  uint64_t iter = 0;
  for (const Case& c : cases) {
    std::vector<float> data(c.n);
    for (uint64_t i = 0; i < c.iterations; ++i, ++iter) {
      FillInput(config.rank, iter, c.n, data.data());
      Status status = (*comm)->AllReduceSum(data.data(), c.n);
      if (!status.ok()) {
        std::fprintf(stderr, "rank %d: %s\n", config.rank, status.ToString().c_str());
        return 3;
      }
      const std::vector<float> want = RankOrderedSum(config.world_size, iter, c.n);
      if (std::memcmp(data.data(), want.data(), c.n * sizeof(float)) != 0) {
        for (size_t j = 0; j < c.n; ++j) {
          if (std::memcmp(&data[j], &want[j], sizeof(float)) != 0) {
            std::fprintf(stderr, "rank %d: n=%zu iter %llu: element %zu is %.9g, want %.9g\n",
                         config.rank, c.n, static_cast<unsigned long long>(iter), j, data[j],
                         want[j]);
            break;
          }
        }
        return 4;
      }
    }
  }
  // AllGather, rank-major: rank r contributes r * 100000 + i (9000 floats take
  // several pieces when the slot is small).
  for (const size_t n : {size_t{777}, size_t{9000}}) {
    std::vector<float> in(n), out(n * config.world_size, -1.0f);
    for (size_t i = 0; i < n; ++i) in[i] = static_cast<float>(config.rank * 100000 + static_cast<int>(i));
    if (!(*comm)->AllGather(in.data(), n, out.data()).ok()) return 5;
    for (int r = 0; r < config.world_size; ++r) {
      for (size_t i = 0; i < n; ++i) {
        if (out[r * n + i] != static_cast<float>(r * 100000 + static_cast<int>(i))) {
          std::fprintf(stderr, "rank %d: AllGather n=%zu: out[%d][%zu] = %g\n", config.rank, n, r,
                       i, out[r * n + i]);
          return 6;
        }
      }
    }
  }
  return (*comm)->Barrier().ok() ? 0 : 7;
}

void RunGroup(int world, const std::vector<Case>& cases, size_t slot_floats = 1u << 20,
              size_t scatter_min = 1u << 14) {
  const std::string name = ShmCommunicator::NewGroupName();
  std::vector<std::unique_ptr<Child>> ranks;
  for (int r = 0; r < world; ++r) {
    ShmCommunicatorConfig config = GroupConfig(name, r, world);
    config.slot_floats = slot_floats;
    config.scatter_min_floats = scatter_min;
    ranks.push_back(std::make_unique<Child>(
        [config, cases](const std::string&) { return RankBody(config, cases); }));
  }
  for (auto& rank : ranks) rank->Send("");
  for (int r = 0; r < world; ++r) EXPECT_EQ(ranks[r]->Wait(kLong), 0) << "rank " << r;
}

TEST(ShmAllReduce, TestDataIsOrderSensitive) {
  // Guards the tests below: summing in another order must change some bits.
  const size_t n = 4096;
  std::vector<float> forward = RankOrderedSum(4, 1, n), backward(n), term(n);
  FillInput(3, 1, n, backward.data());
  for (int r = 2; r >= 0; --r) {
    FillInput(r, 1, n, term.data());
    for (size_t i = 0; i < n; ++i) backward[i] += term[i];
  }
  EXPECT_NE(std::memcmp(forward.data(), backward.data(), n * sizeof(float)), 0);
}

TEST(ShmAllReduce, TwoRanksBitwiseRankOrderedSum) {
  RunGroup(2, {{1, Scaled(2000)}, {1024, Scaled(2000)}, {1u << 20, Scaled(6)}});
}

TEST(ShmAllReduce, FourRanksBitwiseRankOrderedSum) {
  RunGroup(4, {{1, Scaled(500)}, {1024, Scaled(500)}, {1u << 20, Scaled(3)}});
}

TEST(ShmAllReduce, ThreeRanksTensorsLargerThanTheSlot) {
  // 4096-float slots: 10007 floats go in 3 pieces, reduce-scattered in uneven partitions.
  RunGroup(3, {{10007, Scaled(100)}, {4096, Scaled(100)}, {33, Scaled(100)}}, 4096, 1024);
}

TEST(ShmAllReduce, SingleRankIsIdentity) {
  ShmCommunicatorConfig config = GroupConfig(ShmCommunicator::NewGroupName(), 0, 1);
  auto comm = ShmCommunicator::Create(config);
  ASSERT_TRUE(comm.ok()) << comm.status().ToString();
  std::vector<float> data = {1.5f, -2.0f}, out(2);
  ASSERT_TRUE((*comm)->AllReduceSum(data.data(), 2).ok());
  EXPECT_EQ(data, (std::vector<float>{1.5f, -2.0f}));
  ASSERT_TRUE((*comm)->AllGather(data.data(), 2, out.data()).ok());
  EXPECT_EQ(out, data);
  EXPECT_TRUE((*comm)->Barrier().ok());
  EXPECT_EQ((*comm)->rank(), 0);
  EXPECT_EQ((*comm)->world_size(), 1);
}

TEST(ShmAllReduce, RejectsBadConfig) {
  ShmCommunicatorConfig config = GroupConfig(ShmCommunicator::NewGroupName(), 0, 2);
  config.rank = 2;
  EXPECT_EQ(ShmCommunicator::Create(config).status().code(), StatusCode::kInvalidArgument);
  config.rank = 0;
  config.world_size = 0;
  EXPECT_EQ(ShmCommunicator::Create(config).status().code(), StatusCode::kInvalidArgument);
  config.world_size = 2;
  config.name = "no-slash";
  EXPECT_EQ(ShmCommunicator::Create(config).status().code(), StatusCode::kInvalidArgument);
  config.name = ShmCommunicator::NewGroupName();
  config.slot_floats = 10;
  EXPECT_EQ(ShmCommunicator::Create(config).status().code(), StatusCode::kInvalidArgument);
}

TEST(ShmAllReduce, JoinTimesOutWithoutRankZero) {
  ShmCommunicatorConfig config = GroupConfig(ShmCommunicator::NewGroupName(), 1, 2);
  config.timeout = milliseconds(50);
  auto comm = ShmCommunicator::Create(config);
  ASSERT_FALSE(comm.ok());
  EXPECT_TRUE(IsTimeout(comm.status())) << comm.status().ToString();
}

TEST(ShmAllReduce, DeadPeerFailsTheCollectiveInsteadOfHanging) {
  const std::string name = ShmCommunicator::NewGroupName();
  Child peer([name](const std::string&) {
    auto comm = ShmCommunicator::Create(GroupConfig(name, 1, 2));
    if (!comm.ok()) return 2;
    float x = 1.0f;
    if (!(*comm)->AllReduceSum(&x, 1).ok() || x != 3.0f) return 3;
    ::_exit(0);  // leaves before the second all-reduce
  });
  peer.Send("");
  ShmCommunicatorConfig config = GroupConfig(name, 0, 2);
  config.timeout = std::nullopt;  // only the liveness check can end the wait
  auto comm = ShmCommunicator::Create(config);
  ASSERT_TRUE(comm.ok()) << comm.status().ToString();
  float x = 2.0f;
  ASSERT_TRUE((*comm)->AllReduceSum(&x, 1).ok());
  EXPECT_EQ(x, 3.0f);
  // The peer is gone (a zombie until reaped: both count as dead).
  const auto start = std::chrono::steady_clock::now();
  Status status = (*comm)->AllReduceSum(&x, 1);
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("rank 1 died"), std::string::npos) << status.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(5000));
  EXPECT_FALSE((*comm)->Barrier().ok());  // unusable afterwards
  EXPECT_EQ(peer.Wait(kLong), 0);
}

}  // namespace
}  // namespace llmserve::common::ipc
