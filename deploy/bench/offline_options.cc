#include "deploy/bench/offline_options.h"

#include <glog/logging.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace llmserve::deploy {

Status OfflineOptions::Extract(int* argc, char** argv) {
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    std::string arg = argv[i];
    OfflineOption* match = nullptr;
    std::string value;
    bool has_value = false;
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      std::string name = arg.substr(2);
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        has_value = true;
      }
      std::replace(name.begin(), name.end(), '_', '-');
      for (auto& o : options_)
        if (o.name == name) match = &o;
    }
    if (match == nullptr) {
      argv[out++] = argv[i];
      continue;
    }
    if (match->is_switch) {
      if (has_value && value != "true" && value != "false")
        return Status::InvalidArgument("--" + match->name + " takes no value (or =true / =false)");
      match->value = has_value ? value : "true";
    } else if (has_value) {
      match->value = value;
    } else if (i + 1 < *argc) {
      match->value = argv[++i];
    } else {
      return Status::InvalidArgument("--" + match->name + " needs a value");
    }
    match->given = true;
  }
  *argc = out;
  argv[out] = nullptr;
  return Status::Ok();
}

std::string OfflineOptions::Usage() const {
  std::string out;
  for (const auto& o : options_) {
    out += "  --" + o.name;
    if (!o.is_switch) out += "=" + (o.value.empty() ? std::string("\"\"") : o.value);
    out += "\n      " + o.help + "\n";
  }
  return out;
}

const OfflineOption& OfflineOptions::Find(const std::string& name) const {
  for (const auto& o : options_)
    if (o.name == name) return o;
  LOG(FATAL) << "no bench option --" << name;
  __builtin_unreachable();
}

const std::string& OfflineOptions::Get(const std::string& name) const { return Find(name).value; }

bool OfflineOptions::Given(const std::string& name) const { return Find(name).given; }

StatusOr<int64_t> OfflineOptions::Int(const std::string& name, int64_t min) const {
  const std::string& v = Get(name);
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || errno != 0 || *end != '\0') return Status::InvalidArgument("--" + name + " must be an integer, got '" + v + "'");
  if (n < min) return Status::InvalidArgument("--" + name + " must be at least " + std::to_string(min));
  return static_cast<int64_t>(n);
}

StatusOr<double> OfflineOptions::Double(const std::string& name, double min, double max) const {
  const std::string& v = Get(name);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x)) return Status::InvalidArgument("--" + name + " must be a number, got '" + v + "'");
  if (x < min || x >= max)
    return Status::InvalidArgument("--" + name + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + ")");
  return x;
}

StatusOr<std::string> ModelDirFromArgs(const OfflineOptions& options, int argc, char** argv) {
  const std::string& flag = options.Get("model");
  if (argc > 2) return Status::InvalidArgument(std::string("unexpected argument '") + argv[2] + "'");
  if (argc == 2 && !flag.empty()) return Status::InvalidArgument("give the model as --model DIR or as MODEL_DIR, not both");
  if (argc == 2) return std::string(argv[1]);
  if (flag.empty()) return Status::InvalidArgument("a model is required: --model DIR");
  return flag;
}

int ReportFailure(const Status& s, int exit_code) {
  LOG(ERROR) << s.message();
  return exit_code;
}

double Percentile(std::vector<double> values, double percent) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(percent, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace llmserve::deploy
