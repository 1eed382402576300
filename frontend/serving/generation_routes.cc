#include "frontend/serving/generation_routes.h"

#include <ctime>

#include "frontend/openai/api_error.h"
#include "frontend/openai/chat_request.h"
#include "frontend/openai/completion_request.h"
#include "frontend/openai/json_fields.h"
#include "frontend/openai/responses.h"
#include "frontend/openai/responses_request.h"
#include "frontend/http/request_id.h"
#include "frontend/openai/server_info.h"
#include "frontend/openai/tokenize_request.h"
#include "frontend/openai/tool_choice.h"
#include "frontend/serving/beam_search_job.h"
#include "frontend/serving/generation_job.h"
#include "frontend/serving/ignored_fields_log.h"
#include "frontend/serving/response_routes.h"
#include "frontend/serving/route_checks.h"

namespace llmserve::frontend::serving {

namespace {

// Runs a completion or chat request: vLLM's beam search above the engine, or
// one engine request per choice.
void StartJob(const ServingContext& ctx, JobSpec spec, std::shared_ptr<http::ResponseWriter> w) {
  if (spec.sampling.use_beam_search) {
    auto job = std::make_shared<BeamSearchJob>(ctx, std::move(spec), std::move(w));
    job->Start();
    return;
  }
  auto job = std::make_shared<GenerationJob>(ctx, std::move(spec), std::move(w));
  job->Start();
}

void HandleCompletions(const ServingContext& ctx, const http::HttpRequest& req,
                       std::shared_ptr<http::ResponseWriter> w) {
  openai::CompletionRequest cr;
  if (auto e = CheckRunnerServes(ctx, false, "Completions")) return Reply(*w, *e);
  if (auto e = openai::ParseCompletionRequest(req.body, ctx.parse_options, &cr)) return Reply(*w, *e);
  WarnIgnoredFields(cr.ignored_fields);
  if (auto e = CheckServedModel(ctx, cr.model)) return Reply(*w, *e);
  if (auto e = CheckEngines(ctx)) return Reply(*w, *e);
  JobSpec spec;
  spec.kind = ApiKind::kCompletion;
  spec.request_id = openai::ResolveRequestId(req, cr.sampling.request_id, "cmpl-");
  spec.model = cr.model.value_or(ctx.served_model_names.front());
  spec.lora_name = AdapterOf(ctx, spec.model);
  spec.sampling = cr.sampling;
  if (const std::string* rank = req.header("X-data-parallel-rank")) spec.data_parallel_rank = *rank;
  for (const auto& p : cr.prompts) {
    JobPrompt prompt;
    if (p.text) {
      prompt.token_ids = ctx.tokenizer->Encode(*p.text, cr.add_special_tokens);
      if (ctx.request_log.requests || cr.sampling.echo) prompt.text = *p.text;
    } else {
      if (auto e = CheckTokenIds(ctx, p.token_ids)) return Reply(*w, *e);
      prompt.token_ids = p.token_ids;
    }
    if (prompt.token_ids.empty()) return Reply(*w, openai::BadRequest("The prompt is empty.", "prompt"));
    spec.prompts.push_back(std::move(prompt));
  }
  StartJob(ctx, std::move(spec), std::move(w));
}

// How the choices' text becomes messages: tool calls and reasoning.
openai::MaybeError ChatOutputFor(const ServingContext& ctx, openai::ChatCompletionRequest& cr, const std::string& prompt,
                         JobSpec* spec) {
  ChatOutputOptions& o = spec->chat_output;
  o.tool_mode = openai::ModeOf(cr.tools, cr.tool_choice);
  if (o.tool_mode == openai::ToolChoiceMode::kAuto && ctx.tool_parser == nullptr) {
    return openai::BadRequest(
        "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set", "tool_choice");
  }
  if (o.tool_mode == openai::ToolChoiceMode::kNamed) o.named_function = cr.tool_choice["function"]["name"].get<std::string>();
  o.tool_parser = ctx.tool_parser;
  if (o.tool_mode == openai::ToolChoiceMode::kAuto && ctx.tool_parser->NeedsSpecialTokens())
    cr.sampling.skip_special_tokens = false;  // the call tags are special tokens (vLLM's adjust_request)
  if (!ctx.reasoning_parser.empty()) {
    reasoning::ReasoningOptions ro;
    if (cr.chat_template_kwargs.is_object()) {
      auto thinking = cr.chat_template_kwargs.find("enable_thinking");
      if (thinking != cr.chat_template_kwargs.end() && thinking->is_boolean()) ro.enable_thinking = *thinking;
    }
    // A template that closes the think block itself (enable_thinking=false) ends the prompt with it.
    const size_t end = prompt.find_last_not_of(" \n\t\r");
    const std::string_view tag = reasoning::ReasoningParser::end_tag();
    ro.prompt_is_reasoning_end = end != std::string::npos && end + 1 >= tag.size() &&
                                 std::string_view(prompt).substr(end + 1 - tag.size(), tag.size()) == tag;
    spec->reasoning_ended = ro.prompt_is_reasoning_end || (ctx.reasoning_parser == "qwen3" && !ro.enable_thinking);
    auto parser = reasoning::MakeReasoningParser(ctx.reasoning_parser, ro);
    if (!parser.ok()) return openai::BadRequest(parser.status().message());
    o.reasoning_parser = std::move(parser).value();
  }
  return std::nullopt;
}

// Chat echo (vLLM): the last message's content when the reply continues its
// role, which is "assistant" with add_generation_prompt, else the last
// message's own.
std::string ChatEcho(const openai::ChatCompletionRequest& cr) {
  const nlohmann::json& last = cr.messages.back();
  const std::string role = openai::StringMember(last, "role");
  if (cr.add_generation_prompt && role != "assistant") return "";
  auto content = last.find("content");
  return content != last.end() && content->is_string() ? content->get<std::string>() : "";
}

void HandleChat(const ServingContext& ctx, const http::HttpRequest& req, std::shared_ptr<http::ResponseWriter> w) {
  openai::ChatCompletionRequest cr;
  if (auto e = CheckRunnerServes(ctx, false, "Chat Completions")) return Reply(*w, *e);
  if (auto e = openai::ParseChatCompletionRequest(req.body, ctx.parse_options, &cr)) return Reply(*w, *e);
  WarnIgnoredFields(cr.ignored_fields);
  if (auto e = CheckServedModel(ctx, cr.model)) return Reply(*w, *e);
  if (auto e = CheckEngines(ctx)) return Reply(*w, *e);
  std::string prompt_text;
  const bool add_generation_prompt = cr.add_generation_prompt && !cr.continue_final_message;
  if (auto e = RenderChat(ctx, cr.messages, add_generation_prompt, cr.tools, cr.chat_template_kwargs,
                          cr.chat_template, &prompt_text))
    return Reply(*w, *e);
  JobSpec spec;
  if (auto e = ChatOutputFor(ctx, cr, prompt_text, &spec)) return Reply(*w, *e);
  spec.kind = ApiKind::kChat;
  spec.request_id = openai::ResolveRequestId(req, cr.sampling.request_id, "chatcmpl-");
  spec.model = cr.model.value_or(ctx.served_model_names.front());
  spec.lora_name = AdapterOf(ctx, spec.model);
  spec.sampling = cr.sampling;
  spec.chat_logprobs = cr.sampling.logprobs.has_value();
  if (cr.echo) spec.chat_echo = ChatEcho(cr);
  if (const std::string* rank = req.header("X-data-parallel-rank")) spec.data_parallel_rank = *rank;
  JobPrompt prompt;
  prompt.token_ids = ctx.tokenizer->Encode(prompt_text, cr.add_special_tokens);
  if (prompt.token_ids.empty()) return Reply(*w, openai::BadRequest("The rendered prompt is empty.", "messages"));
  if (ctx.request_log.requests) prompt.text = std::move(prompt_text);
  spec.prompts.push_back(std::move(prompt));
  StartJob(ctx, std::move(spec), std::move(w));
}

// POST /v1/responses: the conversation (a stored one continued, then the
// input) rendered by the chat template, answered as a response object or
// its event stream.
void HandleResponses(const ServingContext& ctx, const http::HttpRequest& req,
                     std::shared_ptr<http::ResponseWriter> w) {
  openai::ResponsesRequest rr;
  if (auto e = CheckRunnerServes(ctx, false, "Responses")) return Reply(*w, *e);
  if (auto e = openai::ParseResponsesRequest(req.body, ctx.parse_options, &rr)) return Reply(*w, *e);
  WarnIgnoredFields(rr.ignored_fields);
  if (auto e = CheckServedModel(ctx, rr.model)) return Reply(*w, *e);
  if (auto e = CheckEngines(ctx)) return Reply(*w, *e);
  JobSpec spec;
  spec.conversation = nlohmann::json::array();
  if (rr.previous_response_id) {
    std::optional<nlohmann::json> previous = ctx.responses->Get(*rr.previous_response_id);
    if (!previous) return Reply(*w, ResponseNotFound(*rr.previous_response_id));  // vLLM's error, as GET's
    spec.conversation = std::move(*previous);
  }
  for (const auto& m : rr.input_messages) spec.conversation.push_back(m);
  nlohmann::json messages = nlohmann::json::array();
  if (rr.instructions) messages.push_back({{"role", "system"}, {"content", *rr.instructions}});
  for (const auto& m : spec.conversation) messages.push_back(m);
  std::string prompt_text;
  if (auto e = RenderChat(ctx, messages, true, nullptr, nullptr, std::nullopt, &prompt_text)) return Reply(*w, *e);
  spec.kind = ApiKind::kResponses;
  spec.request_id = openai::ResolveRequestId(req, rr.sampling.request_id, "resp_");
  spec.model = rr.model.value_or(ctx.served_model_names.front());
  spec.lora_name = AdapterOf(ctx, spec.model);
  spec.sampling = rr.sampling;
  if (const std::string* rank = req.header("X-data-parallel-rank")) spec.data_parallel_rank = *rank;
  if (rr.store) spec.store = ctx.responses;
  JobPrompt prompt;
  prompt.token_ids = ctx.tokenizer->Encode(prompt_text, false);
  if (ctx.request_log.requests) prompt.text = std::move(prompt_text);
  spec.prompts.push_back(std::move(prompt));
  openai::ResponseFacts& facts = spec.response.emplace();
  facts.id = spec.request_id;
  facts.message_id = "msg_" + http::RandomHexId();
  facts.created_at = static_cast<int64_t>(std::time(nullptr));
  facts.model = spec.model;
  facts.request = std::move(rr);
  auto job = std::make_shared<GenerationJob>(ctx, std::move(spec), std::move(w));
  job->Start();
}

void HandleTokenize(const ServingContext& ctx, const http::HttpRequest& req, std::shared_ptr<http::ResponseWriter> w) {
  openai::TokenizeRequest tr;
  if (auto e = openai::ParseTokenizeRequest(req.body, &tr)) return Reply(*w, *e);
  WarnIgnoredFields(tr.ignored_fields);
  if (auto e = CheckServedModel(ctx, tr.model)) return Reply(*w, *e);
  std::string text;
  if (tr.prompt) {
    text = *tr.prompt;
  } else {
    const bool add_generation_prompt = tr.add_generation_prompt && !tr.continue_final_message;
    if (auto e = RenderChat(ctx, tr.messages, add_generation_prompt, tr.tools, tr.chat_template_kwargs,
                            tr.chat_template, &text))
      return Reply(*w, *e);
  }
  std::vector<int32_t> ids = ctx.tokenizer->Encode(text, tr.add_special_tokens);
  std::optional<std::vector<std::string>> strs;
  if (tr.return_token_strs) {
    strs.emplace();
    for (int32_t id : ids) strs->push_back(ctx.tokenizer->IdToToken(id).value_or(""));
  }
  w->Respond(http::HttpResponse::Make(
      200, "application/json", openai::Dump(openai::TokenizeResponse(ids, ctx.engine->max_model_len(), strs))));
}

void HandleDetokenize(const ServingContext& ctx, const http::HttpRequest& req,
                      std::shared_ptr<http::ResponseWriter> w) {
  openai::DetokenizeRequest dr;
  if (auto e = openai::ParseDetokenizeRequest(req.body, &dr)) return Reply(*w, *e);
  WarnIgnoredFields(dr.ignored_fields);
  if (auto e = CheckServedModel(ctx, dr.model)) return Reply(*w, *e);
  if (auto e = CheckTokenIds(ctx, dr.tokens)) return Reply(*w, *e);
  w->Respond(http::HttpResponse::Make(
      200, "application/json", openai::Dump(openai::DetokenizeResponse(ctx.tokenizer->Decode(dr.tokens, false)))));
}

}  // namespace

void RegisterGenerationRoutes(const ServingContext& context, http::Router* router) {
  const ServingContext* ctx = &context;
  router->Add("POST", "/v1/completions",
              [ctx](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) { HandleCompletions(*ctx, r, std::move(w)); });
  router->Add("POST", "/v1/chat/completions",
              [ctx](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) { HandleChat(*ctx, r, std::move(w)); });
  router->Add("POST", "/v1/responses",
              [ctx](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) { HandleResponses(*ctx, r, std::move(w)); });
  router->Add("POST", "/tokenize",
              [ctx](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) { HandleTokenize(*ctx, r, std::move(w)); });
  router->Add("POST", "/detokenize",
              [ctx](http::HttpRequest r, std::shared_ptr<http::ResponseWriter> w) { HandleDetokenize(*ctx, r, std::move(w)); });
}

}  // namespace llmserve::frontend::serving
