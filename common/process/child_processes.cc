#include "common/process/child_processes.h"

#include <glog/logging.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>

extern char** environ;

namespace llmserve::common {

std::string ChildExit::Describe() const {
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with code " + std::to_string(exit_code);
}

ChildProcesses::~ChildProcesses() {
  if (!children_.empty()) TerminateAll(std::chrono::seconds(5));
}

StatusOr<pid_t> ChildProcesses::Spawn(const std::string& name, const std::vector<std::string>& argv,
                                      const std::vector<std::string>& extra_env) {
  if (argv.empty()) return Status::InvalidArgument("spawn " + name + ": empty command");
  // Build everything the child needs before fork: after fork only
  // async-signal-safe calls are allowed.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_storage;
  for (char** e = environ; *e; ++e) env_storage.emplace_back(*e);
  for (const auto& e : extra_env) env_storage.push_back(e);
  std::vector<char*> env;
  for (auto& e : env_storage) env.push_back(e.data());
  env.push_back(nullptr);
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid < 0) return Status::Internal("spawn " + name + ": fork failed: " + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    // Undo the parent's signal blocking (the launcher blocks SIGTERM/SIGINT).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (argv[0].find('/') != std::string::npos) execve(args[0], args.data(), env.data());
    else execvpe(args[0], args.data(), env.data());
    const char msg[] = "llmserve: exec failed\n";
    (void)!write(2, msg, sizeof(msg) - 1);
    _exit(127);
  }
  children_.push_back({name, pid});
  return pid;
}

std::optional<ChildExit> ChildProcesses::Reap(bool block) {
  int status = 0;
  pid_t pid;
  do {
    pid = waitpid(-1, &status, block ? 0 : WNOHANG);
  } while (pid < 0 && errno == EINTR);
  if (pid <= 0) return std::nullopt;
  ChildExit exit;
  exit.pid = pid;
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  else exit.exit_code = WEXITSTATUS(status);
  for (auto it = children_.begin(); it != children_.end(); ++it) {
    if (it->pid == pid) {
      exit.name = it->name;
      children_.erase(it);
      break;
    }
  }
  return exit;
}

std::optional<ChildExit> ChildProcesses::WaitAny(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto exit = Reap(false)) {
      if (!exit->name.empty()) return exit;
      continue;  // not one of ours (e.g. a grandchild reparented to us)
    }
    if (children_.empty() || std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void ChildProcesses::SignalAll(int signal) {
  for (const auto& c : children_) kill(c.pid, signal);
}

std::optional<pid_t> ChildProcesses::PidOf(const std::string& name) const {
  for (const auto& c : children_)
    if (c.name == name) return c.pid;
  return std::nullopt;
}

std::vector<ChildExit> ChildProcesses::TerminateAll(std::chrono::milliseconds grace) {
  std::vector<ChildExit> exits;
  SignalAll(SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!children_.empty() && std::chrono::steady_clock::now() < deadline) {
    if (auto e = WaitAny(std::chrono::milliseconds(50))) exits.push_back(*e);
  }
  if (!children_.empty()) {
    for (const auto& c : children_) LOG(WARNING) << c.name << " (pid " << c.pid << ") did not stop; killing it";
    SignalAll(SIGKILL);
    while (!children_.empty()) {
      if (auto e = Reap(true)) {
        if (!e->name.empty()) exits.push_back(*e);
      }
    }
  }
  return exits;
}

std::string ExecutableDirectory() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

}  // namespace llmserve::common
