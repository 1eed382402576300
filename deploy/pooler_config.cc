#include "deploy/pooler_config.h"

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "base/status_or.h"

namespace llmserve::deploy {

namespace {

StatusOr<bool> WantsPoolingRunner(const PoolingRunnerFlags& f) {
  if (f.runner != "auto" && f.runner != "generate" && f.runner != "pooling")
    return Status::InvalidArgument("--runner must be auto, generate or pooling, got '" + f.runner + "'" +
                                   (f.runner == "draft" ? " (draft models are not supported)" : ""));
  if (f.convert != "auto" && f.convert != "none" && f.convert != "embed")
    return Status::InvalidArgument("--convert must be auto, none or embed, got '" + f.convert +
                                   "' (classification and reward models are not supported)");
  if (f.task != "auto" && f.task != "generate" && f.task != "embed")
    return Status::InvalidArgument("--task must be auto, generate or embed, got '" + f.task + "'");
  const bool pooling = f.runner == "pooling" || f.convert == "embed" || f.task == "embed";
  const bool generate = f.runner == "generate" || f.task == "generate";
  if (pooling && generate)
    return Status::InvalidArgument("--runner / --task ask for generation and --runner / --convert / --task for "
                                   "embedding: choose one");
  return pooling;
}

StatusOr<nlohmann::json> ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(path.string() + " is not valid JSON");
  return j;
}

// A sentence-transformers directory's pooling: modules.json names a Pooling
// module whose config.json sets one pooling_mode_*, and a Normalize module
// when the embeddings are normalized.
Status ApplySentenceTransformers(const std::string& model_dir, proto::PoolerConfig* pooler) {
  const std::filesystem::path dir(model_dir), modules_file = dir / "modules.json";
  if (!std::filesystem::is_regular_file(modules_file)) return Status::Ok();
  LLMSERVE_ASSIGN_OR_RETURN(const nlohmann::json modules, ReadJsonFile(modules_file));
  if (!modules.is_array()) return Status::InvalidArgument(modules_file.string() + ": expected a list of modules");
  bool has_pooling = false, normalize = false;
  for (const auto& m : modules) {
    const std::string type = m.is_object() ? m.value("type", "") : "";
    if (type == "sentence_transformers.models.Normalize") normalize = true;
    if (type != "sentence_transformers.models.Pooling") continue;
    const auto config_file = dir / m.value("path", "") / "config.json";
    LLMSERVE_ASSIGN_OR_RETURN(const nlohmann::json config, ReadJsonFile(config_file));
    has_pooling = true;
    if (config.value("pooling_mode_lasttoken", false)) pooler->set_pooling_type("LAST");
    else if (config.value("pooling_mode_mean_tokens", false)) pooler->set_pooling_type("MEAN");
    else if (config.value("pooling_mode_cls_token", false)) pooler->set_pooling_type("CLS");
    else return Status::InvalidArgument(config_file.string() + ": only lasttoken, mean_tokens and cls_token pooling "
                                        "modes are supported");
  }
  if (has_pooling) pooler->set_normalize(normalize);
  return Status::Ok();
}

Status ApplyPoolerConfigJson(const std::string& flag, const std::string& text, proto::PoolerConfig* pooler) {
  if (text.empty()) return Status::Ok();
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument(flag + " must be a JSON object, got '" + text + "'");
  for (const auto& [key, value] : j.items()) {
    if (key == "pooling_type") {
      static const std::set<std::string> kTypes = {"LAST", "MEAN", "CLS"};
      if (!value.is_string() || !kTypes.count(value.get<std::string>()))
        return Status::InvalidArgument(flag + ": pooling_type must be \"LAST\", \"MEAN\" or \"CLS\", got " +
                                       value.dump());
      pooler->set_pooling_type(value.get<std::string>());
    } else if (key == "normalize") {
      if (!value.is_boolean()) return Status::InvalidArgument(flag + ": normalize must be true or false");
      pooler->set_normalize(value.get<bool>());
    } else if (!value.is_null()) {
      return Status::InvalidArgument(flag + ": key '" + key + "' is not supported (only pooling_type and normalize)");
    }
  }
  return Status::Ok();
}

}  // namespace

Status ResolvePoolingRunner(const PoolingRunnerFlags& flags, const std::string& model_dir, proto::ModelConfig* model) {
  LLMSERVE_ASSIGN_OR_RETURN(const bool pooling, WantsPoolingRunner(flags));
  if (!pooling) {
    if (!flags.pooler_config.empty() || !flags.override_pooler_config.empty())
      return Status::InvalidArgument("--pooler-config needs the pooling runner (--runner pooling)");
    model->clear_pooler();
    return Status::Ok();
  }
  proto::PoolerConfig* pooler = model->mutable_pooler();
  pooler->set_pooling_type("LAST");
  pooler->set_normalize(true);
  LLMSERVE_RETURN_IF_ERROR(ApplySentenceTransformers(model_dir, pooler));
  LLMSERVE_RETURN_IF_ERROR(ApplyPoolerConfigJson("--override-pooler-config", flags.override_pooler_config, pooler));
  return ApplyPoolerConfigJson("--pooler-config", flags.pooler_config, pooler);
}

}  // namespace llmserve::deploy
