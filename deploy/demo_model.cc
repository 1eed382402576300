#include "deploy/demo_model.h"

#include <glog/logging.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "worker/model_config.h"
#include "worker/test_model.h"

namespace llmserve::deploy {

namespace {

namespace fs = std::filesystem;

// The demo's context: small enough that the default KV cache (max_num_seqs
// requests of the full context) stays a few hundred MiB.
constexpr size_t kDemoContext = 4096;

bool IsCurrentDemo(const std::string& dir) {
  auto config = worker::LoadModelConfig(dir);
  return config.ok() && config->max_position_embeddings == kDemoContext;
}

}  // namespace

StatusOr<std::string> EnsureDemoModel() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string root = cache ? cache : std::string(home ? home : "/tmp") + "/.cache";
  const std::string dir = root + "/llmserve/demo-qwen3-tiny";
  if (IsCurrentDemo(dir)) return dir;
  LOG(INFO) << "no MODEL_DIR given: generating the demo model (tiny Qwen3, random weights) in " << dir;
  auto spec = worker::TestModelPreset("tiny", "qwen3");
  if (!spec.ok()) return spec.status();
  spec->max_position_embeddings = kDemoContext;
  // Written beside and renamed into place, so launchers started at once (the
  // "nodes" of a deployment on one host) never read a half-written model.
  const std::string staging = dir + ".partial-" + std::to_string(::getpid());
  const std::string old = dir + ".old-" + std::to_string(::getpid());
  LLMSERVE_RETURN_IF_ERROR(worker::WriteTestModel(*spec, staging).WithContext("generating the demo model"));
  std::error_code ec;
  if (fs::exists(dir, ec) && !IsCurrentDemo(dir)) fs::rename(dir, old, ec);
  fs::rename(staging, dir, ec);
  fs::remove_all(staging, ec);  // another launcher's copy won the race
  fs::remove_all(old, ec);
  if (!IsCurrentDemo(dir)) return Status::Internal("cannot put the demo model in place at " + dir);
  return dir;
}

}  // namespace llmserve::deploy
