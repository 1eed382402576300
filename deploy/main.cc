// llmserve: the launcher and user-facing command-line tool.
#include "deploy/subcommands.h"

int main(int argc, char** argv) { return llmserve::deploy::RunLauncher(argc, argv); }
