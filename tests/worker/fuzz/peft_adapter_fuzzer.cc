// libFuzzer target over PEFT LoRA adapter loading (worker/lora_adapter.h):
// the input is adapter_config.json, optionally followed by a NUL byte and
// adapter_model.safetensors (without one, the weights of a valid rank-8
// adapter for the tiny Qwen3 test model); the adapter is loaded for both
// shards of tensor parallel size 2 and for one shard. Asserts: an accepted
// adapter has a rank in [1, --max-lora-rank], a finite scale, one entry per
// layer and factors of the sizes its rank and shard give.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "worker/lora_adapter.h"
#include "worker/model_config.h"
#include "worker/model_loader.h"
#include "worker/test_lora_adapter.h"
#include "worker/test_model.h"
#include "tests/fuzz_require.h"

namespace llmserve::worker::peft_fuzz {

namespace fs = std::filesystem;

using llmserve::testing::FuzzRequire;

struct Setup {
  std::string adapter_dir;    // where each input is written
  std::string valid_weights;  // adapter_model.safetensors of a valid adapter
  ModelConfig config;
  std::vector<ShardDims> shards;  // tp 1, then ranks 0 and 1 of tp 2
};

const Setup& TheSetup() {
  static const Setup* setup = [] {
    const fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    const std::string root = (base / ("llmserve-peft-fuzz-" + std::to_string(::getpid()))).string();
    static std::string root_copy = root;
    std::atexit([] { fs::remove_all(root_copy); });
    TestModelSpec spec;
    spec.vocab_size = 512;
    spec.tokenizer_dir = LLMSERVE_DEMO_TOKENIZER_DIR;
    FuzzRequire(WriteTestModel(spec, root + "/model").ok(), "cannot write the test model");
    TestLoraSpec lora;
    FuzzRequire(WriteTestLoraAdapter(lora, root + "/model", root + "/valid").ok(), "cannot write the test adapter");
    auto* s = new Setup();
    s->adapter_dir = root + "/adapter";
    fs::create_directories(s->adapter_dir);
    std::ifstream in(root + "/valid/adapter_model.safetensors", std::ios::binary);
    s->valid_weights.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    auto config = LoadModelConfig(root + "/model");
    FuzzRequire(config.ok(), "cannot read the test model's config");
    s->config = *config;
    for (auto [rank, size] : {std::pair<size_t, size_t>{0, 1}, {0, 2}, {1, 2}}) {
      auto dims = ComputeShardDims(s->config, rank, size);
      FuzzRequire(dims.ok(), "cannot shard the test model");
      s->shards.push_back(*dims);
    }
    return s;
  }();
  return *setup;
}

void Write(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace llmserve::worker::peft_fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = llmserve::worker::peft_fuzz;
  using namespace llmserve::worker;
  const f::Setup& s = f::TheSetup();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  f::Write(s.adapter_dir + "/adapter_config.json", input.substr(0, nul));
  f::Write(s.adapter_dir + "/adapter_model.safetensors",
           nul == std::string_view::npos ? std::string_view(s.valid_weights) : input.substr(nul + 1));
  LoraLimits limits;
  for (const ShardDims& shard : s.shards) {
    auto adapter = LoadLoraAdapter("fuzz", s.adapter_dir, s.config, shard, limits);
    if (!adapter.ok()) {
      f::FuzzRequire(!adapter.status().message().empty(), "an error without a message");
      continue;
    }
    const LoraAdapter& a = **adapter;
    f::FuzzRequire(a.rank >= 1 && a.rank <= limits.max_rank, "rank outside [1, max_lora_rank]");
    f::FuzzRequire(std::isfinite(a.scale), "the scale is not finite");
    f::FuzzRequire(a.layers.size() == s.config.num_layers, "not one entry per layer");
    for (const auto& layer : a.layers) {
      for (const LoraProjection& p : layer) {
        if (p.empty()) continue;
        const size_t a_size = p.bf16() ? p.a_t16.size() : p.a_t.size();
        const size_t b_size = p.bf16() ? p.b_t16.size() : p.b_t.size();
        f::FuzzRequire(p.in > 0 && p.out > 0 && a_size == p.in * a.rank && b_size == a.rank * p.out,
                       "factors of the wrong size");
      }
    }
  }
  return 0;
}
