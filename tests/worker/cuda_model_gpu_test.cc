// The CUDA forward pass against the CPU f32 path on generated checkpoints of
// every architecture, teacher-forced over the same chunks: logits within
// bf16 tolerance and the same greedy token wherever the CPU's top-2 margin
// exceeds 0.5. Skips with "no CUDA device" where none is visible.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/programmatic_launch.h"
#include "tests/worker/worker_test_util.h"
#include "worker/cuda/cuda_model.h"

namespace llmserve::worker {
namespace {

using testing::Prompt;
using testing::ScratchDir;

// bf16 matmul inputs and K/V against fp32 ones: the error grows with depth,
// and the bound is the deepest model's measured error with headroom
// (figures: docs/perf/2026-11-26-cuda-backend.md).
constexpr double kRelativeTolerance = 4e-2;

// Logits of every position of `tokens`, run as the given chunks.
std::vector<float> RunOnGpu(cuda::CudaModel& model, const std::vector<int32_t>& tokens,
                            const std::vector<size_t>& chunks, const std::vector<int32_t>& blocks, size_t block_size) {
  std::vector<float> all;
  size_t done = 0;
  for (size_t n : chunks) {
    ForwardBatch b;
    std::vector<int32_t> chunk(tokens.begin() + done, tokens.begin() + done + n);
    b.AddRequest(chunk, static_cast<int32_t>(done), blocks, block_size, false);
    for (size_t i = 0; i < n; ++i) b.logits_indices.push_back(static_cast<int32_t>(i));
    b.FinishBlockTables();
    std::vector<float> logits;
    Status st = model.Forward(b, &logits);
    EXPECT_TRUE(st.ok()) << st.ToString();
    all.insert(all.end(), logits.begin(), logits.end());
    done += n;
  }
  return all;
}

// Counts positions where the CPU's top-2 margin exceeds 0.5 and how many of
// them the GPU's argmax agrees with.
std::pair<size_t, size_t> GreedyAgreement(const std::vector<float>& gpu, const std::vector<float>& cpu, size_t vocab) {
  size_t confident = 0, agree = 0;
  for (size_t p = 0; p * vocab < cpu.size(); ++p) {
    const float* c = &cpu[p * vocab];
    const float* g = &gpu[p * vocab];
    size_t best = 0, gbest = 0;
    for (size_t v = 1; v < vocab; ++v) {
      if (c[v] > c[best]) best = v;
      if (g[v] > g[gbest]) gbest = v;
    }
    float second = -INFINITY;
    for (size_t v = 0; v < vocab; ++v)
      if (v != best) second = std::max(second, c[v]);
    if (c[best] - second > 0.5f) {
      ++confident;
      agree += best == gbest;
    }
  }
  return {confident, agree};
}

// Programmatic dependent launch changes when kernels start, not what they
// compute: the same pass with every kernel launched plainly gives the same
// logits bit for bit.
void ExpectPlainLaunchesMatch(cuda::CudaModel& model, const std::vector<float>& want,
                              const std::vector<int32_t>& tokens, const std::vector<size_t>& chunks,
                              const std::vector<int32_t>& blocks, size_t block_size,
                              const std::vector<size_t>& graph_sizes) {
  namespace kc = kernels::cuda;
  kc::SetProgrammaticLaunch(kc::LaunchGroup::kGemv, false);
  kc::SetProgrammaticLaunch(kc::LaunchGroup::kAttention, false);
  ASSERT_TRUE(model.AllocateKvCache(model.kv_num_blocks()).ok());
  model.SetCudaGraphSizes(graph_sizes);  // drops graphs captured with programmatic launches
  const auto plain = RunOnGpu(model, tokens, chunks, blocks, block_size);
  kc::SetProgrammaticLaunch(kc::LaunchGroup::kGemv, true);
  kc::SetProgrammaticLaunch(kc::LaunchGroup::kAttention, true);
  ASSERT_EQ(plain.size(), want.size());
  EXPECT_EQ(std::memcmp(plain.data(), want.data(), want.size() * sizeof(float)), 0)
      << "logits differ between programmatic and plain launches";
}

void CheckAgainstCpu(const std::string& name, const TestModelSpec& spec, const std::vector<size_t>& chunks,
                     const std::vector<size_t>& graph_sizes = {}) {
  if (kernels::cuda::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  const std::string model_dir = dir / "model";
  Status st = WriteTestModel(spec, model_dir);
  ASSERT_TRUE(st.ok()) << st.ToString();
  size_t len = 0;
  for (size_t n : chunks) len += n;
  const size_t block_size = 16, num_blocks = (len + block_size - 1) / block_size;
  const auto tokens = Prompt(len, spec.vocab_size, static_cast<uint32_t>(spec.seed));
  const auto blocks = testing::Blocks(2, static_cast<int32_t>(num_blocks));

  kernels::cpu::ThreadPool pool(0);
  LoadOptions opts;
  opts.precision = kernels::cpu::MatmulPrecision::kF32;
  opts.show_progress = false;
  auto cpu_model = Model::Load(model_dir, opts, nullptr, &pool);
  ASSERT_TRUE(cpu_model.ok()) << cpu_model.status().ToString();
  KvCache cache((*cpu_model)->CacheShape(num_blocks + 2, block_size));
  const auto cpu = testing::RunPrompt(**cpu_model, cache, tokens, chunks, blocks);

  auto config = LoadModelConfig(model_dir);
  ASSERT_TRUE(config.ok());
  auto weights = cuda::LoadCudaWeights(model_dir, *config, false);
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  auto gpu_model = cuda::CudaModel::Create(*config, std::move(*weights), block_size);
  ASSERT_TRUE(gpu_model.ok()) << gpu_model.status().ToString();
  ASSERT_TRUE((*gpu_model)->AllocateKvCache(num_blocks + 2).ok());
  (*gpu_model)->SetCudaGraphSizes(graph_sizes);
  const auto gpu = RunOnGpu(**gpu_model, tokens, chunks, blocks, block_size);
  ASSERT_EQ(gpu.size(), cpu.size());

  const double err = testing::MaxRelativeError(gpu, cpu);
  const auto [confident, agree] = GreedyAgreement(gpu, cpu, spec.vocab_size);
  std::printf(
      "%s: %zu positions, max |gpu - cpu| / max |cpu| = %.3g; greedy agrees at %zu of %zu positions with "
      "CPU margin > 0.5\n",
      name.c_str(), len, err, agree, confident);
  EXPECT_LE(err, kRelativeTolerance);
  EXPECT_EQ(agree, confident);
  ExpectPlainLaunchesMatch(**gpu_model, gpu, tokens, chunks, blocks, block_size, graph_sizes);
}

TEST(CudaModelGpu, Qwen3MatchesCpuThroughPrefillAndDecode) {
  // A long prefill in two chunks, then decodes past 256 keys (split-K attention).
  std::vector<size_t> chunks = {300, 250};
  for (int i = 0; i < 10; ++i) chunks.push_back(1);
  CheckAgainstCpu("qwen3", testing::TinySpec("qwen3"), chunks);
}

TEST(CudaModelGpu, Qwen3DecodeThroughCudaGraphsMatchesCpu) {
  // Single decodes padded to a capture size of 2: one real request, one padding request.
  std::vector<size_t> chunks = {40};
  for (int i = 0; i < 8; ++i) chunks.push_back(1);
  CheckAgainstCpu("qwen3 graphs", testing::TinySpec("qwen3", 8), chunks, {2, 8});
}

TEST(CudaModelGpu, BatchedDecodeThroughCudaGraphsMatchesCpu) {
  // Three requests decode together (padded to 4) after their own prefills;
  // each request's logits match its CPU run alone.
  if (kernels::cuda::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const TestModelSpec spec = testing::TinySpec("qwen3", 9);
  ScratchDir dir;
  const std::string model_dir = dir / "model";
  ASSERT_TRUE(WriteTestModel(spec, model_dir).ok());
  const size_t block_size = 16, vocab = spec.vocab_size, steps = 6;
  const std::vector<size_t> prompt_lens = {5, 33, 70};
  kernels::cpu::ThreadPool pool(0);
  LoadOptions opts;
  opts.precision = kernels::cpu::MatmulPrecision::kF32;
  opts.show_progress = false;
  auto cpu_model = Model::Load(model_dir, opts, nullptr, &pool);
  ASSERT_TRUE(cpu_model.ok());
  auto config = LoadModelConfig(model_dir);
  auto weights = cuda::LoadCudaWeights(model_dir, *config, false);
  ASSERT_TRUE(weights.ok());
  auto gpu_model = cuda::CudaModel::Create(*config, std::move(*weights), block_size);
  ASSERT_TRUE(gpu_model.ok());
  ASSERT_TRUE((*gpu_model)->AllocateKvCache(32).ok());
  (*gpu_model)->SetCudaGraphSizes({1, 4});
  std::vector<std::vector<int32_t>> tokens, blocks;
  std::vector<std::vector<float>> want;  // CPU logits of each decode step
  for (size_t r = 0; r < prompt_lens.size(); ++r) {
    tokens.push_back(Prompt(prompt_lens[r] + steps, vocab, static_cast<uint32_t>(r)));
    blocks.push_back(testing::Blocks(static_cast<int32_t>(1 + 8 * r), 8));
    std::vector<size_t> chunks = {prompt_lens[r]};
    chunks.resize(1 + steps, 1);
    KvCache cache((*cpu_model)->CacheShape(32, block_size));
    const auto all = testing::RunPrompt(**cpu_model, cache, tokens[r], chunks, blocks[r]);
    want.emplace_back(all.end() - static_cast<std::ptrdiff_t>(steps * vocab), all.end());
    // The GPU prefill runs eagerly (more than one token).
    ForwardBatch b;
    b.AddRequest(std::vector<int32_t>(tokens[r].begin(), tokens[r].begin() + prompt_lens[r]), 0, blocks[r], block_size,
                 false);
    b.FinishBlockTables();
    std::vector<float> ignored;
    ASSERT_TRUE((*gpu_model)->Forward(b, &ignored).ok());
  }
  std::vector<std::vector<float>> got(prompt_lens.size());
  for (size_t s = 0; s < steps; ++s) {
    ForwardBatch b;
    for (size_t r = 0; r < prompt_lens.size(); ++r) {
      const size_t pos = prompt_lens[r] + s;
      b.AddRequest({tokens[r][pos]}, static_cast<int32_t>(pos), blocks[r], block_size, true);
    }
    b.FinishBlockTables();
    std::vector<float> logits;
    Status st = (*gpu_model)->Forward(b, &logits);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(logits.size(), prompt_lens.size() * vocab);
    for (size_t r = 0; r < prompt_lens.size(); ++r)
      got[r].insert(got[r].end(), logits.begin() + static_cast<std::ptrdiff_t>(r * vocab),
                    logits.begin() + static_cast<std::ptrdiff_t>((r + 1) * vocab));
  }
  for (size_t r = 0; r < prompt_lens.size(); ++r) {
    const double err = testing::MaxRelativeError(got[r], want[r]);
    std::printf("batched graph decode, request %zu: max |gpu - cpu| / max |cpu| = %.3g\n", r, err);
    EXPECT_LE(err, kRelativeTolerance) << "request " << r;
  }
}

TEST(CudaModelGpu, Qwen2QkvBiasUntiedMatchesCpu) {
  auto s = testing::TinySpec("qwen2", 2);
  s.tie_word_embeddings = false;
  CheckAgainstCpu("qwen2", s, {19, 1, 1, 5});
}

TEST(CudaModelGpu, LlamaLlama3RopeF16MatchesCpu) {
  auto s = testing::TinySpec("llama", 3);
  s.tie_word_embeddings = false;
  s.dtype = "f16";
  s.rope_theta = 500000;
  s.num_kv_heads = 1;
  s.head_dim = 32;
  s.rope_scaling_json =
      R"({"rope_type":"llama3","factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":64})";
  CheckAgainstCpu("llama", s, {24, 1, 1, 9});
}

TEST(CudaModelGpu, MistralSlidingWindowMatchesCpu) {
  auto s = testing::TinySpec("mistral", 5);
  s.tie_word_embeddings = false;
  s.sliding_window = 6;
  s.rope_theta = 10000;
  CheckAgainstCpu("mistral", s, {20, 1, 1, 4});
}

TEST(CudaModelGpu, Qwen3_0_6bShapeMatchesCpu) {
  auto spec = TestModelPreset("qwen3-0.6b", "qwen3");
  ASSERT_TRUE(spec.ok());
  TestModelSpec s = *spec;
  s.seed = 7;
  s.norm_jitter = 0.1;
  s.std = 0.05;
  if (const char* layers = std::getenv("LLMSERVE_GPU_TEST_LAYERS")) s.num_layers = std::stoul(layers);
  CheckAgainstCpu("qwen3-0.6b-shape", s, {37, 1, 1, 1});
}

// A tensor-parallel rank's weights are its rows of q/k/v and gate/up and
// its columns of o and down: the two halves of TP 2 put back together are
// the whole model's matrices, bit for bit.
TEST(CudaModelGpu, TensorParallelShardsTileTheWholeWeights) {
  if (kernels::cuda::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  const std::string model_dir = dir / "model";
  ASSERT_TRUE(WriteTestModel(testing::TinySpec("qwen3", 5), model_dir).ok());
  auto config = LoadModelConfig(model_dir);
  ASSERT_TRUE(config.ok());
  auto whole = cuda::LoadCudaWeights(model_dir, *config, false);
  auto half0 = cuda::LoadCudaWeights(model_dir, *config, false, {0, 2});
  auto half1 = cuda::LoadCudaWeights(model_dir, *config, false, {1, 2});
  ASSERT_TRUE(whole.ok() && half0.ok() && half1.ok()) << half1.status().ToString();
  auto host = [](const kernels::cuda::DeviceArray<kernels::cuda::Bf16>& d) {
    std::vector<uint16_t> h(d.size());
    EXPECT_EQ(cudaMemcpy(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  };
  const size_t h = config->hidden_size, hd = config->head_dim, ff = config->intermediate_size;
  const size_t q = config->num_heads * hd, kv = config->num_kv_heads * hd;
  const auto& w = whole->layers[1];
  const auto& a = half0->layers[1];
  const auto& b = half1->layers[1];
  // q/k/v: each of q, k, v split by rows, rank 0's half first.
  const auto qkv = host(w.qkv), qkv0 = host(a.qkv), qkv1 = host(b.qkv);
  size_t whole_row = 0, local_row = 0;
  for (size_t part : {q, kv, kv}) {
    for (size_t r = 0; r < part; ++r) {
      const auto& half = r < part / 2 ? qkv0 : qkv1;
      const size_t at = (r < part / 2 ? local_row + r : local_row + r - part / 2) * h;
      ASSERT_EQ(std::memcmp(&qkv[(whole_row + r) * h], &half[at], h * sizeof(uint16_t)), 0) << "qkv row " << r;
    }
    whole_row += part;
    local_row += part / 2;
  }
  // down: [hidden × ff], split by columns.
  const auto down = host(w.down), down0 = host(a.down), down1 = host(b.down);
  for (size_t r = 0; r < h; ++r) {
    ASSERT_EQ(std::memcmp(&down[r * ff], &down0[r * ff / 2], ff / 2 * sizeof(uint16_t)), 0) << "down row " << r;
    ASSERT_EQ(std::memcmp(&down[r * ff + ff / 2], &down1[r * ff / 2], ff / 2 * sizeof(uint16_t)), 0);
  }
  EXPECT_EQ(a.o.size(), h * q / 2);
  EXPECT_EQ(a.gate_up.size(), 2 * ff / 2 * h);
  EXPECT_EQ(half1->embedding.size(), whole->embedding.size());
  EXPECT_FALSE(cuda::TpLocalConfig(*config, 3).ok());  // 3 does not divide the heads
}

// The tensor-parallel path at size 1: with a one-rank NCCL group every
// projection goes through ncclAllReduce (eagerly and inside CUDA graphs),
// and the logits are those of the model without one, bit for bit.
TEST(CudaModelGpu, OneRankNcclGroupGivesTheSameLogits) {
  if (kernels::cuda::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  auto id = kernels::cuda::NcclCommunicator::NewId();
  if (!id.ok()) GTEST_SKIP() << id.status().message();
  auto nccl = kernels::cuda::NcclCommunicator::Create(0, 1, *id);
  ASSERT_TRUE(nccl.ok()) << nccl.status().ToString();
  const TestModelSpec spec = testing::TinySpec("qwen3", 6);
  ScratchDir dir;
  const std::string model_dir = dir / "model";
  ASSERT_TRUE(WriteTestModel(spec, model_dir).ok());
  auto config = LoadModelConfig(model_dir);
  ASSERT_TRUE(config.ok());
  auto weights = cuda::LoadCudaWeights(model_dir, *config, false);
  ASSERT_TRUE(weights.ok());
  const size_t block_size = 16;
  auto model = cuda::CudaModel::Create(*config, std::move(*weights), block_size);
  ASSERT_TRUE(model.ok());
  std::vector<size_t> chunks = {30};
  chunks.resize(7, 1);
  const auto tokens = Prompt(36, spec.vocab_size, 6);
  const auto blocks = testing::Blocks(1, 3);
  auto run = [&](kernels::cuda::NcclCommunicator* comm) {
    EXPECT_TRUE((*model)->AllocateKvCache(4).ok());
    (*model)->SetCudaGraphSizes({1, 2});
    (*model)->SetCommunicator(comm);
    return RunOnGpu(**model, tokens, chunks, blocks, block_size);
  };
  const auto alone = run(nullptr);
  const auto grouped = run(nccl->get());
  ASSERT_EQ(alone.size(), grouped.size());
  EXPECT_EQ(std::memcmp(alone.data(), grouped.data(), alone.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace llmserve::worker
