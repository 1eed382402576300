#include "deploy/make_lora_adapter.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "worker/test_lora_adapter.h"

namespace llmserve::deploy {

const char* const kMakeLoraAdapterUsage =
    "   or: llmserve make-model --lora-adapter DIR --base MODEL_DIR [--lora-rank R] [--lora-alpha X]\n"
    "         [--lora-targets q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj] [--rslora true|false]\n"
    "         [--seed N] [--std X] [--dtype f32|bf16|f16]\n"
    "Writes a PEFT LoRA adapter (adapter_config.json, adapter_model.safetensors) for the model in\n"
    "MODEL_DIR: rank R (default 8), lora_alpha X (default 16), the listed target modules (default all\n"
    "seven; MLP targets skip mixture-of-experts layers), A and B both ~ N(0, std²) (default 0.05, seeded\n"
    "by --seed and the tensor name) so that, unlike a fresh PEFT adapter, it changes the outputs.\n";

namespace {

bool ParseAdapterCount(const std::string& s, size_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0' || s[0] == '-') return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool ParseAdapterReal(const std::string& s, double* out) {
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

}  // namespace

int RunMakeLoraAdapter(std::map<std::string, std::string> opts) {
  auto take = [&](const char* k) {
    auto it = opts.find(k);
    if (it == opts.end()) return std::string();
    std::string v = it->second;
    opts.erase(it);
    return v;
  };
  auto usage = [](const std::string& what) {
    std::fprintf(stderr, "llmserve make-model: %s\n%s", what.c_str(), kMakeLoraAdapterUsage);
    return 2;
  };
  const std::string out = take("lora-adapter"), base = take("base");
  if (out.empty() || base.empty()) return usage("--lora-adapter DIR needs --base MODEL_DIR");
  worker::TestLoraSpec spec;
  size_t seed = spec.seed;
  if (auto v = take("lora-rank"); !v.empty() && (!ParseAdapterCount(v, &spec.rank) || spec.rank == 0)) {
    return usage("--lora-rank wants a positive integer, got '" + v + "'");
  }
  if (auto v = take("seed"); !v.empty() && !ParseAdapterCount(v, &seed)) return usage("--seed wants a non-negative integer");
  spec.seed = seed;
  for (const auto& [k, p] : {std::pair<const char*, double*>{"lora-alpha", &spec.lora_alpha}, {"std", &spec.std}}) {
    if (auto v = take(k); !v.empty() && !ParseAdapterReal(v, p)) return usage(std::string("--") + k + " wants a number");
  }
  if (auto v = take("lora-targets"); !v.empty()) {
    spec.targets.clear();
    size_t begin = 0;
    while (begin <= v.size()) {
      const size_t comma = v.find(',', begin);
      const std::string t = v.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
      if (!t.empty()) spec.targets.push_back(t);
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
  }
  if (auto v = take("rslora"); !v.empty()) {
    if (v != "true" && v != "false") return usage("--rslora wants true or false");
    spec.use_rslora = v == "true";
  }
  if (auto v = take("dtype"); !v.empty()) spec.dtype = v;
  if (!opts.empty()) return usage("unknown option --" + opts.begin()->first + " with --lora-adapter");
  const Status st = worker::WriteTestLoraAdapter(spec, base, out);
  if (!st.ok()) {
    std::fprintf(stderr, "llmserve make-model: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s (LoRA rank %zu, alpha %g, %zu target modules, for %s)\n", out.c_str(), spec.rank,
              spec.lora_alpha, spec.targets.size(), base.c_str());
  return 0;
}

}  // namespace llmserve::deploy
