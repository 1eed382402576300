// Scheduler, part 4: structured outputs. Requests wait in
// WAITING_FOR_STRUCTURED_OUTPUT_GRAMMAR while the manager compiles their
// grammar; each step the constrained requests that sample get a bitmask row
// in the SchedulerOutput; each sampled token advances the request's matcher.
// A request that reasons first (reasoning_ended false) is unconstrained until
// it samples the end-of-reasoning token.
// See scheduler.h.
#include <glog/logging.h>

#include "engine_core/scheduler.h"

namespace llmserve::engine_core {

void Scheduler::PromoteCompiledGrammars() {
  std::vector<int32_t> ready;
  for (int32_t h : grammar_waiting_) {
    const GrammarFuture& f = requests_[h]->structured_output->grammar;
    if (f.wait_for(std::chrono::seconds(0)) == std::future_status::ready) ready.push_back(h);
  }
  for (int32_t h : ready) {
    std::erase(grammar_waiting_, h);
    Request& r = *requests_[h];
    const StatusOr<CompiledGrammarPtr>& compiled = r.structured_output->grammar.get();
    if (compiled.ok()) {
      r.structured_output->matcher = std::make_unique<structured_output::GrammarMatcher>(*compiled);
      r.structured_output->reasoning_end_id = structured_->reasoning_end_id();
      // A tokenizer without an end-of-reasoning token: constrain from the start.
      if (r.structured_output->reasoning_end_id < 0) r.structured_output->reasoning_ended = true;
      r.status = RequestStatus::kWaiting;
      continue;
    }
    LOG(WARNING) << "request " << r.request_id << ": " << compiled.status().ToString();
    grammar_failures_.push_back({r.request_id, r.client_index, compiled.status().message()});
    CHECK(waiting_.Remove(h)) << "request " << r.request_id << " waited for its grammar outside the queue";
    r.status = RequestStatus::kFinishedError;
    ReleaseFinished(h);
  }
}

void Scheduler::FillGrammarBitmask() {
  auto& rows = output_.structured_output_request_ids;
  std::vector<int32_t>& words = output_.grammar_bitmask.words;
  rows.clear();
  words.clear();
  for (const Scheduled& s : decision_) {
    Request& r = *requests_[s.handle];
    // Only requests whose last prompt chunk (or decode token) runs this step sample.
    if (r.structured_output == nullptr || r.num_computed_tokens < r.num_tokens()) continue;
    if (!r.structured_output->reasoning_ended) continue;  // free text until </think>
    structured_output::GrammarMatcher& m = *r.structured_output->matcher;
    const size_t width = static_cast<size_t>(m.compiled().vocab().mask_words());
    const auto row = static_cast<int32_t>(rows.size());
    rows.emplace(r.request_id, row);
    words.resize(words.size() + width);
    m.FillNextTokenBitmask(words.data() + words.size() - width);
  }
}

bool Scheduler::AdvanceGrammar(Request& r, int32_t token) {
  StructuredOutputRequest& so = *r.structured_output;
  if (!so.reasoning_ended) {
    // The end-of-reasoning token itself is not part of the constrained output.
    so.reasoning_ended = token == so.reasoning_end_id;
    return true;
  }
  structured_output::GrammarMatcher& m = *so.matcher;
  if (!m.AcceptToken(token)) {
    // Only a worker that ignored the bitmask gets here.
    LOG(ERROR) << "request " << r.request_id << ": token " << token << " violates its grammar";
    r.status = RequestStatus::kFinishedError;
    return false;
  }
  if (m.IsTerminated()) {  // EOS ended the grammar: nothing more may follow
    r.status = RequestStatus::kFinishedStopped;
    return false;
  }
  return true;
}

void Scheduler::EmitGrammarFailures() {
  for (GrammarFailure& f : grammar_failures_) {
    proto::EngineCoreOutput& out = NextOutput(f.client_index);
    out.request_id = std::move(f.request_id);
    out.new_token_ids.clear();
    out.finish_reason = proto::FinishReason::kError;
    out.error_code = StatusCode::kInvalidArgument;
    out.error_message = std::move(f.message);
  }
  grammar_failures_.clear();
}

}  // namespace llmserve::engine_core
