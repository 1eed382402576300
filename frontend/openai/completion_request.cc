#include "frontend/openai/completion_request.h"

#include <limits>

#include "frontend/openai/beam_search_request.h"
#include "frontend/openai/request_body.h"
#include "frontend/openai/structured_outputs_request.h"

namespace llmserve::frontend::openai {
namespace {


MaybeError ReadTokenIds(const nlohmann::json& array, const std::string& what, std::vector<int32_t>* out) {
  for (size_t i = 0; i < array.size(); ++i) {
    int64_t id = 0;
    MaybeError e = ReadIntValue(array[i], what + "[" + std::to_string(i) + "]", 0, kInt32Max, &id);
    if (e) return e;
    out->push_back(static_cast<int32_t>(id));
  }
  return std::nullopt;
}

}  // namespace

MaybeError ReadPrompts(FieldReader& reader, const char* name, std::vector<PromptInput>* out) {
  reader.Known(name);
  const nlohmann::json* v = reader.Get(name);
  const std::string field = std::string("'") + name + "'";
  auto bad = [&](std::string message) { return BadRequest(std::move(message), name); };
  if (!v) return bad(field + " is required");
  const std::string shape = field + " must be a string, an array of strings, an array of token ids or an array of arrays of token ids";
  const std::string empty = field + " must not be empty";
  out->clear();
  if (v->is_string()) {
    if (v->get_ref<const std::string&>().empty()) return bad(empty);
    out->push_back(PromptInput{v->get<std::string>(), {}});
    return std::nullopt;
  }
  if (!v->is_array()) return bad(shape + ", got " + JsonTypeName(*v));
  if (v->empty()) return bad(empty);
  const nlohmann::json& first = (*v)[0];
  if (first.is_number()) {  // one prompt of token ids
    PromptInput p;
    MaybeError e = ReadTokenIds(*v, field, &p.token_ids);
    if (e) return bad(e->message);
    out->push_back(std::move(p));
    return std::nullopt;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& item = (*v)[i];
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (item.is_string()) {
      if (item.get_ref<const std::string&>().empty()) return bad(where + " must not be empty");
      out->push_back(PromptInput{item.get<std::string>(), {}});
    } else if (item.is_array()) {
      if (item.empty()) return bad(where + " must not be empty");
      PromptInput p;
      MaybeError e = ReadTokenIds(item, where, &p.token_ids);
      if (e) return bad(e->message);
      out->push_back(std::move(p));
    } else {
      return bad(shape + ", got an array containing " + JsonTypeName(item));
    }
  }
  return std::nullopt;
}

MaybeError ParseCompletionRequest(std::string_view body, const ParseOptions& options, CompletionRequest* out) {
  nlohmann::json json;
  LLMSERVE_API_TRY(ParseJsonObject(body, &json));
  FieldReader reader(json);
  CompletionRequest req;
  LLMSERVE_API_TRY(reader.OptString("model", &req.model));
  LLMSERVE_API_TRY(ReadPrompts(reader, "prompt", &req.prompts));
  LLMSERVE_API_TRY(reader.Bool("echo", &req.sampling.echo));
  req.sampling.echo_prompt_logprobs = req.sampling.echo;
  auto max_tokens = json.find("max_tokens");
  if (max_tokens == json.end() || !max_tokens->is_null()) req.sampling.max_tokens = 16;  // null: up to the context
  // max_tokens 0 with echo: the prompt alone (vLLM).
  LLMSERVE_API_TRY(reader.OptInt32("max_tokens", req.sampling.echo ? 0 : 1, kInt32Max, &req.sampling.max_tokens));
  LLMSERVE_API_TRY(reader.OptInt32("logprobs", 0, options.max_logprobs, &req.sampling.logprobs));
  LLMSERVE_API_TRY(ReadSamplingFields(reader, options, &req.sampling));
  LLMSERVE_API_TRY(ReadStructuredOutputs(reader, body, options.structured_outputs, &req.sampling.structured_outputs));
  LLMSERVE_API_TRY(reader.Bool("add_special_tokens", &req.add_special_tokens));

  std::optional<std::string> suffix;
  LLMSERVE_API_TRY(reader.OptString("suffix", &suffix));
  if (suffix && !suffix->empty()) return BadRequest("'suffix' is not currently supported.", "suffix");
  std::optional<int32_t> best_of;
  LLMSERVE_API_TRY(reader.OptInt32("best_of", 1, kInt32Max, &best_of));
  if (best_of && *best_of != req.sampling.n) {
    return BadRequest("'best_of' is not supported; leave it unset or equal to n.", "best_of");
  }
  LLMSERVE_API_TRY(ReadBeamSearchFields(reader, options, /*stream_allowed=*/false, &req.sampling));
  LLMSERVE_API_TRY(CheckSamplingRequest(req.sampling, json));
  req.ignored_fields = reader.UnknownFields();
  *out = std::move(req);
  return std::nullopt;
}

}  // namespace llmserve::frontend::openai
