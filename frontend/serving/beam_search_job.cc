#include "frontend/serving/beam_search_job.h"

#include <limits>
#include <optional>

#include <glog/logging.h>

#include "base/wall_clock.h"
#include "frontend/metrics/request_tracker.h"
#include "frontend/openai/api_error.h"
#include "frontend/serving/chat_output.h"

namespace llmserve::frontend::serving {

namespace {

// One engine row's candidates: column 0 is the sampled token, then the top ones.
std::vector<BeamCandidate> RowCandidates(const proto::Logprobs& logprobs) {
  std::vector<BeamCandidate> row;
  if (logprobs.token_ids.empty()) return row;
  const auto& ids = logprobs.token_ids[0];
  const auto& lps = logprobs.logprobs[0];
  for (size_t k = 0; k < ids.size() && k < lps.size(); ++k) row.emplace_back(ids[k], lps[k]);
  return row;
}
}  // namespace

struct BeamSearchJob::Search {
  const JobPrompt* prompt = nullptr;
  std::optional<BeamSearch> search;
  proto::SamplingParams step_params;                // every step request's
  bool skip_special_tokens = true;
  std::vector<std::string> in_flight;               // this step's request ids, by beam
  std::vector<std::optional<std::vector<BeamCandidate>>> rows;  // this step's answers, by beam
  size_t answered = 0;
  std::vector<Beam> best;                           // once done
  bool done = false;
};

// The engine client holds each step request's sink until it ends; the sink
// holds the job, so the job lives while any of its step requests runs. Each
// step request is measured in /metrics as the engine request it is (as in
// vLLM, whose beam search goes through the engine client's generate()); one
// aborted or dropped unfinished is recorded as aborted when its sink goes.
class BeamSearchJob::Sink : public OutputSink {
 public:
  Sink(std::shared_ptr<BeamSearchJob> job, size_t p, size_t beam, int32_t step,
       std::unique_ptr<metrics::RequestTracker> tracker)
      : job_(std::move(job)), p_(p), beam_(beam), step_(step), tracker_(std::move(tracker)) {}
  ~Sink() override {
    if (!tracker_->finished()) tracker_->OnFinished(proto::FinishReason::kAbort, metrics::RequestTracker::Clock::now());
  }
  void OnOutput(const proto::EngineCoreOutput& output) override { job_->OnOutput(p_, beam_, step_, output); }
  void OnOutputFrom(const proto::EngineCoreOutput& output, const OutputOrigin& origin) override {
    const auto now = metrics::RequestTracker::Clock::now();
    tracker_->OnOutput(output, origin.engine_rank, origin.engine_timestamp, now);
    if (output.finish_reason) tracker_->OnFinished(*output.finish_reason, now);
    OnOutput(output);
  }
  void OnRouted(uint32_t rank) override { tracker_->OnRouted(rank); }
  void OnError(const Status& status) override {
    tracker_->OnFinished(proto::FinishReason::kError, metrics::RequestTracker::Clock::now());
    job_->OnError(status);
  }

