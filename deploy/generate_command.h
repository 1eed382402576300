#pragma once
// `llmserve generate MODEL_DIR --prompts FILE`: offline batch generation.

namespace llmserve::deploy {

int RunGenerateCommand(int argc, char** argv);

}  // namespace llmserve::deploy
