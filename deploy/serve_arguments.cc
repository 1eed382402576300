#include "deploy/serve_arguments.h"

#include <gflags/gflags.h>

#include <algorithm>
#include <string_view>

#include "deploy/lora_flags.h"

namespace llmserve::deploy {

namespace {

std::string Underscored(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// If args[*i] is `name VALUE` or `name=VALUE`, stores VALUE, moves *i to
// the last argument taken and returns true.
StatusOr<bool> TakeFlag(const std::vector<std::string>& args, size_t* i, const std::string& name,
                        std::string* value) {
  const std::string& arg = args[*i];
  if (arg == name) {
    if (*i + 1 >= args.size()) return Status::InvalidArgument(name + " needs a value");
    *value = args[++*i];
    return true;
  }
  if (!arg.starts_with(name + "=")) return false;
  *value = arg.substr(name.size() + 1);
  return true;
}

// Removes `--config FILE` and `--model M` (vLLM's older spelling of the
// positional MODEL) from `args`, before any "--".
Status TakeConfigAndModel(std::vector<std::string>* args, std::string* config, std::string* model) {
  std::vector<std::string> rest;
  int configs = 0;
  for (size_t i = 0; i < args->size(); ++i) {
    if ((*args)[i] == "--") {
      rest.insert(rest.end(), args->begin() + static_cast<std::ptrdiff_t>(i), args->end());
      break;
    }
    LLMSERVE_ASSIGN_OR_RETURN(const bool is_config, TakeFlag(*args, &i, "--config", config));
    if (is_config && ++configs > 1) return Status::InvalidArgument("--config may be given once");
    if (is_config) continue;
    LLMSERVE_ASSIGN_OR_RETURN(const bool is_model, TakeFlag(*args, &i, "--model", model));
    if (!is_model) rest.push_back((*args)[i]);
  }
  *args = std::move(rest);
  return Status::Ok();
}

}  // namespace

StatusOr<ServeArguments> PrepareServeArguments(const std::vector<std::string>& cli_args, const IsOurFlag& is_ours,
                                               const ListStyleOf& list_style) {
  std::vector<std::string> cli = cli_args;
  std::string config_path, model_flag;
  LLMSERVE_RETURN_IF_ERROR(TakeConfigAndModel(&cli, &config_path, &model_flag));
  ConfigFileArgs config;
  if (!config_path.empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(config, ReadConfigFile(config_path, list_style));
  }
  ServeArguments out;
  std::set<std::string> warned;
  // Filtered apart: a list-valued vLLM flag at the end of the file must not take the command line's MODEL.
  LLMSERVE_ASSIGN_OR_RETURN(std::vector<std::string> from_config,
                            FilterVllmFlags(config.args, is_ours, &warned, &out.warnings));
  LLMSERVE_ASSIGN_OR_RETURN(std::vector<std::string> from_cli, FilterVllmFlags(cli, is_ours, &warned, &out.warnings));
  out.args = std::move(from_config);
  out.args.insert(out.args.end(), from_cli.begin(), from_cli.end());
  out.args = JoinLoraModuleArgs(out.args);
  out.model = model_flag.empty() ? config.model : model_flag;
  return out;
}

bool GflagsIsOurs(const std::string& dashed_name) {
  gflags::CommandLineFlagInfo info;
  const std::string name = Underscored(dashed_name);
  if (gflags::GetCommandLineFlagInfo(name.c_str(), &info)) return true;
  for (std::string_view prefix : {"no_", "no"}) {  // --no-x, and gflags' own --nox
    if (!name.starts_with(prefix)) continue;
    if (gflags::GetCommandLineFlagInfo(name.substr(prefix.size()).c_str(), &info) && info.type == "bool") return true;
  }
  return false;
}

ListStyle GflagsListStyle(const std::string& dashed_name) {
  // --lora-modules takes several values as vLLM's does (JoinLoraModuleArgs).
  if (dashed_name == "lora-modules") return ListStyle::kSeparateValues;
  return GflagsIsOurs(dashed_name) ? ListStyle::kSingleValue : ListStyle::kSeparateValues;
}

}  // namespace llmserve::deploy
