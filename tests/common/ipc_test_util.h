#pragma once
// Helpers for the multi-process ipc tests: forked children with a pipe that
// carries a string (a handle) from the parent, and a bounded wait for them.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "base/mix64.h"
#include "tests/common/wait_until.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LLMSERVE_IPC_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LLMSERVE_IPC_TEST_SANITIZED 1
#endif
#endif
#ifndef LLMSERVE_IPC_TEST_SANITIZED
#define LLMSERVE_IPC_TEST_SANITIZED 0
#endif

namespace llmserve::common::ipc::testing {

// Scales an iteration count down under sanitizers (about 10x slower).
inline uint64_t Scaled(uint64_t release_count) {
  return LLMSERVE_IPC_TEST_SANITIZED ? std::max<uint64_t>(1, release_count / 10) : release_count;
}

// A forked child running `body(message)`, where `message` is what the parent
// passes with Send(); the child's exit code is body's return value.
class Child final {
 public:
  explicit Child(std::function<int(const std::string&)> body) {
    int fds[2];
    if (::pipe(fds) != 0) std::abort();
    pid_ = ::fork();
    if (pid_ < 0) std::abort();
    if (pid_ == 0) {
      // Length-prefixed, so later siblings that inherited our pipe's write end
      // cannot keep us waiting for an EOF.
      ::close(fds[1]);
      uint64_t size = 0;
      if (!ReadFull(fds[0], &size, sizeof(size))) ::_exit(100);
      std::string message(size, '\0');
      if (!ReadFull(fds[0], message.data(), size)) ::_exit(101);
      ::close(fds[0]);
      std::fflush(stdout);
      ::_exit(body(message));
    }
    ::close(fds[0]);
    write_fd_ = fds[1];
  }
  ~Child() {
    if (write_fd_ >= 0) ::close(write_fd_);
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Sends `message` to the child (it starts its body once the pipe closes).
  void Send(const std::string& message) {
    const uint64_t size = message.size();
    const std::string framed = std::string(reinterpret_cast<const char*>(&size), 8) + message;
    size_t off = 0;
    while (off < framed.size()) {
      ssize_t n = ::write(write_fd_, framed.data() + off, framed.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(write_fd_);
    write_fd_ = -1;
  }
  // Waits up to `timeout` for the child; returns its exit code, or -1 if it
  // was killed (timeout or signal).
  int Wait(std::chrono::milliseconds timeout) {
    int status = 0;
    const bool exited = test_util::WaitUntil(
        [&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, timeout, std::chrono::milliseconds(2));
    if (!exited) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    reaped_ = true;
    return exited && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // Kills the child now (simulated crash).
  void Kill() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    reaped_ = true;
  }
  // The child's pid.
  pid_t pid() const { return pid_; }

 private:
  static bool ReadFull(int fd, void* data, size_t size) {
    char* p = static_cast<char*>(data);
    while (size > 0) {
      const ssize_t n = ::read(fd, p, size);
      if (n <= 0) return false;
      p += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  pid_t pid_ = -1;
  int write_fd_ = -1;
  bool reaped_ = false;
};

// splitmix64: a tiny deterministic generator for payloads and test data.
inline uint64_t SplitMix(uint64_t* state) { return base::SplitMix64Next(state); }

}  // namespace llmserve::common::ipc::testing