 private:
  std::shared_ptr<BeamSearchJob> job_;
  size_t p_;
  size_t beam_;
  int32_t step_;
  std::unique_ptr<metrics::RequestTracker> tracker_;
};

BeamSearchJob::BeamSearchJob(const ServingContext& context, JobSpec spec, std::shared_ptr<http::ResponseWriter> writer)
    : context_(context), spec_(std::move(spec)), writer_(std::move(writer)), sse_(writer_) {
  meta_.id = spec_.request_id;
  meta_.created = static_cast<int64_t>(base::EpochSeconds());
  meta_.model = spec_.model;
}

BeamSearchJob::~BeamSearchJob() = default;

void BeamSearchJob::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  const int32_t width = std::max(1, spec_.sampling.n);
  for (const JobPrompt& prompt : spec_.prompts) {
    openai::SamplingContext sc;
    sc.prompt_tokens = static_cast<int32_t>(prompt.token_ids.size());
    sc.max_model_len = context_.engine->max_model_len();
    sc.eos_token_ids = context_.eos_token_ids;
    sc.defaults = context_.defaults;
    proto::SamplingParams params;  // for max_tokens (checked against the context), temperature, seed
    if (auto error = openai::ToSamplingParams(spec_.sampling, sc, &params)) {
      writer_->Respond(openai::ErrorResponse(*error));
      responded_ = true;
      return;
    }
    auto s = std::make_unique<Search>();
    s->prompt = &prompt;
    s->skip_special_tokens = params.skip_special_tokens;
    BeamSearchParams bp;
    bp.beam_width = width;
    bp.max_tokens = params.max_tokens.value_or(sc.max_model_len - sc.prompt_tokens);
    bp.ignore_eos = spec_.sampling.ignore_eos;
    bp.length_penalty = spec_.sampling.length_penalty;
    bp.include_stop_str_in_output = spec_.sampling.include_stop_str_in_output;
    if (!context_.eos_token_ids.empty()) bp.eos_token_id = context_.eos_token_ids.front();  // the tokenizer's
    s->search.emplace(bp, prompt.token_ids);
    // vLLM's step request: one token, 2 × beam width logprobs, the request's temperature.
    proto::SamplingParams& step = s->step_params;
    step.n = 1;
    step.temperature = params.temperature;
    step.seed = params.seed;
    step.max_tokens = 1;
    step.logprobs = 2 * width;
    step.detokenize = false;
    step.output_kind = proto::OutputKind::kFinalOnly;
    if (context_.request_log.requests) {
      LOG(INFO) << ReceivedRequestLine(context_.request_log, spec_.request_id, prompt.text, step, prompt.token_ids);
    }
    searches_.push_back(std::move(s));
  }
  writer_->OnDisconnect([weak = weak_from_this()] {
    if (auto job = weak.lock()) job->OnDisconnect();
  });
  for (size_t p = 0; p < searches_.size() && !responded_; ++p) SubmitStep(p);
  if (spec_.sampling.stream && !responded_) {
    sse_.Begin();
    stream_started_ = true;
  }
}

void BeamSearchJob::SubmitStep(size_t p) {
  Search& s = *searches_[p];
  const std::vector<Beam>& live = s.search->live();
  const int32_t step = s.search->steps();
  s.in_flight.clear();
  s.rows.assign(live.size(), std::nullopt);
  s.answered = 0;
  for (size_t b = 0; b < live.size(); ++b) {
    proto::EngineCoreRequest r;
    r.request_id = spec_.request_id + "-" + std::to_string(p) + "-step" + std::to_string(step) + "-beam-" +
                   std::to_string(b);
    r.prompt_token_ids = live[b].tokens;
    r.sampling_params = s.step_params;
    r.arrival_time = base::EpochSeconds();
    r.cache_salt = spec_.sampling.cache_salt;
    r.lora_name = spec_.lora_name;
    r.priority = spec_.sampling.priority;
    if (spec_.data_parallel_rank) {
      try {
        r.data_parallel_rank = std::stoi(*spec_.data_parallel_rank);
      } catch (const std::exception&) {
        return Fail(Status::InvalidArgument("X-data-parallel-rank must be an integer"));
      }
    }
    const std::string id = r.request_id;
    auto tracker = std::make_unique<metrics::RequestTracker>();
    if (context_.metrics) {
      const metrics::TrackedParams tracked{1, 1, context_.engine->max_model_len(), spec_.lora_name.value_or("")};
      tracker = std::make_unique<metrics::RequestTracker>(
          context_.metrics, static_cast<int32_t>(live[b].tokens.size()), metrics::RequestTracker::Clock::now(), tracked);
    }
    auto sink = std::make_shared<Sink>(shared_from_this(), p, b, step, std::move(tracker));
    Status status = context_.engine->Submit(std::move(r), std::move(sink));
    if (!status.ok()) return Fail(status);
    s.in_flight.push_back(id);
  }
}

void BeamSearchJob::OnOutput(size_t p, size_t beam, int32_t step, const proto::EngineCoreOutput& output) {
  std::lock_guard<std::mutex> lock(mu_);
  if (responded_ || p >= searches_.size()) return;
  Search& s = *searches_[p];
  if (s.done || step != s.search->steps() || beam >= s.rows.size() || s.rows[beam]) return;
  if (output.finish_reason && beam < s.in_flight.size()) s.in_flight[beam].clear();  // ended: nothing to abort
  if (output.error_code) {
    return Fail(Status(*output.error_code, output.error_message.value_or("the engine refused the request")));
  }
  if (!output.finish_reason) return;  // final-only outputs: nothing comes before the last
  if (*output.finish_reason == proto::FinishReason::kError) return Fail(Status::Internal("the engine failed the request"));
  if (*output.finish_reason == proto::FinishReason::kAbort) {
    return Fail(Status::Unavailable("the engine aborted a beam search step"));
  }
  if (!output.new_logprobs) return Fail(Status::Internal("the engine answered a beam search step without logprobs"));
  s.rows[beam] = RowCandidates(*output.new_logprobs);
  if (++s.answered < s.rows.size()) return;
  std::vector<std::vector<BeamCandidate>> rows;
  for (auto& row : s.rows) rows.push_back(std::move(*row));
  s.search->Step(rows);
  if (!s.search->done()) return SubmitStep(p);
  s.done = true;
  s.best = s.search->Best();
  FinishIfDone();
}

