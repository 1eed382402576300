#include "frontend/serving/generation_job.h"

#include <algorithm>

#include <glog/logging.h>

#include "base/wall_clock.h"
#include "frontend/metrics/request_tracker.h"
#include "frontend/openai/api_error.h"
#include "frontend/serving/prompt_logprobs_output.h"

namespace llmserve::frontend::serving {

struct GenerationJob::Choice {
  size_t index = 0;
  std::string engine_request_id;
  const JobPrompt* prompt = nullptr;
  std::vector<std::string> stop_strings;
  std::vector<int32_t> stop_token_ids;
  std::unique_ptr<common::tokenizer::IncrementalDetokenizer> detokenizer;
  std::string text;                             // everything emitted so far
  std::vector<openai::TokenLogprob> logprobs;   // all of them (non-streaming answer)
  std::vector<int32_t> token_ids;               // output ids (kept for return_token_ids and the output log)
  size_t token_ids_sent = 0;                    // of token_ids, already streamed
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
  std::optional<uint32_t> engine_rank;           // the DP rank serving it, once routed
  bool submitted = false;
  bool finished = false;
  bool role_sent = false;
  bool echoed = false;                          // completion echo: the prompt went out
  std::optional<proto::Logprobs> prompt_logprobs;  // the engine's rows, once they came
  std::optional<std::string> finish_reason;
  openai::StopReason stop_reason;
  std::unique_ptr<metrics::RequestTracker> tracker;  // timing and token counts for /metrics
  std::unique_ptr<ChatOutput> chat_output;           // chat with tools or reasoning; else null
  nlohmann::json kv_transfer_params;                 // the engine's KV connector's, on the last output; else null
};

// The engine client holds a choice's sink until that request ends; the sink
// holds the job, so a job lives exactly as long as one of its requests runs.
class GenerationJob::Sink : public OutputSink {
 public:
  Sink(std::shared_ptr<GenerationJob> job, size_t index) : job_(std::move(job)), index_(index) {}
  void OnOutput(const proto::EngineCoreOutput& output) override { job_->OnOutput(index_, output, nullptr); }
  void OnOutputFrom(const proto::EngineCoreOutput& output, const OutputOrigin& origin) override {
    job_->OnOutput(index_, output, &origin);
  }
  void OnRouted(uint32_t rank) override { job_->OnRouted(index_, rank); }
  void OnError(const Status& status) override { job_->OnError(index_, status); }

