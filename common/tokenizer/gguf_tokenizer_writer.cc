#include "common/tokenizer/gguf_tokenizer_writer.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/tokenizer/gguf_tokenizer.h"
#include "common/tokenizer/tokenizer.h"
#include "common/tokenizer/tokenizer_config.h"

namespace llmserve::common::tokenizer {
namespace {

using nlohmann::json;

struct GgufVocabulary {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
};

// Places `token` at `id`, growing the vocabulary with unused "[PAD<id>]"
// entries as convert_hf_to_gguf.py does for ids nobody uses.
Status Place(const json& id_json, const std::string& token, int32_t type, const std::string& file,
             GgufVocabulary* v) {
  if (!id_json.is_number_integer() || id_json.get<int64_t>() < 0 || id_json.get<int64_t>() >= INT32_MAX) {
    return Status::InvalidArgument(file + ": token \"" + token + "\" has an invalid id");
  }
  const size_t id = id_json.get<size_t>();
  while (v->tokens.size() <= id) {
    v->types.push_back(kGgufTokenUnused);
    v->tokens.push_back("[PAD" + std::to_string(v->tokens.size()) + "]");
  }
  v->tokens[id] = token;
  v->types[id] = type;
  return Status::Ok();
}

// j[key], or null when absent (const operator[] must not see a missing key).
const json& Field(const json& j, const char* key) {
  static const json kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

StatusOr<GgufVocabulary> VocabularyOf(const json& j, const std::string& file) {
  GgufVocabulary v;
  const json& vocab = Field(j.at("model"), "vocab");
  if (!vocab.is_object()) return Status::InvalidArgument(file + ": model.vocab is not an object");
  for (auto it = vocab.begin(); it != vocab.end(); ++it) {
    LLMSERVE_RETURN_IF_ERROR(Place(it.value(), it.key(), kGgufTokenNormal, file, &v));
  }
  const json& added = j.contains("added_tokens") ? j.at("added_tokens") : json::array();
  if (!added.is_array()) return Status::InvalidArgument(file + ": added_tokens is not an array");
  for (const json& t : added) {
    if (!t.is_object() || !t.contains("content") || !t.at("content").is_string() || !t.contains("id")) {
      return Status::InvalidArgument(file + ": an added token has no content or id");
    }
    const int32_t type = t.value("special", false) ? kGgufTokenControl : kGgufTokenUserDefined;
    LLMSERVE_RETURN_IF_ERROR(Place(t.at("id"), t.at("content").get<std::string>(), type, file, &v));
  }
  return v;
}

// Merges as "a b" strings (tokenizer.json has them as strings or pairs).
StatusOr<std::vector<std::string>> MergesOf(const json& j, const std::string& file) {
  const json& merges = Field(j.at("model"), "merges");
  if (!merges.is_array()) return Status::InvalidArgument(file + ": model.merges is not an array");
  std::vector<std::string> out;
  out.reserve(merges.size());
  for (const json& m : merges) {
    if (m.is_string()) {
      out.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      out.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    } else {
      return Status::InvalidArgument(file + ": model.merges holds " + std::string(m.type_name()));
    }
  }
  return out;
}

StatusOr<json> ReadByteLevelBpe(const std::string& path) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument(path + ": not a JSON object");
  const bool bpe = j.contains("model") && j["model"].is_object() && j["model"].value("type", "") == "BPE";
  const bool byte_level = j.contains("decoder") && j["decoder"].is_object() &&
                          j["decoder"].value("type", "") == "ByteLevel";
  if (!bpe || !byte_level) {
    return Status::InvalidArgument(path + ": not a byte-level BPE tokenizer (GGUF model \"gpt2\")");
  }
  return j;
}

void SetTokenId(const char* key, std::optional<int32_t> id, gguf::GgufWriter* writer) {
  if (id) writer->Set(key, static_cast<uint32_t>(*id));
}

void SetSpecialTokens(const Tokenizer& tok, gguf::GgufWriter* writer) {
  const TokenizerConfig& c = tok.config();
  auto id_of = [&](const std::string& text) { return text.empty() ? std::nullopt : tok.TokenToId(text); };
  SetTokenId("tokenizer.ggml.bos_token_id", tok.bos_token_id(), writer);
  if (!tok.eos_token_ids().empty()) SetTokenId("tokenizer.ggml.eos_token_id", tok.eos_token_ids().front(), writer);
  SetTokenId("tokenizer.ggml.unknown_token_id", id_of(c.unk_token), writer);
  SetTokenId("tokenizer.ggml.padding_token_id", id_of(c.pad_token), writer);
  if (c.add_bos_token) writer->Set("tokenizer.ggml.add_bos_token", *c.add_bos_token);
  if (c.add_eos_token) writer->Set("tokenizer.ggml.add_eos_token", *c.add_eos_token);
  if (!c.chat_template.empty()) writer->Set("tokenizer.chat_template", c.chat_template);
  for (const auto& [name, source] : c.named_chat_templates) {
    if (name != "default") writer->Set("tokenizer.chat_template." + name, source);
  }
}

}  // namespace

Status WriteTokenizerMetadata(const std::string& hf_tokenizer_dir, const std::string& pre,
                              gguf::GgufWriter* writer) {
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tok, Tokenizer::FromDirectory(hf_tokenizer_dir));
  const std::string path = (std::filesystem::path(hf_tokenizer_dir) / "tokenizer.json").string();
  LLMSERVE_ASSIGN_OR_RETURN(json j, ReadByteLevelBpe(path));
  LLMSERVE_ASSIGN_OR_RETURN(GgufVocabulary vocab, VocabularyOf(j, path));
  LLMSERVE_ASSIGN_OR_RETURN(std::vector<std::string> merges, MergesOf(j, path));
  writer->Set("tokenizer.ggml.model", "gpt2");
  writer->Set("tokenizer.ggml.pre", pre);
  writer->Set("tokenizer.ggml.tokens", std::move(vocab.tokens));
  writer->Set("tokenizer.ggml.token_type", std::move(vocab.types));
  writer->Set("tokenizer.ggml.merges", std::move(merges));
  SetSpecialTokens(*tok, writer);
  return Status::Ok();
}

}  // namespace llmserve::common::tokenizer
