#include "deploy/model_argument.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <filesystem>

DEFINE_string(revision, "",
              "With a Hugging Face id as MODEL: the branch, tag or commit to take from the local HF cache "
              "(default main). llmserve does not download models.");
DEFINE_string(download_dir, "",
              "With a Hugging Face id as MODEL: the Hugging Face cache directory to look in instead of "
              "$HF_HUB_CACHE (vLLM downloads there; llmserve only reads).");

DEFINE_string(tokenizer, "",
              "Tokenizer (and chat template) from this directory or Hugging Face id in the local cache instead of "
              "the model's; \"\": the model's own.");

namespace llmserve::deploy {

StatusOr<ModelArgument> ResolveModelArgument(const std::string& model) {
  HfCacheEnvironment env = HfCacheEnvironment::FromProcess();
  if (!FLAGS_download_dir.empty()) env.hf_hub_cache = FLAGS_download_dir;  // vLLM's cache_dir for the hub
  LLMSERVE_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveModel(model, FLAGS_revision, env));
  if (!resolved.hf_id.empty()) {
    LOG(INFO) << "model " << resolved.hf_id << (FLAGS_revision.empty() ? "" : " at revision " + FLAGS_revision)
              << ": " << resolved.dir << " (local Hugging Face cache)";
  } else if (!FLAGS_revision.empty()) {
    LOG(WARNING) << "--revision has no effect: '" << model << "' is a local path";
  }
  ModelArgument out{resolved.dir, resolved.hf_id, ""};
  LLMSERVE_ASSIGN_OR_RETURN(out.tokenizer_dir, ResolveTokenizerFlag());
  if (out.tokenizer_dir.empty()) out.tokenizer_dir = out.dir;
  return out;
}

StatusOr<std::string> ResolveTokenizerFlag() {
  if (FLAGS_tokenizer.empty()) return std::string();
  HfCacheEnvironment env = HfCacheEnvironment::FromProcess();
  if (!FLAGS_download_dir.empty()) env.hf_hub_cache = FLAGS_download_dir;
  LLMSERVE_ASSIGN_OR_RETURN(ResolvedModel resolved, ResolveModel(FLAGS_tokenizer, "", env));
  if (!std::filesystem::is_directory(resolved.dir))
    return Status::InvalidArgument("--tokenizer: directory '" + resolved.dir + "' does not exist");
  return std::filesystem::absolute(resolved.dir).string();
}

}  // namespace llmserve::deploy
