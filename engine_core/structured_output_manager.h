#pragma once
// StructuredOutputManager: compiles requests' grammars off the step loop and
// caches them by constraint (vLLM's StructuredOutputManager). One compile
// thread takes constraints in arrival order; equal constraints (same
// StructuredOutputsParams::CacheKey) compile once and share the result. The
// vocabulary (each token's bytes, from the model's tokenizer) is loaded on
// the compile thread the first time a grammar needs it, so engines that never
// see a structured request pay nothing.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/blocking_queue.h"
#include "base/status_or.h"
#include "engine_core/structured_output/compiled_grammar.h"
#include "engine_core/structured_output/vocabulary.h"
#include "proto/structured_outputs_params.h"

namespace llmserve::engine_core {

using CompiledGrammarPtr = std::shared_ptr<const structured_output::CompiledGrammar>;
// The outcome of one compilation, shared by every request with that constraint.
using GrammarFuture = std::shared_future<StatusOr<CompiledGrammarPtr>>;
using VocabularyPtr = std::shared_ptr<const structured_output::Vocabulary>;

// What the manager reads from the model's tokenizer.
struct GrammarVocabulary {
  VocabularyPtr vocab;             // each token's bytes, EOS and special ids
  int32_t reasoning_end_id = -1;   // the "</think>" token, or -1 when the tokenizer has none
};

class StructuredOutputManager final {
 public:
  // Loads the vocabulary; called at most once, on the compile thread.
  using VocabularyLoader = std::function<StatusOr<GrammarVocabulary>()>;

  // `max_cached` bounds the compiled grammars kept for reuse.
  explicit StructuredOutputManager(VocabularyLoader loader, size_t max_cached = 512);
  ~StructuredOutputManager();
  StructuredOutputManager(const StructuredOutputManager&) = delete;
  StructuredOutputManager& operator=(const StructuredOutputManager&) = delete;

  // The grammar of `params`: the cached one, or a compilation queued now.
  // Called from the engine's main loop only.
  GrammarFuture Submit(const proto::StructuredOutputsParams& params);

  // Waits until a compilation finishes after the last call, or `timeout`.
  void WaitForCompiled(std::chrono::milliseconds timeout);

  // The token that ends reasoning (-1: none). Valid once some grammar
  // compiled (the vocabulary is loaded before the first one resolves).
  int32_t reasoning_end_id() const { return reasoning_end_id_.load(std::memory_order_acquire); }

  // Constraints compiled so far and cache hits (for tests and logs).
  int64_t num_compiled() const;
  int64_t num_cache_hits() const { return cache_hits_; }

 private:
  struct Job {
    proto::StructuredOutputsParams params;
    std::shared_ptr<std::promise<StatusOr<CompiledGrammarPtr>>> done;
  };

  void CompileLoop();
  StatusOr<CompiledGrammarPtr> Compile(const proto::StructuredOutputsParams& params);
  void EvictFinished();

  VocabularyLoader loader_;
  const size_t max_cached_;
  std::unordered_map<std::string, GrammarFuture> cache_;  // main loop only
  int64_t cache_hits_ = 0;                                 // main loop only
  base::BlockingQueue<Job> jobs_;
  std::thread thread_;
  bool stop_ = false;  // guarded by mu_

  // The compile thread's state.
  StatusOr<VocabularyPtr> vocab_ = Status::Unavailable("not loaded");
  bool vocab_loaded_ = false;
  std::atomic<int32_t> reasoning_end_id_{-1};

  mutable std::mutex mu_;
  std::condition_variable compiled_cv_;
  int64_t compiled_ = 0;      // guarded by mu_
  int64_t waited_upto_ = 0;   // main loop's last seen compiled_, guarded by mu_
};

}  // namespace llmserve::engine_core
