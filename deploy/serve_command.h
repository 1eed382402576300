#pragma once
// `llmserve serve [MODEL]`: starts frontend(s), coordinator, engines and workers.

#include "base/status_or.h"
#include "deploy/serve_options.h"

namespace llmserve::deploy {

int RunServeCommand(int argc, char** argv);

// The options the parsed serve flags ask for beyond the process layout and
// the engine configuration; InvalidArgument names a bad flag.
StatusOr<ServeOptions> ServeOptionsFromFlags();

}  // namespace llmserve::deploy