 private:
  std::shared_ptr<GenerationJob> job_;
  size_t index_;
};

GenerationJob::GenerationJob(const ServingContext& context, JobSpec spec, std::shared_ptr<http::ResponseWriter> writer)
    : context_(context), spec_(std::move(spec)), writer_(std::move(writer)), sse_(writer_) {
  meta_.id = spec_.request_id;
  meta_.created = static_cast<int64_t>(base::EpochSeconds());
  meta_.model = spec_.model;
}

GenerationJob::~GenerationJob() = default;

void GenerationJob::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto arrival = metrics::RequestTracker::Clock::now();
  const int32_t n = std::max(1, spec_.sampling.n);
  std::vector<proto::EngineCoreRequest> requests;
  for (size_t p = 0; p < spec_.prompts.size(); ++p) {
    const JobPrompt& prompt = spec_.prompts[p];
    openai::SamplingContext sc;
    sc.prompt_tokens = static_cast<int32_t>(prompt.token_ids.size());
    sc.max_model_len = context_.engine->max_model_len();
    sc.eos_token_ids = context_.eos_token_ids;
    sc.defaults = context_.defaults;
    proto::SamplingParams params;
    if (auto error = openai::ToSamplingParams(spec_.sampling, sc, &params)) {
      writer_->Respond(openai::ErrorResponse(*error));
      responded_ = true;
      return;
    }
    for (int32_t i = 0; i < n; ++i) {
      auto choice = std::make_unique<Choice>();
      choice->index = p * static_cast<size_t>(n) + static_cast<size_t>(i);
      choice->engine_request_id = spec_.request_id + "-" + std::to_string(choice->index);
      choice->prompt = &prompt;
      if (spec_.kind == ApiKind::kChat && spec_.chat_output.active())
        choice->chat_output = std::make_unique<ChatOutput>(spec_.chat_output);
      choice->stop_strings = params.stop;
      choice->stop_token_ids = params.stop_token_ids;
      const metrics::TrackedParams tracked{n, params.max_tokens.value_or(sc.max_model_len - sc.prompt_tokens),
                                                    sc.max_model_len, spec_.lora_name.value_or("")};
      choice->tracker = context_.metrics ? std::make_unique<metrics::RequestTracker>(
                                               context_.metrics, sc.prompt_tokens, arrival, tracked)
                                         : std::make_unique<metrics::RequestTracker>();
      common::tokenizer::DetokenizerOptions options;
      options.skip_special_tokens = params.skip_special_tokens;
      options.stop = params.stop;
      options.include_stop_str_in_output = params.include_stop_str_in_output;
      choice->detokenizer = std::make_unique<common::tokenizer::IncrementalDetokenizer>(
          *context_.tokenizer, std::move(options), prompt.token_ids);
      proto::EngineCoreRequest r;
      r.request_id = choice->engine_request_id;
      r.prompt_token_ids = prompt.token_ids;
      r.sampling_params = params;
      r.sampling_params.n = 1;
      // Stop strings are matched here, in the frontend; the engine never sees them.
      r.sampling_params.stop.clear();
      if (params.seed && n > 1) r.sampling_params.seed = *params.seed + i;  // distinct choices
      r.arrival_time = base::EpochSeconds();
      r.cache_salt = spec_.sampling.cache_salt;
      r.lora_name = spec_.lora_name;
      // A constraint starts after the reasoning (vLLM): tell the engine whether it is over.
      if (params.structured_outputs) r.reasoning_ended = spec_.reasoning_ended;
      r.priority = spec_.sampling.priority;
      if (spec_.data_parallel_rank) {
        try {
          r.data_parallel_rank = std::stoi(*spec_.data_parallel_rank);
        } catch (const std::exception&) {
          writer_->Respond(openai::ErrorResponse(openai::BadRequest("X-data-parallel-rank must be an integer")));
          responded_ = true;
          return;
        }
      }
      if (context_.request_log.requests) {
        LOG(INFO) << ReceivedRequestLine(context_.request_log, r.request_id, prompt.text, params, r.prompt_token_ids);
      }
      requests.push_back(std::move(r));
      choices_.push_back(std::move(choice));
    }
  }
  for (size_t c = 0; c < choices_.size(); ++c) {
    Status s = context_.engine->Submit(std::move(requests[c]), std::make_shared<Sink>(shared_from_this(), c));
    if (!s.ok()) {
      Fail(s);
      return;
    }
    choices_[c]->submitted = true;
  }
  writer_->OnDisconnect([weak = weak_from_this()] {
    if (auto job = weak.lock()) job->OnDisconnect();
  });
  if (spec_.sampling.stream) {
    sse_.Begin(RoutingHeaders());
    stream_started_ = true;
    if (spec_.kind == ApiKind::kResponses) {
      response_events_.emplace(*spec_.response);
      SendEvents(response_events_->Opening());
    }
  }
}

void GenerationJob::SendEvents(const std::vector<nlohmann::json>& events) {
  for (const nlohmann::json& e : events) sse_.SendNamed(e["type"].get<std::string>(), openai::Dump(e));
}

std::string GenerationJob::LogprobText(int32_t id) const {
  if (spec_.sampling.return_tokens_as_token_ids) return "token_id:" + std::to_string(id);
  return context_.tokenizer->Decode(std::vector<int32_t>{id}, false);
}

std::vector<openai::TokenLogprob> GenerationJob::ConvertLogprobs(const proto::Logprobs& logprobs) const {
  std::vector<openai::TokenLogprob> out;
  auto text_of = [&](int32_t id) { return LogprobText(id); };
  for (size_t row = 0; row < logprobs.token_ids.size(); ++row) {
    const auto& ids = logprobs.token_ids[row];
    const auto& lps = logprobs.logprobs[row];
    if (ids.empty()) continue;
    openai::TokenLogprob t;
    t.token = text_of(ids[0]);
    t.logprob = lps[0];
    for (size_t k = 1; k < ids.size(); ++k) t.top.emplace_back(text_of(ids[k]), lps[k]);
    out.push_back(std::move(t));
  }
  return out;
}

