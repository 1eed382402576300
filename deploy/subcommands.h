#pragma once
// The `llmserve` launcher's subcommands: `llmserve <name> [args] [--flags]`.

#include <string>
#include <vector>

namespace llmserve::deploy {

struct Subcommand {
  std::string name;     // as typed on the command line, e.g. "serve"
  std::string summary;  // one line for `llmserve --help`
  // Runs the subcommand. argv[0] is "llmserve <name>"; flags are not parsed yet.
  int (*run)(int argc, char** argv);
};

// Every subcommand, in the order `llmserve --help` lists them.
const std::vector<Subcommand>& Subcommands();

// Dispatches argv (as given to main) to a subcommand; prints help for
// `llmserve`, `llmserve --help` and unknown names.
int RunLauncher(int argc, char** argv);

}  // namespace llmserve::deploy
