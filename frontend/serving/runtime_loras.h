#pragma once
// RuntimeLoras: the LoRA adapters one API server serves, and vLLM's
// /v1/load_lora_adapter and /v1/unload_lora_adapter behind them.
//
// The engines are the source of truth: a load asks every ready engine rank
// to read the adapter (utility call add_lora) and answers 200 only once all
// have it; an unload forgets the name here and tells every rank
// (remove_lora; a rank keeps the adapter for the requests already using
// it). Another API server learns of the change from the engines
// (list_loras): when a request names a model it does not know, and at each
// GET /v1/models. So a request may land on any API server and any rank
// right after the 200.
//
// Without a utility caller (runtime updating off) the adapters are fixed at
// start and nothing here talks to the engines.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/blocking_queue.h"
#include "base/status_or.h"
#include "frontend/openai/api_error.h"
#include "frontend/openai/lora_cards.h"

namespace llmserve::frontend::serving {

// Calls a utility method on every ready engine; results in rank order.
using UtilityCaller = std::function<StatusOr<std::vector<std::string>>(
    const std::string& method, const std::vector<std::string>& args, std::chrono::milliseconds timeout)>;

class RuntimeLoras {
 public:
  // `startup`: --lora-modules' cards; `default_parent`: the served model's
  // name; `call`: null when adapters cannot change at run time.
  RuntimeLoras(std::vector<openai::LoraCard> startup, std::string default_parent, UtilityCaller call);
  ~RuntimeLoras();
  RuntimeLoras(const RuntimeLoras&) = delete;
  RuntimeLoras& operator=(const RuntimeLoras&) = delete;

  bool runtime_updating() const { return call_ != nullptr; }
  // True when `model` names a served adapter (asking the engines on a miss).
  bool Serves(const std::string& model);
  // The served adapters, as the engines know them when runtime updating is on.
  std::vector<openai::LoraCard> Cards();

  // What a load or unload answers: 200 with `text`, or `error`.
  struct Answer {
    std::optional<openai::ApiError> error;
    std::string text;
  };
  // vLLM's load_lora_adapter / unload_lora_adapter (lora_int_id is not
  // needed: names are unique). Blocking; see Post.
  Answer Load(const std::string& name, const std::string& path);
  Answer Unload(const std::string& name);
  // An engine rank sent its ReadyResponse: one that restarted or joined
  // knows only the --lora-modules adapters, so every adapter another rank
  // serves is loaded on it (add_lora to all ranks; those that hold it
  // already refuse, harmlessly). Quick: the work runs on this object's thread.
  void OnRankReady();
  // Runs `task` on this object's own thread (loads read files and wait for
  // every engine; the HTTP I/O threads must not).
  void Post(std::function<void()> task) { tasks_.Push(std::move(task)); }

 private:
  // The adapters any engine rank serves (list_loras), by name; nullopt when no rank answered.
  std::optional<std::vector<openai::LoraCard>> EngineCards();
  // Replaces the cards with EngineCards() (kept when no rank answered).
  void Sync();
  void Run();

  openai::LoraCardSet cards_;
  std::string default_parent_;
  UtilityCaller call_;
  std::mutex change_mu_;  // one load or unload at a time
  base::BlockingQueue<std::function<void()>> tasks_;  // an empty function stops Run
  std::thread thread_;
};

}  // namespace llmserve::frontend::serving
