#include "common/tokenizer/tokenizer.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/gguf/gguf_file.h"
#include "common/gguf/model_path.h"
#include "common/tokenizer/added_tokens.h"
#include "common/tokenizer/decoders.h"
#include "common/tokenizer/gguf_tokenizer.h"
#include "common/tokenizer/model_bpe.h"
#include "common/tokenizer/normalizers.h"
#include "common/tokenizer/post_processors.h"
#include "common/tokenizer/pre_tokenizers.h"
#include "base/utf8.h"

namespace llmserve::common::tokenizer {

using nlohmann::json;

Tokenizer::Tokenizer() : added_(std::make_unique<AddedTokens>()) {}
Tokenizer::~Tokenizer() = default;

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  LLMSERVE_ASSIGN_OR_RETURN(std::optional<HfTokenizerFiles> gguf_files, GgufTokenizerFiles(dir));
  if (gguf_files) return FromJson(gguf_files->tokenizer_json, gguf_files->tokenizer_config_json, dir);
  const fs::path root(dir);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::NotFound("tokenizer directory " + dir + " does not exist");
  const std::string tok_path = (root / "tokenizer.json").string();
  auto tok = ReadFileToString(tok_path);
  if (!tok.ok()) {
    return Status::NotFound(tok_path + ": not found (only tokenizer.json models are supported)");
  }
  std::string cfg_text;
  const std::string cfg_path = (root / "tokenizer_config.json").string();
  if (fs::exists(cfg_path, ec)) {
    LLMSERVE_ASSIGN_OR_RETURN(cfg_text, ReadFileToString(cfg_path));
  }
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!cfg_text.empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(t->config_, ParseTokenizerConfig(cfg_text, cfg_path));
  }
  const std::string jinja_path = (root / "chat_template.jinja").string();
  if (t->config_.chat_template.empty() && fs::exists(jinja_path, ec)) {
    LLMSERVE_ASSIGN_OR_RETURN(t->config_.chat_template, ReadFileToString(jinja_path));
  }
  const std::string gen_path = (root / "generation_config.json").string();
  if (fs::exists(gen_path, ec)) {
    LLMSERVE_ASSIGN_OR_RETURN(std::string gen, ReadFileToString(gen_path));
    LLMSERVE_RETURN_IF_ERROR(ParseGenerationConfig(gen, gen_path, &t->config_));
  }
  LLMSERVE_RETURN_IF_ERROR(t->Init(*tok, tok_path));
  return t;
}

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::FromJson(const std::string& tokenizer_json,
                                                         const std::string& tokenizer_config_json,
                                                         const std::string& name) {
  std::unique_ptr<Tokenizer> t(new Tokenizer());
  if (!tokenizer_config_json.empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(t->config_,
                              ParseTokenizerConfig(tokenizer_config_json, name + "/tokenizer_config.json"));
  }
  LLMSERVE_RETURN_IF_ERROR(t->Init(tokenizer_json, name + "/tokenizer.json"));
  return t;
}

Status Tokenizer::Init(const std::string& text, const std::string& file) {
  const JsonContext root{file, ""};
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return root.Error("not valid JSON");
  if (!j.is_object()) return root.Error("expected an object, found " + JsonTypeName(j));
  try {
    if (!j.contains("model")) return root.Error("missing required field \"model\"");
    static const json kNull;
    auto member = [&](const char* key) -> const json& {
      auto it = j.find(key);
      return it == j.end() ? kNull : *it;
    };
    LLMSERVE_RETURN_IF_ERROR(added_->Load(member("added_tokens"), root.Child("added_tokens")));
    LLMSERVE_ASSIGN_OR_RETURN(normalizer_, MakeNormalizer(member("normalizer"), root.Child("normalizer")));
    LLMSERVE_ASSIGN_OR_RETURN(pre_tokenizer_,
                              MakePreTokenizer(member("pre_tokenizer"), root.Child("pre_tokenizer")));
    LLMSERVE_ASSIGN_OR_RETURN(model_, BpeModel::FromJson(j["model"], root.Child("model")));
    LLMSERVE_ASSIGN_OR_RETURN(post_processor_,
                              MakePostProcessor(member("post_processor"), root.Child("post_processor")));
    LLMSERVE_ASSIGN_OR_RETURN(decoder_, MakeDecoder(member("decoder"), root.Child("decoder")));
  } catch (const json::exception& e) {  // a shape our explicit checks missed
    return root.Error(std::string("unexpected JSON shape: ") + e.what());
  }
  vocab_size_ = model_->id_limit();
  for (const auto& t : added_->tokens()) vocab_size_ = std::max(vocab_size_, t.id + 1);
  return ApplyConfig();
}

