#include <charconv>
#include <map>

#include "common/ipc/shm_ring.h"
#include "common/ipc/shm_ring_layout.h"

namespace llmserve::common::ipc {

using namespace shm_ring_internal;  // NOLINT: the ring's own internals

namespace {

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

std::string ShmRingHandle::Serialize() const {
  std::string out = "llmserve-shm-ring-v1\n";
  out += "shm=" + shm_name + "\n";
  out += "chunks=" + std::to_string(num_chunks) + "\n";
  out += "chunk_bytes=" + std::to_string(chunk_bytes) + "\n";
  out += "local_readers=" + std::to_string(num_local_readers) + "\n";
  out += "remote_readers=" + std::to_string(num_remote_readers) + "\n";
  out += "local=" + local_endpoint + "\n";
  out += std::string("wake=") + (wake == RingWake::kFutex ? "futex" : "zmq") + "\n";
  out += "notify=" + notify_endpoint + "\n";
  out += "remote=" + remote_endpoint + "\n";
  return out;
}

StatusOr<ShmRingHandle> ShmRingHandle::Parse(std::string_view text) {
  auto bad = [](const std::string& why) {
    return Status::InvalidArgument("malformed shm ring handle: " + why);
  };
  std::map<std::string, std::string, std::less<>> fields;
  bool first = true;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (first) {
      if (line != "llmserve-shm-ring-v1") return bad("missing 'llmserve-shm-ring-v1' header");
      first = false;
      continue;
    }
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return bad("line without '=': " + std::string(line));
    if (!fields.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))).second) {
      return bad("duplicate key " + std::string(line.substr(0, eq)));
    }
  }
  if (first) return bad("empty");
  for (const char* key : {"shm", "chunks", "chunk_bytes", "local_readers", "remote_readers",
                          "local", "wake", "notify", "remote"}) {
    if (!fields.count(key)) return bad(std::string("missing key ") + key);
  }
  if (fields.size() != 9) return bad("unknown keys");
  ShmRingHandle h;
  h.shm_name = fields["shm"];
  if (h.shm_name.size() < 2 || h.shm_name[0] != '/' ||
      h.shm_name.find('/', 1) != std::string::npos) {
    return bad("shm name must be '/name', got '" + h.shm_name + "'");
  }
  if (!ParseNumber(fields["chunks"], &h.num_chunks) ||
      !ParseNumber(fields["chunk_bytes"], &h.chunk_bytes) ||
      !ParseNumber(fields["local_readers"], &h.num_local_readers) ||
      !ParseNumber(fields["remote_readers"], &h.num_remote_readers)) {
    return bad("non-numeric geometry");
  }
  LLMSERVE_RETURN_IF_ERROR(ValidateGeometry(h.num_chunks, h.chunk_bytes, h.num_local_readers));
  h.local_endpoint = fields["local"];
  h.notify_endpoint = fields["notify"];
  h.remote_endpoint = fields["remote"];
  if (fields["wake"] == "futex") {
    h.wake = RingWake::kFutex;
  } else if (fields["wake"] == "zmq") {
    h.wake = RingWake::kZmq;
  } else {
    return bad("wake must be futex or zmq");
  }
  if (h.num_local_readers > 0 &&
      (h.local_endpoint.rfind("ipc://", 0) != 0 ||
       (h.wake == RingWake::kZmq && h.notify_endpoint.rfind("ipc://", 0) != 0))) {
    return bad("local readers need ipc:// endpoints");
  }
  if (h.num_remote_readers > 0 && h.remote_endpoint.rfind("tcp://", 0) != 0) {
    return bad("remote readers need a tcp:// endpoint");
  }
  return h;
}

}  // namespace llmserve::common::ipc
