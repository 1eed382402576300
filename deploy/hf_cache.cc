#include "deploy/hf_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace llmserve::deploy {

namespace fs = std::filesystem;

namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

std::string Trimmed(std::string text) {
  const size_t end = text.find_last_not_of(" \t\r\n");
  text.resize(end == std::string::npos ? 0 : end + 1);
  return text.substr(std::min(text.size(), text.find_first_not_of(" \t\r\n")));
}

bool IsDirectory(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

}  // namespace

HfCacheEnvironment HfCacheEnvironment::FromProcess() {
  return {Env("HF_HUB_CACHE"), Env("HF_HOME"), Env("XDG_CACHE_HOME"), Env("HOME")};
}

std::string HfCacheEnvironment::HubDirectory() const {
  if (!hf_hub_cache.empty()) return hf_hub_cache;
  if (!hf_home.empty()) return (fs::path(hf_home) / "hub").string();
  if (!xdg_cache_home.empty()) return (fs::path(xdg_cache_home) / "huggingface" / "hub").string();
  return (fs::path(home.empty() ? "/" : home) / ".cache" / "huggingface" / "hub").string();
}

bool LooksLikeHfId(const std::string& model) {
  const size_t slash = model.find('/');
  if (slash == std::string::npos || model.find('/', slash + 1) != std::string::npos) return false;
  const std::string org = model.substr(0, slash), name = model.substr(slash + 1);
  auto part_ok = [](const std::string& p) { return !p.empty() && p != "." && p != ".."; };
  return part_ok(org) && part_ok(name) && org[0] != '~';
}

StatusOr<std::string> FindHfSnapshot(const std::string& repo_id, const std::string& revision,
                                     const std::string& hub_dir) {
  std::string folder = "models--" + repo_id;
  for (size_t at = folder.find('/'); at != std::string::npos; at = folder.find('/', at)) folder.replace(at, 1, "--");
  const fs::path repo = fs::path(hub_dir) / folder;
  const std::string rev = revision.empty() ? "main" : revision;
  const fs::path ref = repo / "refs" / rev;
  std::ifstream ref_file(ref);
  if (ref_file) {
    std::string hash;
    std::getline(ref_file, hash);
    hash = Trimmed(hash);
    const fs::path snapshot = repo / "snapshots" / hash;
    if (!hash.empty() && IsDirectory(snapshot)) return snapshot.string();
    return Status::NotFound("Hugging Face cache entry " + ref.string() + " names commit '" + hash + "', but " +
                            snapshot.string() + " does not exist; the cache is incomplete (llmserve does not "
                            "download models: fetch it again, e.g. `huggingface-cli download " + repo_id + "`)");
  }
  const fs::path snapshot = repo / "snapshots" / rev;
  if (rev.find('/') == std::string::npos && IsDirectory(snapshot)) return snapshot.string();
  return Status::NotFound("model '" + repo_id + "' (revision " + rev + ") is neither a local directory nor in the "
                          "Hugging Face cache: looked for " + ref.string() + " and " + snapshot.string() +
                          " (the cache is $HF_HUB_CACHE, else $HF_HOME/hub, else "
                          "$XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub). "
                          "llmserve does not download models: fetch it first, e.g. `huggingface-cli download " +
                          repo_id + (revision.empty() ? "" : " --revision " + revision) +
                          "`, or pass the model directory");
}

StatusOr<ResolvedModel> ResolveModel(const std::string& model, const std::string& revision,
                                     const HfCacheEnvironment& env) {
  std::error_code ec;
  if (fs::exists(model, ec) || !LooksLikeHfId(model)) return ResolvedModel{model, ""};
  LLMSERVE_ASSIGN_OR_RETURN(std::string dir, FindHfSnapshot(model, revision, env.HubDirectory()));
  return ResolvedModel{dir, model};
}

}  // namespace llmserve::deploy
