#pragma once
// The cluster key: one ZeroMQ CURVE key pair shared by every node of a
// deployment (`llmserve keygen` writes it; operators copy the directory to each
// node). Sockets that bind on TCP act as CURVE servers with its secret half;
// sockets that connect use it both as their own identity and as the server key,
// and the ZAP authenticator admits only clients presenting its public half. A
// node without the key, or with another deployment's, cannot complete the
// handshake: nothing it sends reaches our code.

#include <string>

#include "base/status.h"
#include "base/status_or.h"

namespace llmserve::common::ipc {

// A CURVE key pair, each half Z85-encoded (40 characters).
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};

// The file `llmserve keygen` writes inside the cluster key directory.
inline constexpr char kClusterKeyFile[] = "cluster.key";

// A fresh random key pair (libzmq with libsodium).
StatusOr<CurveKeyPair> GenerateCurveKeyPair();

// Writes `key` to DIR/cluster.key with mode 0600, creating DIR (mode 0700).
// An existing key file is kept unless `overwrite`.
Status WriteClusterKey(const std::string& dir, const CurveKeyPair& key, bool overwrite);

// Reads DIR/cluster.key; errors name the file and what is wrong with it.
StatusOr<CurveKeyPair> ReadClusterKey(const std::string& dir);

}  // namespace llmserve::common::ipc
