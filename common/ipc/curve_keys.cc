#include "common/ipc/curve_keys.h"

#include <sys/stat.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace llmserve::common::ipc {

namespace {

constexpr size_t kZ85KeyLength = 40;
constexpr char kPublicField[] = "public-key";
constexpr char kSecretField[] = "secret-key";

bool IsZ85Key(const std::string& text) {
  if (text.size() != kZ85KeyLength) return false;
  uint8_t decoded[32];
  return zmq_z85_decode(decoded, text.c_str()) != nullptr;
}

std::string Trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

}  // namespace

StatusOr<CurveKeyPair> GenerateCurveKeyPair() {
  char public_key[kZ85KeyLength + 1];
  char secret_key[kZ85KeyLength + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    return Status::Unimplemented(std::string("cannot generate a CURVE key pair: ") +
                                      zmq_strerror(zmq_errno()) +
                                      " (libzmq built without CURVE support?)");
  }
  return CurveKeyPair{public_key, secret_key};
}

Status WriteClusterKey(const std::string& dir, const CurveKeyPair& key, bool overwrite) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::InvalidArgument("cannot create " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  const std::string path = dir + "/" + kClusterKeyFile;
  if (!overwrite && std::filesystem::exists(path)) {
    return Status::InvalidArgument(path + " exists; pass --force to replace it (every node must then get the new key)");
  }
  // Create with 0600 before writing the secret so it is never world-readable.
  const mode_t old_mask = ::umask(077);
  std::ofstream out(path, std::ios::trunc);
  ::umask(old_mask);
  if (!out) return Status::InvalidArgument("cannot write " + path + ": " + std::strerror(errno));
  out << "# llmserve cluster key (ZeroMQ CURVE, Z85). Secret: copy to every node over a\n"
         "# trusted channel and pass the directory as --cluster-key-dir.\n"
      << kPublicField << " = " << key.public_key << "\n"
      << kSecretField << " = " << key.secret_key << "\n";
  out.close();
  if (!out) return Status::InvalidArgument("cannot write " + path);
  ::chmod(path.c_str(), 0600);
  return Status::Ok();
}

StatusOr<CurveKeyPair> ReadClusterKey(const std::string& dir) {
  const std::string path = dir + "/" + kClusterKeyFile;
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path + " (create it with `llmserve keygen --out " + dir + "`)");
  CurveKeyPair key;
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument(path + ": malformed line: " + line);
    const std::string name = Trim(line.substr(0, eq));
    const std::string value = Trim(line.substr(eq + 1));
    if (name == kPublicField) {
      key.public_key = value;
    } else if (name == kSecretField) {
      key.secret_key = value;
    } else {
      return Status::InvalidArgument(path + ": unknown field '" + name + "'");
    }
  }
  if (!IsZ85Key(key.public_key)) return Status::InvalidArgument(path + ": missing or invalid public-key");
  if (!IsZ85Key(key.secret_key)) return Status::InvalidArgument(path + ": missing or invalid secret-key");
  char derived[kZ85KeyLength + 1];
  if (zmq_curve_public(derived, key.secret_key.c_str()) != 0 || key.public_key != derived) {
    return Status::InvalidArgument(path + ": public-key does not belong to secret-key");
  }
  return key;
}

}  // namespace llmserve::common::ipc
