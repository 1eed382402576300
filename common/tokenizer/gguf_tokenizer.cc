#include "common/tokenizer/gguf_tokenizer.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/gguf/gguf_file.h"
#include "common/gguf/model_path.h"

namespace llmserve::common::tokenizer {
namespace {

using nlohmann::json;

// What a tokenizer.ggml.pre value stands for in tokenizer.json terms.
struct PreTokenizerStyle {
  const char* split_regex;
  bool nfc;            // normalizer NFC (Qwen2's tokenizer.json has it)
  bool ignore_merges;  // whole words in the vocabulary skip BPE (Llama 3)
};

StatusOr<PreTokenizerStyle> StyleOf(const std::string& pre) {
  if (pre == "qwen2") {
    return PreTokenizerStyle{R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
                             true, false};
  }
  if (pre == "llama-bpe") {
    return PreTokenizerStyle{R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re",
                             false, true};
  }
  return Status::InvalidArgument("unsupported tokenizer.ggml.pre \"" + pre +
                                 "\" (supported: \"qwen2\", \"llama-bpe\")");
}

json ByteLevel() {
  return json{{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}};
}

json PreTokenizerJson(const PreTokenizerStyle& style) {
  json split = {{"type", "Split"},
                {"pattern", {{"Regex", style.split_regex}}},
                {"behavior", "Isolated"},
                {"invert", false}};
  return json{{"type", "Sequence"}, {"pretokenizers", json::array({split, ByteLevel()})}};
}

// The tokens and their types (normal when token_type is absent).
struct Vocabulary {
  const std::vector<std::string>* tokens = nullptr;
  std::vector<int32_t> types;
};

StatusOr<Vocabulary> ReadVocabulary(const gguf::GgufMetadata& md) {
  Vocabulary v;
  LLMSERVE_ASSIGN_OR_RETURN(v.tokens, md.GetArray<std::string>("tokenizer.ggml.tokens"));
  if (v.tokens->empty()) return Status::InvalidArgument("tokenizer.ggml.tokens is empty");
  if (v.tokens->size() > static_cast<size_t>(INT32_MAX)) {
    return Status::InvalidArgument("tokenizer.ggml.tokens has too many tokens");
  }
  if (!md.Has("tokenizer.ggml.token_type")) {
    v.types.assign(v.tokens->size(), 1);
    return v;
  }
  LLMSERVE_ASSIGN_OR_RETURN(const std::vector<int32_t>* types, md.GetArray<int32_t>("tokenizer.ggml.token_type"));
  if (types->size() != v.tokens->size()) {
    return Status::InvalidArgument("tokenizer.ggml.token_type has " + std::to_string(types->size()) +
                                   " entries for " + std::to_string(v.tokens->size()) + " tokens");
  }
  v.types = *types;
  return v;
}

// model.vocab and the added_tokens list of tokenizer.json.
void VocabJson(const Vocabulary& v, json* vocab, json* added) {
  *vocab = json::object();
  *added = json::array();
  for (size_t i = 0; i < v.tokens->size(); ++i) {
    const std::string& token = (*v.tokens)[i];
    const int32_t type = v.types[i];
    if (type == kGgufTokenControl || type == kGgufTokenUserDefined) {
      added->push_back({{"id", i}, {"content", token}, {"single_word", false}, {"lstrip", false},
                        {"rstrip", false}, {"normalized", false}, {"special", type == kGgufTokenControl}});
    }
    // The first id of a token wins, as in a Hugging Face vocabulary.
    if (!vocab->contains(token)) (*vocab)[token] = i;
  }
}

StatusOr<json> MergesJson(const gguf::GgufMetadata& md) {
  LLMSERVE_ASSIGN_OR_RETURN(const std::vector<std::string>* merges,
                            md.GetArray<std::string>("tokenizer.ggml.merges"));
  json out = json::array();
  for (size_t i = 0; i < merges->size(); ++i) {
    const std::string& m = (*merges)[i];
    // The separator is the first space after the first byte (a token may
    // itself be a space in non-byte-level vocabularies).
    const size_t space = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (space == std::string::npos) {
      return Status::InvalidArgument("tokenizer.ggml.merges[" + std::to_string(i) + "] \"" + m +
                                     "\" is not two tokens separated by a space");
    }
    out.push_back(json::array({m.substr(0, space), m.substr(space + 1)}));
  }
  return out;
}

// The id and text of a special token named by a *_token_id key.
struct SpecialToken {
  int64_t id;
  std::string text;
};

StatusOr<std::optional<SpecialToken>> ReadSpecial(const gguf::GgufMetadata& md, const std::string& key,
                                                  const std::vector<std::string>& tokens) {
  if (!md.Has(key)) return std::optional<SpecialToken>();
  LLMSERVE_ASSIGN_OR_RETURN(int64_t id, md.GetInteger(key));
  if (id < 0 || static_cast<uint64_t>(id) >= tokens.size()) {
    return Status::InvalidArgument(key + " " + std::to_string(id) + " is outside the " +
                                   std::to_string(tokens.size()) + " tokens");
  }
  return std::optional<SpecialToken>(SpecialToken{id, tokens[static_cast<size_t>(id)]});
}

// TemplateProcessing adding `prefix` / `suffix`, or ByteLevel (adds nothing).
json PostProcessorJson(const std::optional<SpecialToken>& prefix, const std::optional<SpecialToken>& suffix) {
  if (!prefix && !suffix) return ByteLevel();
  json single = json::array(), specials = json::object();
  auto add = [&](const SpecialToken& t) {
    single.push_back({{"SpecialToken", {{"id", t.text}, {"type_id", 0}}}});
    specials[t.text] = {{"id", t.text}, {"ids", json::array({t.id})}, {"tokens", json::array({t.text})}};
  };
  if (prefix) add(*prefix);
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  if (suffix) add(*suffix);
  return json{{"type", "TemplateProcessing"}, {"single", single}, {"pair", single}, {"special_tokens", specials}};
}

// bos/eos/unk/pad texts, add_bos/add_eos and chat templates.
struct SpecialTokens {
  std::optional<SpecialToken> bos, eos, unk, pad;
  bool add_bos = false, add_eos = false;
};

StatusOr<SpecialTokens> ReadSpecialTokens(const gguf::GgufMetadata& md, const std::vector<std::string>& tokens) {
  SpecialTokens s;
  LLMSERVE_ASSIGN_OR_RETURN(s.bos, ReadSpecial(md, "tokenizer.ggml.bos_token_id", tokens));
  LLMSERVE_ASSIGN_OR_RETURN(s.eos, ReadSpecial(md, "tokenizer.ggml.eos_token_id", tokens));
  LLMSERVE_ASSIGN_OR_RETURN(s.unk, ReadSpecial(md, "tokenizer.ggml.unknown_token_id", tokens));
  LLMSERVE_ASSIGN_OR_RETURN(s.pad, ReadSpecial(md, "tokenizer.ggml.padding_token_id", tokens));
  LLMSERVE_ASSIGN_OR_RETURN(s.add_bos, md.GetOr<bool>("tokenizer.ggml.add_bos_token", false));
  LLMSERVE_ASSIGN_OR_RETURN(s.add_eos, md.GetOr<bool>("tokenizer.ggml.add_eos_token", false));
  if (s.add_bos && !s.bos) {
    return Status::InvalidArgument("tokenizer.ggml.add_bos_token is true but tokenizer.ggml.bos_token_id is missing");
  }
  if (s.add_eos && !s.eos) {
    return Status::InvalidArgument("tokenizer.ggml.add_eos_token is true but tokenizer.ggml.eos_token_id is missing");
  }
  return s;
}

StatusOr<json> ConfigJson(const gguf::GgufMetadata& md, const SpecialTokens& s) {
  json config = json::object();
  auto text = [](const std::optional<SpecialToken>& t) { return t ? json(t->text) : json(nullptr); };
  config["bos_token"] = text(s.bos);
  config["eos_token"] = text(s.eos);
  config["unk_token"] = text(s.unk);
  config["pad_token"] = text(s.pad);
  if (md.Has("tokenizer.ggml.add_bos_token")) config["add_bos_token"] = s.add_bos;
  if (md.Has("tokenizer.ggml.add_eos_token")) config["add_eos_token"] = s.add_eos;
  const std::string kTemplate = "tokenizer.chat_template";
  json named = json::array();
  for (const auto& [key, value] : md.entries()) {
    if (key.rfind(kTemplate + ".", 0) != 0) continue;
    LLMSERVE_ASSIGN_OR_RETURN(std::string source, md.Get<std::string>(key));
    named.push_back({{"name", key.substr(kTemplate.size() + 1)}, {"template", source}});
  }
  if (md.Has(kTemplate)) {
    LLMSERVE_ASSIGN_OR_RETURN(std::string source, md.Get<std::string>(kTemplate));
    if (named.empty()) {
      config["chat_template"] = source;
      return config;
    }
    named.insert(named.begin(), json{{"name", "default"}, {"template", source}});
  }
  if (!named.empty()) config["chat_template"] = named;
  return config;
}

StatusOr<json> TokenizerJson(const gguf::GgufMetadata& md, const Vocabulary& v, const SpecialTokens& s) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string pre, md.Get<std::string>("tokenizer.ggml.pre"));
  LLMSERVE_ASSIGN_OR_RETURN(PreTokenizerStyle style, StyleOf(pre));
  LLMSERVE_ASSIGN_OR_RETURN(json merges, MergesJson(md));
  json vocab, added;
  VocabJson(v, &vocab, &added);
  json model = {{"type", "BPE"},
                {"dropout", nullptr},
                {"unk_token", s.unk ? json(s.unk->text) : json(nullptr)},
                {"byte_fallback", false},
                {"ignore_merges", style.ignore_merges},
                {"vocab", std::move(vocab)},
                {"merges", std::move(merges)}};
  return json{{"version", "1.0"},
              {"added_tokens", std::move(added)},
              {"normalizer", style.nfc ? json{{"type", "NFC"}} : json(nullptr)},
              {"pre_tokenizer", PreTokenizerJson(style)},
              {"post_processor", PostProcessorJson(s.add_bos ? s.bos : std::nullopt, s.add_eos ? s.eos : std::nullopt)},
              {"decoder", ByteLevel()},
              {"model", std::move(model)}};
}

}  // namespace

