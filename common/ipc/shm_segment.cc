#include "common/ipc/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace llmserve::common::ipc {

namespace {

Status Errno(const std::string& what) {
  return Status::Unavailable(what + ": " + std::strerror(errno));
}

}  // namespace

std::string UniqueShmName(std::string_view tag) {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^
                                          (static_cast<uint64_t>(::getpid()) << 32));
  char suffix[17];
  std::snprintf(suffix, sizeof(suffix), "%016llx", static_cast<unsigned long long>(rng()));
  return "/llmserve-" + std::string(tag) + "-" + std::to_string(::getpid()) + "-" + suffix;
}

StatusOr<std::unique_ptr<ShmSegment>> ShmSegment::Create(std::string_view tag, size_t size) {
  return CreateNamed(UniqueShmName(tag), size);
}

StatusOr<std::unique_ptr<ShmSegment>> ShmSegment::CreateNamed(const std::string& name,
                                                              size_t size) {
  if (size == 0) return Status::InvalidArgument("shm segment of size 0");
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return Status::ResourceExhausted("shm segment exists: " + name);
    return Errno("shm_open(" + name + ")");
  }
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    Status status = Errno("ftruncate(" + name + ", " + std::to_string(size) + ")");
    ::close(fd);
    ::shm_unlink(name.c_str());
    return status;
  }
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (data == MAP_FAILED) {
    Status status = Errno("mmap(" + name + ")");
    ::shm_unlink(name.c_str());
    return status;
  }
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, data, size, /*owner=*/true));
}

StatusOr<std::unique_ptr<ShmSegment>> ShmSegment::Open(const std::string& name,
                                                        size_t expected_size) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("no shm segment " + name);
    return Errno("shm_open(" + name + ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    Status status = Errno("fstat(" + name + ")");
    ::close(fd);
    return status;
  }
  if (static_cast<size_t>(st.st_size) != expected_size) {
    ::close(fd);
    return Status::InvalidArgument("shm segment " + name + " has " +
                                   std::to_string(st.st_size) + " bytes, expected " +
                                   std::to_string(expected_size));
  }
  void* data = ::mmap(nullptr, expected_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (data == MAP_FAILED) return Errno("mmap(" + name + ")");
  return std::unique_ptr<ShmSegment>(new ShmSegment(name, data, expected_size, false));
}

ShmSegment::~ShmSegment() {
  Unlink();
  ::munmap(data_, size_);
}

void ShmSegment::Unlink(bool force) {
  if (unlinked_ || (!owner_ && !force)) return;
  unlinked_ = true;
  ::shm_unlink(name_.c_str());  // ENOENT (a peer unlinked it) is fine
}

}  // namespace llmserve::common::ipc
