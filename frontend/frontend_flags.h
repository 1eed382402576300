#pragma once
// The llmserve-frontend command line: its flags (set by `llmserve serve`,
// which spawns one frontend per --api-server-count) and their translation
// into FrontendServerOptions. Only llmserve-frontend's main links these flags.

#include <string>

#include "frontend/frontend_server.h"
#include "base/status_or.h"

namespace llmserve::frontend {

// What the parsed command line asks for.
struct FrontendFlags {
  FrontendServerOptions server;  // the API server
  std::string cluster_key_dir;   // CURVE keys for TCP sockets between nodes; "": none
};

// Reads the parsed flags; InvalidArgument names a malformed one.
StatusOr<FrontendFlags> FrontendFlagsFromCommandLine();

}  // namespace llmserve::frontend