void BeamSearchJob::FinishIfDone() {
  for (const auto& s : searches_)
    if (!s->done) return;
  responded_ = true;
  if (stream_started_) return StreamChat();
  nlohmann::json body;
  if (spec_.kind == ApiKind::kChat) {
    openai::Usage usage;
    std::vector<openai::ChatChoice> choices = ChatChoices(false, &usage);
    body = openai::ChatCompletionResponse(meta_, choices, usage);
  } else {
    body = CompletionBody();
  }
  writer_->Respond(http::HttpResponse::Make(200, "application/json", openai::Dump(body)));
}

// The text, finish_reason and stop_reason vLLM gives a finished beam.
struct BeamSearchJob::BeamAnswer {
  std::string text;
  std::vector<int32_t> token_ids;
  std::string finish_reason;
  openai::StopReason stop_reason;
  std::optional<std::vector<openai::TokenLogprob>> logprobs;  // when asked for
};

BeamSearchJob::BeamAnswer BeamSearchJob::AnswerOf(const Search& s, const Beam& beam) const {
  const BeamSearch& search = *s.search;
  BeamAnswer a;
  a.text = context_.tokenizer->Decode(search.TextTokens(beam), s.skip_special_tokens);
  a.token_ids = search.OutputTokens(beam);
  a.finish_reason = beam.ended_by_eos ? "stop" : "length";
  if (beam.ended_by_eos) a.stop_reason = *search.params().eos_token_id;  // vLLM reports the EOS id here
  if (spec_.sampling.logprobs) a.logprobs = LogprobsOf(a.token_ids, beam);
  return a;
}

// As vLLM: each output token's logprob from the row it was chosen from, and
// the first `logprobs` entries of that row (at most 2 × n) as its top list.
std::vector<openai::TokenLogprob> BeamSearchJob::LogprobsOf(const std::vector<int32_t>& ids, const Beam& beam) const {
  auto text_of = [&](int32_t id) {
    if (spec_.sampling.return_tokens_as_token_ids) return "token_id:" + std::to_string(id);
    return context_.tokenizer->Decode(std::vector<int32_t>{id}, false);
  };
  const auto top = static_cast<size_t>(std::max(0, *spec_.sampling.logprobs));
  std::vector<openai::TokenLogprob> out;
  for (size_t i = 0; i < ids.size() && i < beam.rows.size(); ++i) {
    const std::vector<BeamCandidate>& row = beam.rows[i];
    openai::TokenLogprob t;
    t.token = text_of(ids[i]);
    t.logprob = -std::numeric_limits<double>::infinity();
    for (const auto& [id, logprob] : row)
      if (id == ids[i]) t.logprob = logprob;
    for (size_t k = 0; k < row.size() && k < top; ++k) t.top.emplace_back(text_of(row[k].first), row[k].second);
    out.push_back(std::move(t));
  }
  return out;
}

void BeamSearchJob::LogOutput(const BeamAnswer& a) const {
  if (!context_.request_log.outputs) return;
  LOG(INFO) << GeneratedResponseLine(context_.request_log, spec_.request_id, a.text, a.token_ids, a.finish_reason);
}

nlohmann::json BeamSearchJob::CompletionBody() const {
  std::vector<openai::CompletionChoice> choices;
  openai::Usage usage;
  for (const auto& s : searches_) {
    usage.prompt_tokens += static_cast<int32_t>(s->prompt->token_ids.size());
    for (const Beam& beam : s->best) {
      BeamAnswer a = AnswerOf(*s, beam);
      usage.completion_tokens += static_cast<int32_t>(a.token_ids.size());
      LogOutput(a);
      openai::CompletionChoice c;
      c.index = static_cast<int32_t>(choices.size());
      c.text = std::move(a.text);
      c.finish_reason = std::move(a.finish_reason);
      c.stop_reason = a.stop_reason;
      c.logprobs = std::move(a.logprobs);
      if (spec_.sampling.return_token_ids) {
        c.prompt_token_ids = s->prompt->token_ids;
        c.token_ids = std::move(a.token_ids);
      }
      choices.push_back(std::move(c));
    }
  }
  return openai::CompletionResponse(meta_, choices, usage);
}