void GenerationJob::OnRouted(size_t index, uint32_t rank) {
  if (index >= choices_.size()) return;
  choices_[index]->engine_rank = rank;
  choices_[index]->tracker->OnRouted(rank);
}

void GenerationJob::RecordFinish(Choice& choice, proto::FinishReason reason) {
  choice.tracker->OnFinished(reason, metrics::RequestTracker::Clock::now());
}

void GenerationJob::OnOutput(size_t index, const proto::EngineCoreOutput& output, const OutputOrigin* origin) {
  std::lock_guard<std::mutex> lock(mu_);
  if (responded_ || index >= choices_.size()) return;
  Choice& choice = *choices_[index];
  if (choice.finished) return;
  if (origin)
    choice.tracker->OnOutput(output, origin->engine_rank, origin->engine_timestamp,
                             metrics::RequestTracker::Clock::now());
  if (output.error_code) {
    RecordFinish(choice, output.finish_reason.value_or(proto::FinishReason::kError));
    // The engine refused the request (e.g. its waiting queue is full: 429).
    Fail(Status(*output.error_code, output.error_message.value_or("the engine refused the request")));
    return;
  }
  choice.cached_tokens = std::max(choice.cached_tokens, output.num_cached_tokens);
  if (!output.kv_transfer_params.empty()) {
    const std::string& bytes = output.kv_transfer_params.msgpack;
    choice.kv_transfer_params = nlohmann::json::from_msgpack(bytes.begin(), bytes.end(), true, false);
    if (choice.kv_transfer_params.is_discarded()) choice.kv_transfer_params = nullptr;  // not JSON-shaped
  }
  std::string delta;
  bool stopped_by_string = false;
  size_t consumed = 0;
  // The EOS or stop token that ended the request is not part of the text
  // (vLLM), even when special tokens are kept.
  const bool drop_last = output.finish_reason == proto::FinishReason::kStop && !spec_.sampling.include_stop_str_in_output;
  for (int32_t id : output.new_token_ids) {
    ++consumed;
    ++choice.completion_tokens;
    if (drop_last && consumed == output.new_token_ids.size()) break;
    auto update = choice.detokenizer->Push(id);
    delta += update.delta;
    if (update.stopped) {
      stopped_by_string = true;
      choice.stop_reason = choice.stop_strings.at(static_cast<size_t>(update.stop_index));
      break;
    }
  }
  if (spec_.sampling.return_token_ids || context_.request_log.outputs) {
    const auto& ids = output.new_token_ids;
    choice.token_ids.insert(choice.token_ids.end(), ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(consumed));
  }
  std::vector<openai::TokenLogprob> logprobs;
  if (output.new_logprobs && spec_.sampling.logprobs) {
    logprobs = ConvertLogprobs(*output.new_logprobs);
    if (logprobs.size() > consumed) logprobs.resize(consumed);
  }
  if (output.new_prompt_logprobs) choice.prompt_logprobs = *output.new_prompt_logprobs;
  if (stopped_by_string) {
    RecordFinish(choice, proto::FinishReason::kStop);
    choice.finish_reason = "stop";
    context_.engine->Abort({choice.engine_request_id});  // the engine would go on otherwise
  } else if (output.finish_reason) {
    RecordFinish(choice, *output.finish_reason);
    delta += choice.detokenizer->Finish().delta;
    switch (*output.finish_reason) {
      case proto::FinishReason::kStop: {
        choice.finish_reason = "stop";
        // vLLM reports the id only for stop_token_ids, not for EOS.
        if (output.stop_token_id &&
            std::find(choice.stop_token_ids.begin(), choice.stop_token_ids.end(), *output.stop_token_id) !=
                choice.stop_token_ids.end())
          choice.stop_reason = *output.stop_token_id;
        break;
      }
      case proto::FinishReason::kLength: choice.finish_reason = "length"; break;
      case proto::FinishReason::kAbort: choice.finish_reason = "abort"; break;
      case proto::FinishReason::kError:
        Fail(Status::Internal("the engine failed the request"));
        return;
    }
  }
  const bool finished = choice.finish_reason.has_value();
  if (finished) choice.finished = true;
  if (spec_.kind == ApiKind::kCompletion && spec_.sampling.echo) Echo(choice, &delta, &logprobs);
  EmitDelta(choice, delta, std::move(logprobs), finished);
  if (finished && context_.request_log.outputs) {
    LOG(INFO) << GeneratedResponseLine(context_.request_log, choice.engine_request_id, choice.text, choice.token_ids,
                                       *choice.finish_reason);
  }
  FinishIfDone();
}

