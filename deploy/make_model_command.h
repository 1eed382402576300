#pragma once
// `llmserve make-model --preset tiny|qwen3-0.6b --arch qwen3|llama|mistral|qwen2
// --out DIR [--seed S ...]`: writes a Hugging Face model directory with seeded
// random weights and the real Qwen3 tokenizer (see worker/test_model.h).

namespace llmserve::deploy {

int RunMakeModelCommand(int argc, char** argv);

}  // namespace llmserve::deploy
