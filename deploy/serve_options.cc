#include "deploy/serve_options.h"

namespace llmserve::deploy {

StatusOr<RestartPolicy> ParseRestartPolicy(std::string_view text) {
  if (text == "never") return RestartPolicy::kNever;
  if (text == "on-failure") return RestartPolicy::kOnFailure;
  return Status::InvalidArgument("--restart-policy must be never or on-failure, got '" + std::string(text) + "'");
}

}  // namespace llmserve::deploy