void GenerationJob::Echo(Choice& choice, std::string* delta, std::vector<openai::TokenLogprob>* logprobs) {
  const bool prompt_only = spec_.sampling.max_tokens == 0;
  if (prompt_only) {  // the one token the engine ran is not part of the answer
    delta->clear();
    logprobs->clear();
  }
  if (choice.echoed) return;
  choice.echoed = true;
  const JobPrompt& prompt = *choice.prompt;
  *delta = (prompt.text ? *prompt.text : context_.tokenizer->Decode(prompt.token_ids, false)) + *delta;
  if (!spec_.sampling.logprobs) return;
  const proto::Logprobs* rows = choice.prompt_logprobs ? &*choice.prompt_logprobs : nullptr;
  std::vector<openai::TokenLogprob> entries = EchoedPromptLogprobs(
      prompt.token_ids, rows, *spec_.sampling.logprobs, [this](int32_t id) { return LogprobText(id); });
  logprobs->insert(logprobs->begin(), std::make_move_iterator(entries.begin()), std::make_move_iterator(entries.end()));
}

nlohmann::json GenerationJob::PromptLogprobsOf(const Choice& choice) const {
  if (!choice.prompt_logprobs) return nullptr;
  return PromptLogprobsJson(*choice.prompt_logprobs, [this](int32_t id) {
    return context_.tokenizer->Decode(std::vector<int32_t>{id}, false);
  });
}

void GenerationJob::EmitDelta(Choice& choice, const std::string& delta, std::vector<openai::TokenLogprob> logprobs,
                              bool finished) {
  const int32_t offset = static_cast<int32_t>(choice.text.size());
  choice.text += delta;
  choice.logprobs.insert(choice.logprobs.end(), logprobs.begin(), logprobs.end());
  if (!spec_.sampling.stream) return;
  const bool new_ids = spec_.sampling.return_token_ids && choice.token_ids.size() > choice.token_ids_sent;
  if (delta.empty() && logprobs.empty() && !finished && !new_ids) return;
  std::optional<openai::Usage> usage;
  if (spec_.sampling.continuous_usage_stats) usage = TotalUsage();
  const int32_t index = static_cast<int32_t>(choice.index);
  if (spec_.kind == ApiKind::kResponses) {
    if (!delta.empty()) SendEvents({response_events_->TextDelta(delta)});
  } else if (spec_.kind == ApiKind::kCompletion) {
    openai::CompletionChoice c;
    c.index = index;
    c.text = delta;
    if (spec_.sampling.logprobs) c.logprobs = std::move(logprobs);
    c.text_offset = offset;
    c.finish_reason = choice.finish_reason;
    c.stop_reason = choice.stop_reason;
    if (spec_.sampling.return_token_ids) {
      if (choice.token_ids_sent == 0) c.prompt_token_ids = choice.prompt->token_ids;
      c.token_ids.emplace(choice.token_ids.begin() + static_cast<std::ptrdiff_t>(choice.token_ids_sent),
                          choice.token_ids.end());
      choice.token_ids_sent = choice.token_ids.size();
    }
    sse_.Send(openai::Dump(openai::CompletionChunk(meta_, c, usage)));
  } else {
    if (!choice.role_sent) {
      sse_.Send(openai::Dump(openai::ChatRoleChunk(meta_, index, usage)));
      choice.role_sent = true;
      if (!spec_.chat_echo.empty()) {  // vLLM sends the echoed content as a chunk of its own
        openai::ChatChoice echo;
        echo.index = index;
        echo.content = spec_.chat_echo;
        sse_.Send(openai::Dump(openai::ChatContentChunk(meta_, echo, usage)));
      }
    }
    openai::ChatChoice c;
    c.index = index;
    if (choice.chat_output) {
      if (!ShapeChatChunk(choice, delta, finished, &c) && logprobs.empty()) return;
    } else {
      c.content = delta;
    }
    if (spec_.chat_logprobs) c.logprobs = std::move(logprobs);
    c.finish_reason = choice.finish_reason;
    c.stop_reason = choice.stop_reason;
    sse_.Send(openai::Dump(openai::ChatContentChunk(meta_, c, usage)));
  }
}

