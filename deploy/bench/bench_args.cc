#include "deploy/bench/bench_args.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace llmserve::deploy::bench {
namespace {

std::string Dashed(std::string name) {
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

bool IsFlag(const std::string& arg) { return arg.size() > 2 && arg[0] == '-' && arg[1] == '-'; }

}  // namespace

ArgParser::ArgParser(std::string usage, std::vector<ArgSpec> specs)
    : usage_(std::move(usage)), specs_(std::move(specs)) {}

const ArgSpec* ArgParser::Find(const std::string& name) const {
  const std::string dashed = Dashed(name);
  for (const auto& s : specs_) {
    if (s.name == dashed) return &s;
  }
  return nullptr;
}

Status ArgParser::Parse(int argc, char** argv, size_t max_positional) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      continue;
    }
    if (!IsFlag(arg)) {
      if (positional_.size() >= max_positional) {
        return Status::InvalidArgument("unexpected argument '" + arg + "'");
      }
      positional_.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = Dashed(arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
    const ArgSpec* spec = Find(name);
    if (spec == nullptr) return Status::InvalidArgument("unknown flag --" + name + " (see --help)");
    auto& slot = values_[spec->name];
    switch (spec->kind) {
      case ArgSpec::Kind::kSwitch: {
        std::string v = eq == std::string::npos ? "true" : arg.substr(eq + 1);
        if (v != "true" && v != "false" && v != "1" && v != "0") {
          return Status::InvalidArgument("--" + name + " takes no value (or =true / =false), got '" + v + "'");
        }
        slot = {v == "true" || v == "1" ? "true" : "false"};
        break;
      }
      case ArgSpec::Kind::kValue:
        if (eq != std::string::npos) {
          slot = {arg.substr(eq + 1)};
        } else {
          if (i + 1 >= argc) return Status::InvalidArgument("--" + name + " needs a value");
          slot = {argv[++i]};
        }
        break;
      case ArgSpec::Kind::kList: {
        size_t before = slot.size();
        if (eq != std::string::npos) slot.push_back(arg.substr(eq + 1));
        while (i + 1 < argc && !IsFlag(argv[i + 1])) slot.push_back(argv[++i]);
        if (slot.size() == before) return Status::InvalidArgument("--" + name + " needs at least one value");
        break;
      }
    }
  }
  return Status::Ok();
}

std::string ArgParser::Help() const {
  std::ostringstream out;
  out << usage_ << "\n\nflags:\n";
  for (const auto& s : specs_) {
    std::string head = "  --" + s.name;
    if (s.kind == ArgSpec::Kind::kValue) head += " V";
    if (s.kind == ArgSpec::Kind::kList) head += " V...";
    out << head;
    if (head.size() < 34) out << std::string(34 - head.size(), ' ');
    else out << "\n" << std::string(34, ' ');
    out << s.help;
    if (s.kind == ArgSpec::Kind::kValue && !s.default_value.empty()) out << " (default " << s.default_value << ")";
    out << "\n";
  }
  return out.str();
}

bool ArgParser::Has(const std::string& name) const { return values_.count(Dashed(name)) > 0; }

std::string ArgParser::Get(const std::string& name) const {
  auto it = values_.find(Dashed(name));
  if (it != values_.end() && !it->second.empty()) return it->second.back();
  const ArgSpec* spec = Find(name);
  return spec ? spec->default_value : "";
}

bool ArgParser::Switch(const std::string& name) const { return Get(name) == "true"; }

std::vector<std::string> ArgParser::List(const std::string& name) const {
  auto it = values_.find(Dashed(name));
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

StatusOr<double> ArgParser::Double(const std::string& name) const {
  const std::string v = Get(name);
  if (v == "inf" || v == "Infinity" || v == "infinity") return HUGE_VAL;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno != 0 || std::isnan(d)) {
    return Status::InvalidArgument("--" + Dashed(name) + " expects a number, got '" + v + "'");
  }
  return d;
}

StatusOr<int64_t> ArgParser::Int(const std::string& name) const {
  const std::string v = Get(name);
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0) {
    return Status::InvalidArgument("--" + Dashed(name) + " expects an integer, got '" + v + "'");
  }
  return static_cast<int64_t>(n);
}

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    const size_t b = cur.find_first_not_of(' ');
    const size_t e = cur.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : s) {
    if (c == ',') flush();
    else cur += c;
  }
  flush();
  return out;
}

}  // namespace llmserve::deploy::bench
