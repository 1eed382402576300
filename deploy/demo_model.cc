#include "deploy/demo_model.h"

#include <glog/logging.h>

#include <cstdlib>
#include <filesystem>

#include "worker/test_model.h"

namespace llmserve::deploy {

StatusOr<std::string> EnsureDemoModel() {
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::string root = cache ? cache : std::string(home ? home : "/tmp") + "/.cache";
  const std::string dir = root + "/llmserve/demo-qwen3-tiny";
  if (std::filesystem::exists(dir + "/config.json")) return dir;
  LOG(INFO) << "no MODEL_DIR given: generating the demo model (tiny Qwen3, random weights) in " << dir;
  auto spec = worker::TestModelPreset("tiny", "qwen3");
  if (!spec.ok()) return spec.status();
  LLMSERVE_RETURN_IF_ERROR(worker::WriteTestModel(*spec, dir).WithContext("generating the demo model"));
  return dir;
}

}  // namespace llmserve::deploy
