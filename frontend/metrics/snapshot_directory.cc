#include "frontend/metrics/snapshot_directory.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "frontend/metrics/snapshot_codec.h"

namespace llmserve::frontend::metrics {

namespace {

constexpr char kFilePrefix[] = "api-server-";
constexpr char kFileSuffix[] = ".json";

// What /proc/PID/stat says of a process: its state letter and start time.
struct ProcStat {
  char state = '?';
  uint64_t start_ticks = 0;
};

std::optional<ProcStat> ReadProcStat(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so fields count from the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  ProcStat stat;
  std::string skipped;
  fields >> stat.state;
  for (int field = 4; field < 22; ++field) fields >> skipped;  // ppid .. priority/nice/threads/itrealvalue
  fields >> stat.start_ticks;                                  // field 22: starttime
  if (!fields) return std::nullopt;
  return stat;
}

bool IsSnapshotFileName(const std::string& name) {
  const std::string prefix = kFilePrefix, suffix = kFileSuffix;
  return name.size() > prefix.size() + suffix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status WriteWhole(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Unavailable("cannot write " + path + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return Status::Unavailable("cannot write " + path + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return Status::Unavailable("cannot write " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

// Files already reported unreadable, so that a scrape every few seconds logs each once.
std::mutex reported_mu;
std::set<std::string> reported_files;

void ReportUnreadable(const std::string& path, const std::string& why) {
  std::lock_guard<std::mutex> lock(reported_mu);
  if (reported_files.insert(path).second) LOG(WARNING) << "metrics: skipping " << path << ": " << why;
}

}  // namespace

uint64_t ProcessStartTicks(int64_t pid) {
  const auto stat = ReadProcStat(pid);
  return stat ? stat->start_ticks : 0;
}

bool ProcessRunning(int64_t pid, uint64_t start_ticks) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  const auto stat = ReadProcStat(pid);
  if (!stat) return true;  // no /proc to ask: kill() said it exists
  if (stat->state == 'Z' || stat->state == 'X') return false;  // exited, not yet reaped
  return start_ticks == 0 || stat->start_ticks == start_ticks;
}

SnapshotDirectory::SnapshotDirectory(std::string dir, std::string file_name)
    : dir_(std::move(dir)),
      file_name_(std::move(file_name)),
      path_(dir_ + "/" + file_name_),
      temp_path_(dir_ + "/." + file_name_ + ".tmp") {}

StatusOr<std::unique_ptr<SnapshotDirectory>> SnapshotDirectory::Open(const std::string& dir, int32_t index) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    return Status::InvalidArgument("--metrics-dir " + dir + ": " + (ec ? ec.message() : "not a directory"));
  // The start time too: a restarted server that happened to get a dead one's pid must not overwrite its file.
  const std::string name = kFilePrefix + std::to_string(index) + "-" + std::to_string(::getpid()) + "-" +
                           std::to_string(ProcessStartTicks(::getpid())) + kFileSuffix;
  return std::unique_ptr<SnapshotDirectory>(new SnapshotDirectory(dir, name));
}

Status SnapshotDirectory::Publish(const std::vector<FamilySnapshot>& families) {
  static const uint64_t start_ticks = ProcessStartTicks(::getpid());
  LLMSERVE_RETURN_IF_ERROR(WriteWhole(temp_path_, EncodeSnapshot({::getpid(), start_ticks}, families)));
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0)
    return Status::Unavailable("cannot rename " + temp_path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

std::vector<ServerSnapshot> SnapshotDirectory::ReadOthers() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != file_name_ && IsSnapshotFileName(name)) names.push_back(name);
  }
  std::sort(names.begin(), names.end());  // a stable order, so that ties merge the same way every scrape
  std::vector<ServerSnapshot> out;
  for (const std::string& name : names) {
    const std::string path = dir_ + "/" + name;
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) {
      if (std::filesystem::exists(path)) ReportUnreadable(path, "cannot read it");
      continue;
    }
    auto decoded = DecodeSnapshot(text.str());
    if (!decoded.ok()) {
      ReportUnreadable(path, decoded.status().message());
      continue;
    }
    out.push_back(ServerSnapshot{decoded->owner.pid, ProcessRunning(decoded->owner.pid, decoded->owner.start_ticks),
                                 std::move(decoded->families)});
  }
  return out;
}

}  // namespace llmserve::frontend::metrics