std::vector<openai::ChatChoice> BeamSearchJob::ChatChoices(bool streamed, openai::Usage* usage) const {
  std::vector<openai::ChatChoice> choices;
  for (const auto& s : searches_) {
    usage->prompt_tokens += static_cast<int32_t>(s->prompt->token_ids.size());
    for (const Beam& beam : s->best) {
      BeamAnswer a = AnswerOf(*s, beam);
      usage->completion_tokens += static_cast<int32_t>(a.token_ids.size());
      LogOutput(a);
      openai::ChatChoice c;
      c.index = static_cast<int32_t>(choices.size());
      c.content = a.text;
      c.finish_reason = std::move(a.finish_reason);
      c.stop_reason = a.stop_reason;
      c.logprobs = std::move(a.logprobs);
      if (spec_.chat_output.active()) {
        ChatOutput output(spec_.chat_output);
        if (streamed) {  // one delta with the whole text, as a stream shapes it
          ChatPiece piece = output.Feed(a.text);
          ChatPiece rest = output.Finish();
          c.content = piece.content + rest.content;
          if (piece.reasoning || rest.reasoning) c.reasoning = piece.reasoning.value_or("") + rest.reasoning.value_or("");
          c.tool_calls = std::move(piece.tool_calls);
          for (auto& call : rest.tool_calls) c.tool_calls.push_back(std::move(call));
        } else {
          output.Complete(a.text, &c);
        }
        if (output.tools_called() && c.finish_reason == "stop") c.finish_reason = "tool_calls";
      }
      choices.push_back(std::move(c));
    }
  }
  return choices;
}

// vLLM's chat stream of a beam search: the role chunk of every choice, then
// each choice's whole message with its finish_reason, then the usage chunk.
void BeamSearchJob::StreamChat() {
  openai::Usage usage;
  const std::vector<openai::ChatChoice> choices = ChatChoices(true, &usage);
  const bool continuous = spec_.sampling.continuous_usage_stats;
  auto usage_of = [&](int32_t completion_tokens) {
    return continuous ? std::optional<openai::Usage>(openai::Usage{usage.prompt_tokens, completion_tokens, {}})
                      : std::nullopt;
  };
  for (const auto& c : choices) sse_.Send(openai::Dump(openai::ChatRoleChunk(meta_, c.index, usage_of(0))));
  size_t i = 0;
  for (const auto& s : searches_) {
    for (const Beam& beam : s->best) {
      const auto tokens = static_cast<int32_t>(s->search->OutputTokens(beam).size());
      sse_.Send(openai::Dump(openai::ChatContentChunk(meta_, choices[i++], usage_of(tokens))));
    }
  }
  if (spec_.sampling.include_usage) sse_.Send(openai::Dump(openai::ChatUsageChunk(meta_, usage)));
  sse_.Done();
}

void BeamSearchJob::AbortInFlight() {
  std::vector<std::string> ids;
  for (auto& s : searches_) {
    for (auto& id : s->in_flight)
      if (!id.empty()) ids.push_back(std::move(id));
    s->in_flight.clear();
    s->done = true;
  }
  if (!ids.empty()) context_.engine->Abort(ids);
}

void BeamSearchJob::Fail(const Status& status) {
  AbortInFlight();
  if (responded_) return;
  responded_ = true;
  const openai::ApiError error = openai::FromStatus(status);
  if (stream_started_) {
    sse_.Send(openai::ErrorBody(error));
    sse_.Done();
    return;
  }
  writer_->Respond(openai::ErrorResponse(error));
}

void BeamSearchJob::OnError(const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  Fail(status);
}

void BeamSearchJob::OnDisconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  if (responded_) return;
  responded_ = true;
  LOG(INFO) << "client went away; aborting beam search " << spec_.request_id;
  AbortInFlight();
}

}  // namespace llmserve::frontend::serving
