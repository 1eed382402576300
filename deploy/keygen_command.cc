#include "deploy/keygen_command.h"

#include <cstdio>
#include <string>

#include "common/ipc/curve_keys.h"

namespace llmserve::deploy {
namespace {

constexpr const char* kKeygenUsage =
    "usage: llmserve keygen --out DIR [--force]\n"
    "Writes DIR/cluster.key: a fresh ZeroMQ CURVE key pair (mode 0600, DIR mode 0700).\n"
    "Copy DIR to every node over a trusted channel and start each `llmserve serve` with\n"
    "--cluster-key-dir DIR: the TCP sockets between nodes then authenticate and encrypt with\n"
    "it, and a node or client without this key cannot connect.\n"
    "  --out DIR   directory to write (created if missing)\n"
    "  --force     replace an existing cluster.key (every node needs the new one)\n";

}  // namespace

int RunKeygenCommand(int argc, char** argv) {
  std::string out;
  bool force = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kKeygenUsage, stdout);
      return 0;
    } else if (arg == "--force") {
      force = true;
    } else if (arg == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (arg.rfind("--out=", 0) == 0) {
      out = arg.substr(6);
    } else {
      std::fprintf(stderr, "llmserve keygen: unexpected argument '%s'\n%s", arg.c_str(), kKeygenUsage);
      return 2;
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "llmserve keygen: --out DIR is required\n%s", kKeygenUsage);
    return 2;
  }
  auto key = common::ipc::GenerateCurveKeyPair();
  if (!key.ok()) {
    std::fprintf(stderr, "llmserve keygen: %s\n", key.status().message().c_str());
    return 1;
  }
  if (Status written = common::ipc::WriteClusterKey(out, *key, force); !written.ok()) {
    std::fprintf(stderr, "llmserve keygen: %s\n", written.message().c_str());
    return 1;
  }
  std::printf("wrote %s/%s (public key %s)\n", out.c_str(), common::ipc::kClusterKeyFile,
              key->public_key.c_str());
  return 0;
}

}  // namespace llmserve::deploy