Status Tokenizer::ApplyConfig() {
  auto id_of = [&](const std::string& tok) -> std::optional<int32_t> {
    return tok.empty() ? std::nullopt : TokenToId(tok);
  };
  bos_token_id_ = id_of(config_.bos_token);
  if (!bos_token_id_) bos_token_id_ = config_.generation_bos_token_id;
  if (auto eos = id_of(config_.eos_token)) eos_token_ids_.push_back(*eos);
  for (int32_t id : config_.generation_eos_token_ids) {
    if (std::find(eos_token_ids_.begin(), eos_token_ids_.end(), id) == eos_token_ids_.end()) {
      eos_token_ids_.push_back(id);
    }
  }
  // transformers' Llama/Gemma fast tokenizers rebuild the post-processor from
  // add_bos_token / add_eos_token (defaults: true / false).
  static const char* kRebuilding[] = {"LlamaTokenizer", "LlamaTokenizerFast", "CodeLlamaTokenizer",
                                      "CodeLlamaTokenizerFast", "GemmaTokenizer", "GemmaTokenizerFast"};
  const bool rebuilds = std::any_of(std::begin(kRebuilding), std::end(kRebuilding),
                                    [&](const char* c) { return config_.tokenizer_class == c; });
  if (rebuilds && (config_.add_bos_token || config_.add_eos_token)) {
    const bool bos = config_.add_bos_token.value_or(true), eos = config_.add_eos_token.value_or(false);
    std::vector<int32_t> prefix, suffix;
    if (bos) {
      auto id = id_of(config_.bos_token);
      if (!id) return Status::InvalidArgument("tokenizer_config.json: add_bos_token is set but bos_token \"" +
                                              config_.bos_token + "\" is not in the vocabulary");
      prefix.push_back(*id);
    }
    if (eos) {
      auto id = id_of(config_.eos_token);
      if (!id) return Status::InvalidArgument("tokenizer_config.json: add_eos_token is set but eos_token \"" +
                                              config_.eos_token + "\" is not in the vocabulary");
      suffix.push_back(*id);
    }
    post_processor_ = MakeAffixProcessor(std::move(prefix), std::move(suffix));
  }
  std::vector<int32_t> probe;
  if (post_processor_) post_processor_->Process(&probe);
  add_bos_ = bos_token_id_ && !probe.empty() && probe.front() == *bos_token_id_;
  return Status::Ok();
}

std::optional<int32_t> Tokenizer::TokenToId(std::string_view token) const {
  if (const AddedToken* t = added_->FindByContent(token)) return t->id;
  return model_->TokenToId(token);
}

std::optional<std::string> Tokenizer::IdToToken(int32_t id) const {
  if (const AddedToken* t = added_->FindById(id)) return t->content;
  if (const std::string* s = model_->IdToToken(id)) return *s;
  return std::nullopt;
}

std::optional<std::string> Tokenizer::TokenBytes(int32_t id) const {
  if (const AddedToken* t = added_->FindById(id)) return t->content;
  const std::string* s = model_->IdToToken(id);
  if (s == nullptr) return std::nullopt;
  std::string bytes = *s;
  if (decoder_) decoder_->TokenBytes(&bytes);
  return bytes;
}

bool Tokenizer::IsSpecial(int32_t id) const {
  const AddedToken* t = added_->FindById(id);
  return t != nullptr && t->special;
}

void Tokenizer::EncodePlain(std::string text, bool first_section, std::vector<int32_t>* ids) const {
  std::vector<std::string> pieces;
  pieces.push_back(std::move(text));
  if (pre_tokenizer_) pre_tokenizer_->PreTokenize(&pieces, first_section);
  for (const auto& p : pieces) model_->Tokenize(p, ids);
}

void Tokenizer::EncodeSection(std::string_view text, bool first_section, std::vector<int32_t>* ids) const {
  std::string normalized(text);
  if (normalizer_) normalizer_->Normalize(&normalized);
  if (normalized.empty()) return;
  if (!added_->has_normalized()) {
    EncodePlain(std::move(normalized), first_section, ids);
    return;
  }
  std::vector<Section> sections;
  added_->Split(normalized, /*normalized=*/true, config_.split_special_tokens, &sections);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].id >= 0) {
      ids->push_back(sections[i].id);
    } else {
      EncodePlain(std::string(sections[i].text), first_section && i == 0, ids);
    }
  }
}

std::vector<int32_t> Tokenizer::Encode(std::string_view input, bool add_special_tokens) const {
  std::string repaired;
  if (!base::IsValidUtf8(input)) {
    repaired = base::RepairUtf8(input);
    input = repaired;
  }
  std::vector<int32_t> ids;
  ids.reserve(input.size() / 3 + 4);
  std::vector<Section> sections;
  added_->Split(input, /*normalized=*/false, config_.split_special_tokens, &sections);
  for (size_t i = 0; i < sections.size(); ++i) {
    if (sections[i].id >= 0) {
      ids.push_back(sections[i].id);
    } else {
      EncodeSection(sections[i].text, sections[i].text.data() == input.data(), &ids);
    }
  }
  if (add_special_tokens && post_processor_) post_processor_->Process(&ids);
  return ids;
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (const AddedToken* t = added_->FindById(id)) {
      if (!(skip_special_tokens && t->special)) tokens.push_back(t->content);
    } else if (const std::string* s = model_->IdToToken(id)) {
      tokens.push_back(*s);
    }
  }
  if (!decoder_) {
    std::string out;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) out += ' ';
      out += tokens[i];
    }
    return out;
  }
  decoder_->DecodeChain(&tokens);
  std::string out;
  for (const auto& t : tokens) out += t;
  return base::IsValidUtf8(out) ? out : base::RepairUtf8(out);
}

void Tokenizer::ClearCache() const { model_->ClearCache(); }

std::string Tokenizer::CleanUpTokenizationSpaces(std::string text) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},   {" ?", "?"},   {" !", "!"},     {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string out;
    out.reserve(text.size());
    size_t prev = 0;
    for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, prev)) {
      out.append(text, prev, pos - prev);
      out.append(to);
      prev = pos + from.size();
    }
    out.append(text, prev, std::string::npos);
    text = std::move(out);
  }
  return text;
}

}  // namespace llmserve::common::tokenizer