StatusOr<HfTokenizerFiles> HfTokenizerFromGguf(const gguf::GgufMetadata& md) {
  LLMSERVE_ASSIGN_OR_RETURN(std::string model, md.Get<std::string>("tokenizer.ggml.model"));
  if (model != "gpt2") {
    return Status::InvalidArgument("unsupported tokenizer.ggml.model \"" + model + "\" (supported: \"gpt2\")");
  }
  LLMSERVE_ASSIGN_OR_RETURN(Vocabulary vocab, ReadVocabulary(md));
  LLMSERVE_ASSIGN_OR_RETURN(SpecialTokens specials, ReadSpecialTokens(md, *vocab.tokens));
  LLMSERVE_ASSIGN_OR_RETURN(json tokenizer, TokenizerJson(md, vocab, specials));
  LLMSERVE_ASSIGN_OR_RETURN(json config, ConfigJson(md, specials));
  // Invalid UTF-8 in a token becomes U+FFFD rather than an exception.
  constexpr auto kReplace = json::error_handler_t::replace;
  return HfTokenizerFiles{tokenizer.dump(-1, ' ', false, kReplace), config.dump(-1, ' ', false, kReplace)};
}

StatusOr<std::optional<HfTokenizerFiles>> GgufTokenizerFiles(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool hf_dir = fs::is_directory(path, ec) && fs::exists(fs::path(path) / "tokenizer.json", ec);
  if (hf_dir || !fs::exists(path, ec)) return std::optional<HfTokenizerFiles>();
  LLMSERVE_ASSIGN_OR_RETURN(std::string gguf_path, gguf::GgufModelFile(path));
  if (gguf_path.empty()) return std::optional<HfTokenizerFiles>();
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(gguf_path));
  auto files = HfTokenizerFromGguf(file->metadata());
  if (!files.ok()) return Status::InvalidArgument(gguf_path + ": " + files.status().message());
  return std::optional<HfTokenizerFiles>(std::move(files).value());
}

}  // namespace llmserve::common::tokenizer
