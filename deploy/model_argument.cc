#include "deploy/model_argument.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

DEFINE_string(revision, "",
              "With a Hugging Face id as MODEL: the branch, tag or commit to take from the local HF cache "
              "(default main). llmserve does not download models.");

namespace llmserve::deploy {

StatusOr<ResolvedModel> ResolveModelArgument(const std::string& model) {
  LLMSERVE_ASSIGN_OR_RETURN(ResolvedModel resolved,
                            ResolveModel(model, FLAGS_revision, HfCacheEnvironment::FromProcess()));
  if (!resolved.hf_id.empty()) {
    LOG(INFO) << "model " << resolved.hf_id << (FLAGS_revision.empty() ? "" : " at revision " + FLAGS_revision)
              << ": " << resolved.dir << " (local Hugging Face cache)";
  } else if (!FLAGS_revision.empty()) {
    LOG(WARNING) << "--revision has no effect: '" << model << "' is a local path";
  }
  return resolved;
}

}  // namespace llmserve::deploy
