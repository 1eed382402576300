#pragma once
// Models named by Hugging Face id ("Qwen/Qwen3-0.6B"), found in the local
// Hugging Face hub cache the way huggingface_hub lays it out, with no network:
//   <hub>/models--Qwen--Qwen3-0.6B/refs/<revision>   holds a commit hash
//   <hub>/models--Qwen--Qwen3-0.6B/snapshots/<hash>/ is the model directory
// llmserve never downloads; a model missing from the cache is an error that
// names the places it looked.

#include <string>

#include "base/status_or.h"

namespace llmserve::deploy {

// The environment that decides where the hub cache is (huggingface_hub's order).
struct HfCacheEnvironment {
  std::string hf_hub_cache;    // $HF_HUB_CACHE
  std::string hf_home;         // $HF_HOME
  std::string xdg_cache_home;  // $XDG_CACHE_HOME
  std::string home;            // $HOME

  // Reads the variables above from this process's environment.
  static HfCacheEnvironment FromProcess();

  // $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
  // else ~/.cache/huggingface/hub.
  std::string HubDirectory() const;
};

// Whether `model` has the shape of a Hugging Face id: "org/name" (one '/',
// neither part empty, "." or "..", not starting with '/' or '~').
bool LooksLikeHfId(const std::string& model);

// The snapshot directory of `repo_id` at `revision` (a branch or tag with a
// file under refs/, or a commit hash with a snapshot; "" means "main") in
// the hub cache `hub_dir`.
StatusOr<std::string> FindHfSnapshot(const std::string& repo_id, const std::string& revision,
                                     const std::string& hub_dir);

// What a model argument names.
struct ResolvedModel {
  std::string dir;    // the model directory to load
  std::string hf_id;  // the Hugging Face id it was named by; "" for a path
};

// A Hugging Face id that is not an existing path is looked up in the cache of
// `env`; anything else is returned as a path (its user reports a missing one).
StatusOr<ResolvedModel> ResolveModel(const std::string& model, const std::string& revision,
                                     const HfCacheEnvironment& env);

}  // namespace llmserve::deploy
