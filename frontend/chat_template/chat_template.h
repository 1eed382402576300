#pragma once
// ChatTemplate: turns an OpenAI-style message list into the prompt text a
// model was trained on, by rendering the Jinja `chat_template` that ships with
// the model exactly as Hugging Face's `apply_chat_template` does (jinja2's
// ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks; variables
// messages, tools, documents, add_generation_prompt, the special tokens and
// any chat_template_kwargs; globals raise_exception and strftime_now).
//
// Parsed once at construction; Render is const and safe to call from many
// threads at once.

#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status_or.h"

namespace llmserve::jinja {
class Template;
}  // namespace llmserve::jinja

namespace llmserve::frontend {

struct ChatTemplateOptions {
  // Which template of a named list to use; empty: HF's choice ("tool_use" when
  // tools are given and it exists, else "default").
  std::string template_name;
  // The local time strftime_now() formats; null: the system clock.
  std::function<std::tm()> now;
  // Upper bound on the statements and expressions one render evaluates (a
  // real chat template needs thousands); beyond it Render fails.
  uint64_t max_render_steps = 5'000'000;
};

class ChatTemplate {
 public:
  // From the parsed contents of tokenizer_config.json: `chat_template` (a
  // string or a list of {name, template}) and the special tokens (strings or
  // {content: ...} objects).
  static StatusOr<ChatTemplate> FromTokenizerConfig(const nlohmann::ordered_json& config,
                                                    ChatTemplateOptions options = {});
  // From a model directory: chat_template.jinja, chat_template.json or
  // tokenizer_config.json's chat_template (first found), special tokens from
  // tokenizer_config.json.
  // With `source` not empty, it replaces the model's template (--chat-template);
  // the special tokens still come from the model directory.
  static StatusOr<ChatTemplate> FromModelDir(const std::string& dir, ChatTemplateOptions options = {},
                                             const std::string& source = "");
  // From template source and special tokens given directly (e.g. {"bos_token": "<s>"}).
  static StatusOr<ChatTemplate> FromSource(const std::string& source,
                                           std::vector<std::pair<std::string, std::string>> special_tokens,
                                           ChatTemplateOptions options = {});

  // Renders the prompt. `messages` is an array of message objects, `tools` an
  // array or null, `extra_kwargs` an object (chat_template_kwargs such as
  // {"enable_thinking": false}) or null. Key order of objects is kept (it shows
  // in `tojson` output). A template error or raise_exception() is an
  // InvalidArgument status naming the template position.
  StatusOr<std::string> Render(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                               const nlohmann::ordered_json& tools,
                               const nlohmann::ordered_json& extra_kwargs) const;
  // The same for nlohmann::json inputs (whose objects are key-sorted).
  StatusOr<std::string> Render(const nlohmann::json& messages, bool add_generation_prompt,
                               const nlohmann::json& tools, const nlohmann::json& extra_kwargs) const;

  // Names of the available templates ("default" for a single template).
  std::vector<std::string> TemplateNames() const;
  // The special tokens passed to the template (only those the config sets).
  const std::vector<std::pair<std::string, std::string>>& special_tokens() const { return special_tokens_; }

 private:
  ChatTemplate() = default;
  std::map<std::string, std::shared_ptr<const jinja::Template>> templates_;
  std::vector<std::pair<std::string, std::string>> special_tokens_;
  ChatTemplateOptions options_;
};

// The template a --chat-template argument names, as vLLM reads it: the
// contents of the file at `argument` when it opens; otherwise the argument
// itself when it looks like a template (holds '{', '}' or a newline), with
// \n, \t, \r, \\, \' and \" escapes decoded; otherwise an error (a path that
// does not open).
StatusOr<std::string> ResolveChatTemplateArgument(const std::string& argument);

}  // namespace llmserve::frontend
