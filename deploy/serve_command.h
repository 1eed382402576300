#pragma once
// `llmserve serve [MODEL_DIR]`: starts frontend(s), coordinator, engines and workers.

namespace llmserve::deploy {

int RunServeCommand(int argc, char** argv);

}  // namespace llmserve::deploy
