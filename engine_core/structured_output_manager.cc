#include "engine_core/structured_output_manager.h"

#include <glog/logging.h>

#include "engine_core/structured_output/constraint.h"

namespace llmserve::engine_core {

namespace so = structured_output;

StructuredOutputManager::StructuredOutputManager(VocabularyLoader loader, size_t max_cached)
    : loader_(std::move(loader)), max_cached_(max_cached), thread_([this] { CompileLoop(); }) {}

StructuredOutputManager::~StructuredOutputManager() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  jobs_.Push(Job{});  // wakes the thread; a job without a promise means stop
  thread_.join();
}

GrammarFuture StructuredOutputManager::Submit(const proto::StructuredOutputsParams& params) {
  std::string key = params.CacheKey();
  if (auto it = cache_.find(key); it != cache_.end()) {
    ++cache_hits_;
    return it->second;
  }
  if (cache_.size() >= max_cached_) EvictFinished();
  auto done = std::make_shared<std::promise<StatusOr<CompiledGrammarPtr>>>();
  GrammarFuture future = done->get_future().share();
  cache_.emplace(std::move(key), future);
  jobs_.Push(Job{params, std::move(done)});
  return future;
}

void StructuredOutputManager::EvictFinished() {
  // Drop compiled grammars (requests using them hold their own reference);
  // compilations still running stay so their waiters share them.
  std::erase_if(cache_, [](const auto& entry) {
    return entry.second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
}

void StructuredOutputManager::WaitForCompiled(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  compiled_cv_.wait_for(lock, timeout, [&] { return compiled_ != waited_upto_ || stop_; });
  waited_upto_ = compiled_;
}

int64_t StructuredOutputManager::num_compiled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_;
}

StatusOr<CompiledGrammarPtr> StructuredOutputManager::Compile(const proto::StructuredOutputsParams& params) {
  LLMSERVE_ASSIGN_OR_RETURN(std::shared_ptr<const so::Grammar> grammar, so::GrammarForConstraint(params));
  if (!vocab_loaded_) {
    vocab_loaded_ = true;
    const auto start = std::chrono::steady_clock::now();
    StatusOr<GrammarVocabulary> loaded =
        loader_ ? loader_() : StatusOr<GrammarVocabulary>(Status::Unavailable("no tokenizer"));
    if (loaded.ok()) {
      vocab_ = loaded->vocab;
      reasoning_end_id_.store(loaded->reasoning_end_id, std::memory_order_release);
    } else {
      vocab_ = loaded.status();
    }
    if (vocab_.ok()) {
      LOG(INFO) << "structured outputs: vocabulary of " << (*vocab_)->size() << " tokens ready in "
                << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
                       .count()
                << " ms";
    } else {
      LOG(ERROR) << "structured outputs are unavailable: " << vocab_.status().ToString();
    }
  }
  if (!vocab_.ok()) return vocab_.status().WithContext("structured outputs are unavailable");
  return so::CompiledGrammar::Compile(std::move(grammar), *vocab_);
}

void StructuredOutputManager::CompileLoop() {
  while (true) {
    std::optional<Job> job = jobs_.Pop(std::chrono::milliseconds(1000));
    if (!job) continue;
    if (!job->done) return;  // the destructor's wake-up
    job->done->set_value(Compile(job->params));
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++compiled_;
    }
    compiled_cv_.notify_all();
  }
}

}  // namespace llmserve::engine_core
