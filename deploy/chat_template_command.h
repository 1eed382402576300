#pragma once
// `llmserve chat-template MODEL_DIR`: renders chat requests read from stdin
// (one JSON object per line) with the model's chat template and writes one
// JSON string per line; for debugging prompts and for tests.

#include <istream>
#include <ostream>

namespace llmserve::frontend {
class ChatTemplate;
}

namespace llmserve::deploy {

int RunChatTemplateCommand(int argc, char** argv);

// Renders each line of `in` (an object with "messages", optional
// "add_generation_prompt", "tools", "chat_template_kwargs"; other keys are
// template variables too) and writes one JSON string, or one
// {"error": "..."} object, per non-blank line to `out`. Returns the number of
// lines that failed.
int RenderChatRequests(const frontend::ChatTemplate& tmpl, std::istream& in, std::ostream& out);

}  // namespace llmserve::deploy