bool GenerationJob::ShapeChatChunk(Choice& choice, const std::string& delta, bool finished, openai::ChatChoice* c) {
  ChatPiece piece = choice.chat_output->Feed(delta);
  if (finished) {
    ChatPiece rest = choice.chat_output->Finish();
    piece.content += rest.content;
    if (rest.reasoning) piece.reasoning = piece.reasoning.value_or("") + *rest.reasoning;
    for (auto& call : rest.tool_calls) piece.tool_calls.push_back(std::move(call));
    if (choice.chat_output->tools_called() && choice.finish_reason == "stop") choice.finish_reason = "tool_calls";
  }
  c->content = std::move(piece.content);
  c->reasoning = std::move(piece.reasoning);
  c->tool_calls = std::move(piece.tool_calls);
  return finished || !c->content.empty() || c->reasoning || !c->tool_calls.empty();
}

openai::Usage GenerationJob::TotalUsage() const {
  openai::Usage usage;
  int32_t cached = 0;
  const JobPrompt* last = nullptr;
  for (const auto& c : choices_) {
    usage.completion_tokens += c->completion_tokens;
    if (c->prompt != last) {  // count each prompt once, not once per choice
      usage.prompt_tokens += static_cast<int32_t>(c->prompt->token_ids.size());
      cached += c->cached_tokens;
      last = c->prompt;
    }
  }
  if (cached > 0) usage.cached_tokens = cached;
  return usage;
}

void GenerationJob::FinishIfDone() {
  for (const auto& c : choices_)
    if (!c->finished) return;
  responded_ = true;
  const openai::Usage usage = TotalUsage();
  if (spec_.kind == ApiKind::kResponses) return FinishResponse(usage);
  if (spec_.sampling.stream) {
    if (spec_.sampling.include_usage) {
      sse_.Send(openai::Dump(spec_.kind == ApiKind::kCompletion ? openai::CompletionUsageChunk(meta_, usage)
                                                                : openai::ChatUsageChunk(meta_, usage)));
    }
    sse_.Done();
    return;
  }
  nlohmann::json body;
  if (spec_.kind == ApiKind::kCompletion) {
    std::vector<openai::CompletionChoice> out;
    for (const auto& c : choices_) {
      openai::CompletionChoice cc;
      cc.index = static_cast<int32_t>(c->index);
      cc.text = c->text;
      if (spec_.sampling.logprobs) cc.logprobs = c->logprobs;
      if (spec_.sampling.return_token_ids) {
        cc.prompt_token_ids = c->prompt->token_ids;
        cc.token_ids = c->token_ids;
      }
      cc.finish_reason = c->finish_reason;
      cc.stop_reason = c->stop_reason;
      cc.prompt_logprobs = PromptLogprobsOf(*c);
      out.push_back(std::move(cc));
    }
    body = openai::CompletionResponse(meta_, out, usage);
  } else {
    std::vector<openai::ChatChoice> out;
    for (const auto& c : choices_) {
      openai::ChatChoice cc;
      cc.index = static_cast<int32_t>(c->index);
      cc.content = c->text;
      if (c->chat_output) {
        c->chat_output->Complete(c->text, &cc);
        if (c->chat_output->tools_called() && c->finish_reason == "stop") c->finish_reason = "tool_calls";
      }
      if (!spec_.chat_echo.empty()) {
        cc.content = spec_.chat_echo + cc.content;
        cc.content_null = false;
      }
      if (spec_.chat_logprobs) cc.logprobs = c->logprobs;
      cc.finish_reason = c->finish_reason;
      cc.stop_reason = c->stop_reason;
      out.push_back(std::move(cc));
    }
    body = openai::ChatCompletionResponse(meta_, out, usage, PromptLogprobsOf(*choices_.front()));
  }
  // vLLM answers the first choice's KV-transfer parameters (where a decode instance reads the KV).
  if (!choices_.front()->kv_transfer_params.is_null()) body["kv_transfer_params"] = choices_.front()->kv_transfer_params;
  http::HttpResponse response = http::HttpResponse::Make(200, "application/json", openai::Dump(body));
  response.headers = RoutingHeaders();
  writer_->Respond(std::move(response));
}

