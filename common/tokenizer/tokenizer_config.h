#pragma once
// The parts of tokenizer_config.json (and generation_config.json) that
// serving needs beyond tokenizer.json: special-token strings, the
// add_bos_token / add_eos_token switches and the chat template source.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status_or.h"

namespace llmserve::common::tokenizer {

struct TokenizerConfig {
  std::optional<bool> add_bos_token;  // as written in tokenizer_config.json
  std::optional<bool> add_eos_token;  // as written in tokenizer_config.json
  std::string bos_token;  // text of the BOS token ("" when none)
  std::string eos_token;  // text of the EOS token ("" when none)
  std::string unk_token;  // text of the unknown token ("" when none)
  std::string pad_token;  // text of the padding token ("" when none)
  // The default chat template (Jinja source); "" when the model has none.
  // Also read from chat_template.jinja next to tokenizer_config.json.
  std::string chat_template;
  // Named templates when chat_template is a list of {name, template}
  // ("default" also lands in chat_template).
  std::map<std::string, std::string> named_chat_templates;
  bool clean_up_tokenization_spaces = false;  // transformers' decode-time clean-up switch
  bool split_special_tokens = false;  // match special tokens as plain text
  std::string tokenizer_class;        // e.g. "LlamaTokenizerFast"
  // From generation_config.json, when present.
  std::optional<int32_t> generation_bos_token_id;
  std::vector<int32_t> generation_eos_token_ids;
};

// Parses tokenizer_config.json text (`file` names it in errors).
StatusOr<TokenizerConfig> ParseTokenizerConfig(const std::string& text, const std::string& file);

// Reads generation_config.json text into `config` (bos/eos token ids).
Status ParseGenerationConfig(const std::string& text, const std::string& file,
                             TokenizerConfig* config);

// Reads a whole file; NotFound when it does not exist.
StatusOr<std::string> ReadFileToString(const std::string& path);

}  // namespace llmserve::common::tokenizer
