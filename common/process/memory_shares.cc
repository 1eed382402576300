#include "common/process/memory_shares.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "common/ipc/process_liveness.h"
#include "common/ipc/zmq_socket.h"

namespace llmserve::common {

namespace {

constexpr std::string_view kPrefix = "llmserve-memory-share-";

std::string DirOrRuntime(const std::string& dir) { return dir.empty() ? ipc::RuntimeDir() : dir; }

// The pid in "llmserve-memory-share-<pid>-<n>", or 0 when `name` is not a share.
pid_t ShareOwner(const std::string& name) {
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return 0;
  const char* digits = name.c_str() + kPrefix.size();
  char* end = nullptr;
  const long pid = std::strtol(digits, &end, 10);
  if (end == digits || *end != '-' || pid <= 0) return 0;
  return static_cast<pid_t>(pid);
}

}  // namespace

StatusOr<std::unique_ptr<MemoryShare>> MemoryShare::Take(const std::string& dir) {
  static std::atomic<uint64_t> next{0};
  const std::string path = DirOrRuntime(dir) + "/" + std::string(kPrefix) + std::to_string(::getpid()) + "-" +
                           std::to_string(next.fetch_add(1));
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("cannot create the memory share " + path + ": " + std::strerror(errno));
  ::close(fd);
  return std::unique_ptr<MemoryShare>(new MemoryShare(path));
}

MemoryShare::~MemoryShare() { ::unlink(path_.c_str()); }

size_t CountMemoryShares(const std::string& dir) {
  size_t live = 0;
  std::error_code ec;
  // Increments with an error code: a file removed meanwhile must not throw.
  for (std::filesystem::directory_iterator it(DirOrRuntime(dir), ec), end; !ec && it != end; it.increment(ec)) {
    const pid_t owner = ShareOwner(it->path().filename().string());
    if (owner == 0) continue;
    if (ipc::ProcessAlive(owner)) {
      ++live;
    } else {
      ::unlink(it->path().c_str());  // left behind by a process that was killed
    }
  }
  return live == 0 ? 1 : live;
}

}  // namespace llmserve::common