void GenerationJob::FinishResponse(const openai::Usage& usage) {
  const Choice& choice = *choices_.front();  // a response has one output
  const std::string status = choice.finish_reason == "length" ? "incomplete" : "completed";
  nlohmann::json object = openai::ResponseObject(*spec_.response, status, choice.text, usage);
  if (spec_.store) {  // what GET /v1/responses/{id} answers: the object POST returned (or response.completed carried)
    nlohmann::json messages = spec_.conversation;
    messages.push_back({{"role", "assistant"}, {"content", choice.text}});
    spec_.store->Put(spec_.response->id, std::move(messages), object);
  }
  if (spec_.sampling.stream) {
    SendEvents(response_events_->Closing(choice.text, status, usage));
    sse_.End();
    return;
  }
  http::HttpResponse response = http::HttpResponse::Make(200, "application/json", openai::Dump(object));
  response.headers = RoutingHeaders();
  writer_->Respond(std::move(response));
}

// X-Data-Parallel-Rank: the rank(s) that served the choices, in choice order,
// distinct (several only when n > 1 spread over ranks). Lets operators and
// tests see where the balancer sent a request.
http::Headers GenerationJob::RoutingHeaders() const {
  std::string ranks;
  std::vector<uint32_t> seen;
  for (const auto& c : choices_) {
    if (!c->engine_rank || std::find(seen.begin(), seen.end(), *c->engine_rank) != seen.end()) continue;
    seen.push_back(*c->engine_rank);
    if (!ranks.empty()) ranks += ',';
    ranks += std::to_string(*c->engine_rank);
  }
  if (ranks.empty()) return {};
  return {{"X-Data-Parallel-Rank", ranks}};
}

void GenerationJob::Fail(const Status& status) {
  std::vector<std::string> to_abort;
  for (auto& c : choices_)
    if (c->submitted && !c->finished) {
      RecordFinish(*c, proto::FinishReason::kAbort);
      to_abort.push_back(c->engine_request_id);
      c->finished = true;
    }
  if (!to_abort.empty()) context_.engine->Abort(to_abort);
  if (responded_) return;
  responded_ = true;
  const openai::ApiError error = openai::FromStatus(status);
  if (stream_started_) {
    sse_.Send(openai::ErrorBody(error));
    sse_.Done();
  } else {
    writer_->Respond(openai::ErrorResponse(error));
  }
}

void GenerationJob::OnError(size_t index, const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (index < choices_.size() && !choices_[index]->finished) RecordFinish(*choices_[index], proto::FinishReason::kError);
  Fail(status);
}

void GenerationJob::OnDisconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  if (responded_) return;
  std::vector<std::string> to_abort;
  for (auto& c : choices_)
    if (c->submitted && !c->finished) {
      RecordFinish(*c, proto::FinishReason::kAbort);
      to_abort.push_back(c->engine_request_id);
      c->finished = true;
    }
  responded_ = true;
  if (!to_abort.empty()) {
    LOG(INFO) << "client went away; aborting " << spec_.request_id;
    context_.engine->Abort(to_abort);
  }
}

}  // namespace llmserve::frontend::serving
