#pragma once
// `llmserve tokenize MODEL_DIR`: encodes one JSON string per stdin line into a
// JSON array of token ids per stdout line; `--decode` does the reverse.

namespace llmserve::deploy {

int RunTokenizeCommand(int argc, char** argv);

}  // namespace llmserve::deploy
