// The two tiny Qwen3 models of ../shared/reference/tiny-model: built from
// their recipe (make_random_model.py) once into the build directory, they
// must give reference.json's 16 greedy tokens, and our logits must match the
// numpy references (qwen3_ref.py's margins, ref_forward.py's logits) within
// 1e-3 relative error on the fp32 matmul path. Skips where ../shared is absent.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "tests/worker/worker_test_util.h"

namespace llmserve::worker {
namespace {

namespace fs = std::filesystem;

const char* kSharedDir = "../shared/reference/tiny-model";

std::string Run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

// Builds (or reuses) the model `name` from the recipe; returns its directory.
std::string BuildSharedModel(const nlohmann::json& entry) {
  const std::string name = entry["name"];
  const fs::path root = fs::read_symlink("/proc/self/exe").parent_path() / "shared_tiny_models";
  const fs::path dir = root / name;
  const std::string want_sha = entry["safetensors_sha256"];
  auto sha = [&] {
    std::string s = Run("sha256sum " + (dir / "model.safetensors").string() + " 2>/dev/null");
    return s.substr(0, s.find(' '));
  };
  if (fs::exists(dir / "model.safetensors") && sha() == want_sha) return dir.string();
  auto tok = FindDemoTokenizerDir();
  if (!tok.ok()) return "";
  std::string args = entry["generator_command"];  // "make_random_model.py --tokenizer-dir TOKDIR --out OUT/name ..."
  args = args.substr(args.find(' ') + 1);
  args.replace(args.find("TOKDIR"), 6, *tok);
  args.replace(args.find("OUT/"), 4, root.string() + "/");
  const std::string cmd = std::string("/usr/bin/python3 ") + kSharedDir + "/make_random_model.py " + args + " >/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  EXPECT_EQ(sha(), want_sha) << "the recipe did not reproduce " << name;
  return dir.string();
}

TEST(SharedTinyModel, GreedyTokensAndLogitsMatchReferences) {
  if (!fs::exists(std::string(kSharedDir) + "/reference.json")) {
    GTEST_SKIP() << kSharedDir << " is absent (it lives beside the repository, not in it)";
  }
  if (!testing::HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  nlohmann::json ref;
  std::ifstream(std::string(kSharedDir) + "/reference.json") >> ref;
  std::vector<int32_t> prompt = ref["prompt_tokens"].get<std::vector<int32_t>>();
  kernels::cpu::ThreadPool pool(2);
  for (const auto& entry : ref["models"]) {
    SCOPED_TRACE(entry["name"].get<std::string>());
    const std::string dir = BuildSharedModel(entry);
    ASSERT_FALSE(dir.empty()) << "no tokenizer directory (run scripts/setup)";
    LoadOptions opts;
    opts.show_progress = false;
    auto model = Model::Load(dir, opts, nullptr, &pool);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const size_t vocab = (*model)->config().vocab_size;
    KvCache cache((*model)->CacheShape(4, 32));
    // Greedy: prefill the prompt, then decode 15 more tokens one at a time.
    std::vector<int32_t> tokens = prompt, greedy;
    std::vector<float> margins, step_logits;
    std::vector<int32_t> blocks = {2, 0};
    size_t done = 0;
    while (greedy.size() < 16) {
      ForwardBatch b;
      std::vector<int32_t> chunk(tokens.begin() + done, tokens.end());
      b.AddRequest(chunk, static_cast<int32_t>(done), blocks, 32, true);
      b.FinishBlockTables();
      std::vector<float> logits;
      ASSERT_TRUE((*model)->Forward(b, cache, &logits).ok());
      size_t top = 0, second = 1;
      if (logits[1] > logits[0]) std::swap(top, second);
      for (size_t v = 2; v < vocab; ++v) {
        if (logits[v] > logits[top]) {
          second = top;
          top = v;
        } else if (logits[v] > logits[second]) {
          second = v;
        }
      }
      greedy.push_back(static_cast<int32_t>(top));
      margins.push_back(logits[top] - logits[second]);
      step_logits.insert(step_logits.end(), logits.begin(), logits.end());
      done = tokens.size();
      tokens.push_back(static_cast<int32_t>(top));
    }
    EXPECT_EQ(greedy, entry["greedy_tokens"].get<std::vector<int32_t>>());

    // qwen3_ref.py (the shared numpy reference): same tokens, margins within 1e-3 relative.
    testing::ScratchDir scratch;
    std::string list;
    for (size_t i = 0; i < prompt.size(); ++i) {
      if (i > 0) list.push_back(',');
      list.append(std::to_string(prompt[i]));
    }
    const std::string cmd = std::string("/usr/bin/python3 ") + kSharedDir + "/qwen3_ref.py " + dir + " --tokens " +
                            list + " --n 16 --json-out " + (scratch / "q.json") + " >/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    nlohmann::json q;
    std::ifstream(scratch / "q.json") >> q;
    EXPECT_EQ(greedy, q["greedy_tokens"].get<std::vector<int32_t>>());
    double scale = 0;
    for (float v : step_logits) scale = std::max(scale, static_cast<double>(std::abs(v)));
    const auto ref_margins = q["top1_minus_top2_logit"].get<std::vector<double>>();
    for (size_t i = 0; i < margins.size(); ++i) {
      EXPECT_LE(std::abs(margins[i] - ref_margins[i]) / scale, 1e-3) << "step " << i;
    }
    // Full logits of every step against ref_forward.py over the same 21 tokens.
    tokens.pop_back();
    const auto full = testing::ReferenceLogits(dir, tokens, vocab, scratch / "full.f32");
    std::vector<float> ref_steps(full.begin() + (prompt.size() - 1) * vocab, full.end());
    const double err = testing::MaxRelativeError(step_logits, ref_steps);
    EXPECT_LE(err, 1e-3);
    std::printf("%s: 16 greedy tokens match; max relative logit error %.3g\n",
                entry["name"].get<std::string>().c_str(), err);
  }
}

}  // namespace
}  // namespace llmserve::worker
