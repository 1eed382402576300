#include "common/flags.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "common/json_log.h"

DEFINE_string(log_format, "text",
              "Log lines on stderr: text (glog's) or json (one JSON object per line: time, level, process, pid, "
              "file, line, message). Processes the launcher starts inherit it (through $LLMSERVE_LOG_FORMAT, which "
              "also sets it where the flag is not given).");

namespace llmserve::common {

namespace {

bool FlagExists(const std::string& name, std::string* type) {
  gflags::CommandLineFlagInfo info;
  if (!gflags::GetCommandLineFlagInfo(name.c_str(), &info)) return false;
  if (type) *type = info.type;
  return true;
}

std::string Dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

// The source root as this build spells paths in __FILE__: what precedes
// "common/flags.cc" in this file's own name (absolute, "../" or empty).
constexpr std::string_view SourceRoot() {
  constexpr std::string_view self = __FILE__;
  constexpr std::string_view tail = "common/flags.cc";
  return self.ends_with(tail) ? self.substr(0, self.size() - tail.size()) : std::string_view();
}

// A flag defined in our sources. gflags records __FILE__, which is absolute
// in a plain build but relative ("deploy/x.cc", "../deploy/x.cc") when ccache
// rewrites paths under CCACHE_BASEDIR; library flags (glog, gflags) live in
// their own "src/..." files.
bool IsOurFlag(const gflags::CommandLineFlagInfo& info) {
  std::string_view path = info.filename;
  if (path.starts_with('/')) {
    // Absolute: ours only below the root this file was compiled under.
    constexpr std::string_view root = SourceRoot();
    if (!root.starts_with('/') || !path.starts_with(root)) return false;
    path.remove_prefix(root.size());
  }
  while (path.starts_with("../") || path.starts_with("./")) path.remove_prefix(path.find('/') + 1);
  for (std::string_view folder : {"base/", "common/", "coordinator/", "deploy/", "engine_core/", "frontend/",
                                  "jinja/", "kernels/", "proto/", "worker/", "tests/"}) {
    if (path.starts_with(folder)) return true;
  }
  return false;
}

}  // namespace

std::string NormalizeFlagArgument(const std::string& arg) {
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) return arg;
  size_t eq = arg.find('=');
  std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  std::string rest = eq == std::string::npos ? "" : arg.substr(eq);
  std::replace(name.begin(), name.end(), '-', '_');
  std::string type;
  if (!FlagExists(name, nullptr) && name.rfind("no_", 0) == 0 &&
      FlagExists(name.substr(3), &type) && type == "bool") {
    name = "no" + name.substr(3);  // gflags spells negation --noflag
  }
  return "--" + name + rest;
}

std::string FlagsHelp(const std::string& usage) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  std::string out = usage + "\n\nFlags (dashes and underscores are interchangeable):\n";
  std::vector<const gflags::CommandLineFlagInfo*> ours;
  for (const auto& f : flags)
    if (IsOurFlag(f)) ours.push_back(&f);
  std::sort(ours.begin(), ours.end(), [](auto* a, auto* b) { return a->name < b->name; });
  for (const auto* f : ours) {
    std::string head = "  --" + Dashed(f->name);
    if (f->type == "bool") {
      head += " / --no-" + Dashed(f->name);
    } else if (f->type == "double") {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%g", std::strtod(f->default_value.c_str(), nullptr));
      head += std::string("=") + buf;
    } else {
      head += "=" + (f->default_value.empty() ? std::string("\"\"") : f->default_value);
    }
    out += head + "  (" + f->type + (f->type == "bool" ? ", default " + f->default_value : "") +
           ")\n      " + f->description + "\n";
  }
  out += "  --help, -h\n      Show this help and exit.\n";
  return out;
}

void InitProcess(int* argc, char*** argv, const std::string& usage) {
  // Keep the rewritten strings alive for the life of the process: gflags and the
  // caller keep pointers into argv.
  static std::vector<std::string> storage;
  static std::vector<char*> pointers;
  storage.assign(*argv, *argv + *argc);
  bool flags_done = false;
  for (size_t i = 1; i < storage.size(); ++i) {
    if (storage[i] == "--") flags_done = true;
    if (flags_done) continue;
    if (storage[i] == "--help" || storage[i] == "-h" || storage[i] == "-help") {
      std::fputs(FlagsHelp(usage).c_str(), stdout);
      std::exit(0);
    }
    storage[i] = NormalizeFlagArgument(storage[i]);
  }
  pointers.clear();
  for (auto& s : storage) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  *argc = static_cast<int>(storage.size());
  *argv = pointers.data();

  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineFlags(argc, argv, /*remove_flags=*/true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
  InitLogFormat((*argv)[0]);
}

void InitLogFormat(const std::string& program) {
  const char* inherited = std::getenv("LLMSERVE_LOG_FORMAT");
  if (gflags::GetCommandLineFlagInfoOrDie("log_format").is_default && inherited != nullptr) FLAGS_log_format = inherited;
  if (FLAGS_log_format != "text" && FLAGS_log_format != "json") {
    std::fprintf(stderr, "--log-format must be text or json, got '%s'\n", FLAGS_log_format.c_str());
    std::exit(2);
  }
  // Children (frontends, engines, workers) log the same way.
  setenv("LLMSERVE_LOG_FORMAT", FLAGS_log_format.c_str(), 1);
  if (FLAGS_log_format == "json") UseJsonLogs(program.substr(program.rfind('/') + 1));
}

}  // namespace llmserve::common
