#include "deploy/model_argument.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

DEFINE_string(revision, "",
              "With a Hugging Face id as MODEL: the branch, tag or commit to take from the local HF cache "
              "(default main). llmserve does not download models.");
DEFINE_string(download_dir, "",
              "With a Hugging Face id as MODEL: the Hugging Face cache directory to look in instead of "
              "$HF_HUB_CACHE (vLLM downloads there; llmserve only reads).");

namespace llmserve::deploy {

StatusOr<ResolvedModel> ResolveModelArgument(const std::string& model) {
  HfCacheEnvironment env = HfCacheEnvironment::FromProcess();
  if (!FLAGS_download_dir.empty()) env.hf_hub_cache = FLAGS_download_dir;  // vLLM's cache_dir for the hub
  LLMSERVE_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveModel(model, FLAGS_revision, env));
  if (!resolved.hf_id.empty()) {
    LOG(INFO) << "model " << resolved.hf_id << (FLAGS_revision.empty() ? "" : " at revision " + FLAGS_revision)
              << ": " << resolved.dir << " (local Hugging Face cache)";
  } else if (!FLAGS_revision.empty()) {
    LOG(WARNING) << "--revision has no effect: '" << model << "' is a local path";
  }
  return resolved;
}

}  // namespace llmserve::deploy
