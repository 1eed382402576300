#pragma once
// `llmserve keygen --out DIR [--force]`: writes the cluster key (a ZeroMQ
// CURVE key pair, common/ipc/curve_keys.h) that every node of a deployment
// passes as --cluster-key-dir to secure the TCP sockets between nodes.

namespace llmserve::deploy {

int RunKeygenCommand(int argc, char** argv);

}  // namespace llmserve::deploy
