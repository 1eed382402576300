#include "common/tokenizer/tokenizer_config.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/tokenizer/json_context.h"

namespace llmserve::common::tokenizer {

using nlohmann::json;

namespace {

// A special token is either a string or {"__type": "AddedToken", "content": ...}.
Status GetTokenText(const json& obj, const char* key, const JsonContext& ctx, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (it->is_string()) {
    *out = it->get<std::string>();
    return Status::Ok();
  }
  if (it->is_object()) return GetString(*it, "content", ctx.Child(key), true, out);
  return ctx.Child(key).Error("expected a string or an AddedToken object, found " + JsonTypeName(*it));
}

Status GetOptionalBool(const json& obj, const char* key, const JsonContext& ctx,
                       std::optional<bool>* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::Ok();
  if (!it->is_boolean()) return ctx.Child(key).Error("expected a boolean, found " + JsonTypeName(*it));
  *out = it->get<bool>();
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::DataLoss("error reading " + path);
  return ss.str();
}

StatusOr<TokenizerConfig> ParseTokenizerConfig(const std::string& text, const std::string& file) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const JsonContext ctx{file, ""};
  if (j.is_discarded()) return ctx.Error("not valid JSON");
  if (!j.is_object()) return ctx.Error("expected an object, found " + JsonTypeName(j));
  TokenizerConfig c;
  LLMSERVE_RETURN_IF_ERROR(GetOptionalBool(j, "add_bos_token", ctx, &c.add_bos_token));
  LLMSERVE_RETURN_IF_ERROR(GetOptionalBool(j, "add_eos_token", ctx, &c.add_eos_token));
  LLMSERVE_RETURN_IF_ERROR(GetTokenText(j, "bos_token", ctx, &c.bos_token));
  LLMSERVE_RETURN_IF_ERROR(GetTokenText(j, "eos_token", ctx, &c.eos_token));
  LLMSERVE_RETURN_IF_ERROR(GetTokenText(j, "unk_token", ctx, &c.unk_token));
  LLMSERVE_RETURN_IF_ERROR(GetTokenText(j, "pad_token", ctx, &c.pad_token));
  LLMSERVE_RETURN_IF_ERROR(GetBool(j, "clean_up_tokenization_spaces", ctx, false, &c.clean_up_tokenization_spaces));
  LLMSERVE_RETURN_IF_ERROR(GetBool(j, "split_special_tokens", ctx, false, &c.split_special_tokens));
  LLMSERVE_RETURN_IF_ERROR(GetString(j, "tokenizer_class", ctx, false, &c.tokenizer_class));
  auto t = j.find("chat_template");
  if (t != j.end() && !t->is_null()) {
    if (t->is_string()) {
      c.chat_template = t->get<std::string>();
    } else if (t->is_array()) {
      for (size_t i = 0; i < t->size(); ++i) {
        const JsonContext ic = ctx.Child("chat_template").Child(i);
        std::string name, body;
        LLMSERVE_RETURN_IF_ERROR(GetString((*t)[i], "name", ic, true, &name));
        LLMSERVE_RETURN_IF_ERROR(GetString((*t)[i], "template", ic, true, &body));
        c.named_chat_templates[name] = body;
      }
      auto d = c.named_chat_templates.find("default");
      if (d != c.named_chat_templates.end()) c.chat_template = d->second;
    } else {
      return ctx.Child("chat_template").Error("expected a string or a list of {name, template}, found " +
                                              JsonTypeName(*t));
    }
  }
  return c;
}

Status ParseGenerationConfig(const std::string& text, const std::string& file, TokenizerConfig* c) {
  json j = json::parse(text, nullptr, false);
  const JsonContext ctx{file, ""};
  if (j.is_discarded()) return ctx.Error("not valid JSON");
  if (!j.is_object()) return ctx.Error("expected an object, found " + JsonTypeName(j));
  auto bos = j.find("bos_token_id");
  if (bos != j.end() && bos->is_number_integer()) c->generation_bos_token_id = bos->get<int32_t>();
  auto eos = j.find("eos_token_id");
  if (eos != j.end() && !eos->is_null()) {
    if (eos->is_number_integer()) {
      c->generation_eos_token_ids.push_back(eos->get<int32_t>());
    } else if (eos->is_array()) {
      for (const auto& v : *eos) {
        if (!v.is_number_integer()) return ctx.Child("eos_token_id").Error("expected integer ids");
        c->generation_eos_token_ids.push_back(v.get<int32_t>());
      }
    } else {
      return ctx.Child("eos_token_id").Error("expected an integer or a list, found " + JsonTypeName(*eos));
    }
  }
  return Status::Ok();
}

}  // namespace llmserve::common::tokenizer
