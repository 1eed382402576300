// The GPU sampler against the host sampler on the same logits and draws:
// greedy picks the same token; temperature / top-p / min-p draws agree
// (their p differ only by float rounding, which can move a draw that lands
// on a boundary); top-k draws stay among the k best. Skips with "no CUDA
// device" where none is visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_array.h"
#include "kernels/cuda/sampling.h"
#include "worker/model_runner.h"
#include "worker/sampler.h"

namespace llmserve::worker {
namespace {

namespace kc = kernels::cuda;

struct Case {
  const char* name;
  SamplingParams params;
};

std::vector<Case> Cases() {
  std::vector<Case> cases(6);
  cases[0] = {"greedy", {}};
  cases[0].params.temperature = 0.f;
  cases[1] = {"temperature 0.8", {}};
  cases[1].params.temperature = 0.8f;
  cases[2] = {"top_p 0.9", {}};
  cases[2].params.top_p = 0.9f;
  cases[3] = {"min_p 0.05", {}};
  cases[3].params.min_p = 0.05f;
  cases[4] = {"top_k 20", {}};
  cases[4].params.top_k = 20;
  cases[5] = {"top_k 50, top_p 0.8, temperature 1.3", {}};
  cases[5].params.top_k = 50;
  cases[5].params.top_p = 0.8f;
  cases[5].params.temperature = 1.3f;
  return cases;
}

TEST(CudaSampling, MatchesHostSampler) {
  if (kc::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const size_t vocab = 151936, draws = 64;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.f, 2.f);
  std::vector<float> logits(draws * vocab);
  for (auto& v : logits) v = dist(rng);
  logits[3 * vocab + 17] = NAN;  // a NaN is counted, never chosen
  kc::DeviceArray<float> dlogits;
  ASSERT_TRUE(dlogits.Resize(logits.size()).ok());
  ASSERT_TRUE(dlogits.Upload(logits.data(), logits.size()).ok());
  const std::vector<int32_t> none;
  for (const Case& c : Cases()) {
    std::vector<SamplerRow> rows;
    std::vector<kc::SamplingRow> device_rows;
    for (size_t i = 0; i < draws; ++i) {
      rows.push_back({&logits[i * vocab], &c.params, &none, &none, 42, i});
      const DeviceSampling d = DeviceSamplingFor(rows.back());
      ASSERT_TRUE(d.on_device) << c.name;
      device_rows.push_back(
          {static_cast<int32_t>(i), d.temperature, d.top_k, d.top_p, d.min_p, static_cast<float>(d.uniform)});
    }
    kc::DeviceArray<kc::SamplingRow> drows;
    ASSERT_TRUE(drows.Resize(draws).ok());
    ASSERT_TRUE(drows.Upload(device_rows.data(), draws).ok());
    kc::DeviceArray<int32_t> out;
    ASSERT_TRUE(out.Resize(2 * draws).ok());
    ASSERT_TRUE(
        kc::SampleRows(dlogits.data(), vocab, drows.data(), draws, out.data(), out.data() + draws, nullptr).ok());
    std::vector<int32_t> got(2 * draws);
    ASSERT_EQ(cudaMemcpy(got.data(), out.data(), got.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    size_t agree = 0;
    for (size_t i = 0; i < draws; ++i) {
      EXPECT_EQ(got[draws + i], i == 3 ? 1 : 0) << c.name << ": NaN count of row " << i;
      const int32_t host = Sampler::SampleRow(rows[i], vocab).token;
      const int32_t dev = got[i];
      ASSERT_TRUE(dev >= 0 && static_cast<size_t>(dev) < vocab) << c.name;
      ASSERT_FALSE(std::isnan(logits[i * vocab + dev])) << c.name;
      agree += host == dev;
      if (c.params.top_k > 0) {
        // Among the k best of its row.
        const float l = logits[i * vocab + dev];
        size_t better = 0;
        for (size_t v = 0; v < vocab; ++v) better += logits[i * vocab + v] > l;
        EXPECT_LT(better, static_cast<size_t>(c.params.top_k)) << c.name << " row " << i;
      }
    }
    std::printf("%s: device and host agree on %zu of %zu draws\n", c.name, agree, draws);
    if (c.params.temperature <= 1e-5f) {
      EXPECT_EQ(agree, draws) << c.name;
    } else if (c.params.top_k == 0) {
      EXPECT_GE(agree, draws - 2) << c.name;
    }
  }
}

TEST(CudaSampling, RowsThatProcessLogitsStayOnTheHost) {
  const std::vector<int32_t> none;
  SamplingParams p;
  SamplerRow row{nullptr, &p, &none, &none, 1, 0};
  EXPECT_TRUE(DeviceSamplingFor(row).on_device);
  p.logprobs = 0;
  EXPECT_FALSE(DeviceSamplingFor(row).on_device);
  p.logprobs = -1;
  p.presence_penalty = 0.5f;
  EXPECT_FALSE(DeviceSamplingFor(row).on_device);
  p.presence_penalty = 0;
  p.logit_bias = {{3, 1.f}};
  EXPECT_FALSE(DeviceSamplingFor(row).on_device);
  p.logit_bias.clear();
  const int32_t mask[1] = {-1};
  row.grammar_mask = mask;
  row.grammar_mask_words = 1;
  EXPECT_FALSE(DeviceSamplingFor(row).on_device);
}

}  // namespace
}  // namespace llmserve::worker
