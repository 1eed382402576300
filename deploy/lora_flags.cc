#include "deploy/lora_flags.h"

#include <gflags/gflags.h>

#include <nlohmann/json.hpp>
#include <set>

DEFINE_bool(enable_lora, false, "Serve LoRA adapters (PEFT directories) on top of the model (CPU backend).");
DEFINE_string(lora_modules, "",
              "LoRA adapters served from start, one or more values: name=path, or JSON "
              "'{\"name\": \"x\", \"path\": \"/dir\", \"base_model_name\": \"m\"}'. Requests pick one with "
              "\"model\": \"name\"; /v1/models lists each. Needs --enable-lora.");
DEFINE_int32(max_loras, 1, "Most distinct LoRA adapters in one step; requests of a further adapter wait.");
DEFINE_int32(max_lora_rank, 16, "Largest LoRA rank accepted: 1, 8, 16, 32, 64, 128, 256, 320 or 512.");
DEFINE_int32(max_cpu_loras, 0,
             "LoRA adapters held in memory; 0 = --max-loras. Must be at least --max-loras. Beyond it the least "
             "recently used adapter no running request uses is evicted, and read again when a request names it.");

namespace llmserve::deploy {

Status ParseLoraModules(const std::string& values, std::vector<proto::LoraModule>* out) {
  size_t begin = 0;
  while (begin < values.size()) {
    size_t end = values.find('\n', begin);
    if (end == std::string::npos) end = values.size();
    const std::string v = values.substr(begin, end - begin);
    begin = end + 1;
    if (v.empty()) continue;
    proto::LoraModule m;
    if (v[0] == '{') {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(v);
      } catch (const nlohmann::json::exception& e) {
        return Status::InvalidArgument("--lora-modules: not valid JSON: " + v);
      }
      for (const char* k : {"name", "path"}) {
        if (!j.contains(k) || !j[k].is_string() || j[k].get<std::string>().empty())
          return Status::InvalidArgument(std::string("--lora-modules: \"") + k + "\" (a string) is required in " + v);
      }
      m.set_name(j["name"].get<std::string>());
      m.set_path(j["path"].get<std::string>());
      if (j.contains("base_model_name") && !j["base_model_name"].is_null()) {
        if (!j["base_model_name"].is_string())
          return Status::InvalidArgument("--lora-modules: \"base_model_name\" must be a string in " + v);
        m.set_base_model_name(j["base_model_name"].get<std::string>());
      }
    } else {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        return Status::InvalidArgument("--lora-modules: '" + v + "' is neither name=path nor JSON");
      m.set_name(v.substr(0, eq));
      m.set_path(v.substr(eq + 1));
    }
    out->push_back(std::move(m));
  }
  return Status::Ok();
}

Status LoraConfigFromFlags(const std::string& served_name, proto::LoraConfig* config) {
  if (FLAGS_max_loras < 1) return Status::InvalidArgument("--max-loras must be at least 1");
  static const std::set<int> kRanks = {1, 8, 16, 32, 64, 128, 256, 320, 512};
  if (kRanks.count(FLAGS_max_lora_rank) == 0)
    return Status::InvalidArgument("--max-lora-rank (" + std::to_string(FLAGS_max_lora_rank) +
                                   ") must be one of 1, 8, 16, 32, 64, 128, 256, 320, 512");
  const int cpu = FLAGS_max_cpu_loras == 0 ? FLAGS_max_loras : FLAGS_max_cpu_loras;
  if (cpu < FLAGS_max_loras)
    return Status::InvalidArgument("--max-cpu-loras (" + std::to_string(cpu) + ") must be at least --max-loras (" +
                                   std::to_string(FLAGS_max_loras) + ")");
  std::vector<proto::LoraModule> modules;
  LLMSERVE_RETURN_IF_ERROR(ParseLoraModules(FLAGS_lora_modules, &modules));
  if (!modules.empty() && !FLAGS_enable_lora) return Status::InvalidArgument("--lora-modules needs --enable-lora");
  std::set<std::string> names;
  for (const auto& m : modules) {
    if (m.name() == served_name)
      return Status::InvalidArgument("--lora-modules: adapter name '" + m.name() + "' is the served model's name");
    if (!names.insert(m.name()).second)
      return Status::InvalidArgument("--lora-modules: adapter name '" + m.name() + "' is given twice");
  }
  config->set_enable_lora(FLAGS_enable_lora);
  config->set_max_loras(static_cast<uint32_t>(FLAGS_max_loras));
  config->set_max_lora_rank(static_cast<uint32_t>(FLAGS_max_lora_rank));
  config->set_max_cpu_loras(static_cast<uint32_t>(cpu));
  for (auto& m : modules) *config->add_modules() = std::move(m);
  return Status::Ok();
}

std::vector<std::string> JoinLoraModuleArgs(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  std::string joined;
  size_t at = std::string::npos;  // where the joined flag goes in `out`
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    std::vector<std::string> values;
    if (a == "--lora-modules" || a == "--lora_modules") {
      while (i + 1 < args.size() && !args[i + 1].starts_with("-") &&
             (args[i + 1].find('=') != std::string::npos || args[i + 1].starts_with("{"))) {
        values.push_back(args[++i]);
      }
    } else if (a.starts_with("--lora-modules=") || a.starts_with("--lora_modules=")) {
      values.push_back(a.substr(a.find('=') + 1));
    } else {
      out.push_back(a);
      continue;
    }
    if (at == std::string::npos) {
      at = out.size();
      out.emplace_back();
    }
    for (const auto& v : values) joined += (joined.empty() ? "" : "\n") + v;
  }
  if (at != std::string::npos) out[at] = "--lora-modules=" + joined;
  return out;
}

}  // namespace llmserve::deploy
