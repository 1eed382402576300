#pragma once
// A strict reader of the Prometheus text exposition format (0.0.4) for tests:
// it parses a scrape into families and samples and reports the first syntax or
// consistency error (a sample outside a declared family, a bad label or value,
// histogram buckets that are not cumulative or whose +Inf bucket differs from
// _count). Written from the format's specification, independent of the
// exposition code it checks.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llmserve::frontend::testing {

struct PromSample {
  std::string name;                           // as written, e.g. "x_bucket"
  std::map<std::string, std::string> labels;  // unescaped values
  double value = 0.0;
};

struct PromFamily {
  std::string type;  // counter | gauge | histogram | summary | untyped
  std::string help;
  std::vector<PromSample> samples;
};

struct PromScrape {
  std::map<std::string, PromFamily> families;  // by the TYPE line's name
  std::string error;                           // empty when the text is valid

  // The value of the sample `name` whose labels include all of `match`; nullopt if none.
  std::optional<double> Value(const std::string& name, const std::map<std::string, std::string>& match = {}) const {
    for (const auto& [family_name, f] : families)
      for (const auto& s : f.samples) {
        if (s.name != name) continue;
        bool ok = true;
        for (const auto& [k, v] : match) {
          auto it = s.labels.find(k);
          if (it == s.labels.end() || it->second != v) ok = false;
        }
        if (ok) return s.value;
      }
    return std::nullopt;
  }
};

namespace prom_detail {

inline bool NameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':'; }
inline bool NameChar(char c) { return NameStart(c) || std::isdigit(static_cast<unsigned char>(c)); }

inline bool ParseValue(const std::string& text, double* out) {
  if (text == "+Inf") return *out = INFINITY, true;
  if (text == "-Inf") return *out = -INFINITY, true;
  if (text == "NaN") return *out = NAN, true;
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// The family a sample name belongs to, given the declared types.
inline std::string FamilyOf(const std::string& sample, const std::map<std::string, PromFamily>& families) {
  if (families.count(sample)) return sample;
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s(suffix);
    if (sample.size() > s.size() && sample.compare(sample.size() - s.size(), s.size(), s) == 0) {
      std::string base = sample.substr(0, sample.size() - s.size());
      auto it = families.find(base);
      if (it != families.end() && (it->second.type == "histogram" || it->second.type == "summary")) return base;
    }
  }
  return "";
}

// Label set without "le", as a key.
inline std::string SeriesKey(const PromSample& s) {
  std::string key;
  for (const auto& [k, v] : s.labels)
    if (k != "le") key += k + "=" + v + ",";
  return key;
}

inline std::string CheckHistogram(const std::string& name, const PromFamily& f) {
  std::map<std::string, std::vector<std::pair<double, double>>> buckets;  // series -> (le, count)
  std::map<std::string, double> counts;
  for (const auto& s : f.samples) {
    if (s.name == name + "_bucket") {
      auto le = s.labels.find("le");
      double bound;
      if (le == s.labels.end() || !ParseValue(le->second, &bound)) return name + ": bucket without a valid le";
      buckets[SeriesKey(s)].emplace_back(bound, s.value);
    } else if (s.name == name + "_count") {
      counts[SeriesKey(s)] = s.value;
    } else if (s.name != name + "_sum") {
      return name + ": unexpected sample " + s.name;
    }
  }
  for (const auto& [key, list] : buckets) {
    for (size_t i = 1; i < list.size(); ++i) {
      if (!(list[i].first > list[i - 1].first)) return name + "{" + key + "}: le not ascending";
      if (list[i].second < list[i - 1].second) return name + "{" + key + "}: buckets not cumulative";
    }
    if (list.empty() || !std::isinf(list.back().first)) return name + "{" + key + "}: no +Inf bucket";
    auto c = counts.find(key);
    if (c == counts.end()) return name + "{" + key + "}: no _count";
    if (c->second != list.back().second) return name + "{" + key + "}: +Inf bucket != _count";
  }
  return "";
}

}  // namespace prom_detail

// Parses `text`; on error, `error` names the line and the problem.
inline PromScrape ParsePrometheusText(const std::string& text) {
  using namespace prom_detail;
  PromScrape scrape;
  size_t pos = 0;
  int line_no = 0;
  auto fail = [&](const std::string& why) {
    scrape.error = "line " + std::to_string(line_no) + ": " + why;
    return scrape;
  };
  if (!text.empty() && text.back() != '\n') return fail("the text must end with a newline");
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.empty()) continue;
    if (line[0] == '#') {
      std::string rest = line.size() > 2 ? line.substr(2) : "";
      const bool help = rest.rfind("HELP ", 0) == 0, type = rest.rfind("TYPE ", 0) == 0;
      if (!help && !type) continue;  // a plain comment
      rest = rest.substr(5);
      const size_t sp = rest.find(' ');
      const std::string name = rest.substr(0, sp);
      if (name.empty() || !NameStart(name[0]) || !std::all_of(name.begin(), name.end(), NameChar))
        return fail("bad metric name '" + name + "'");
      const std::string arg = sp == std::string::npos ? "" : rest.substr(sp + 1);
      PromFamily& f = scrape.families[name];
      if (type) {
        if (!f.type.empty()) return fail("second TYPE line for " + name);
        if (!f.samples.empty()) return fail("TYPE after samples for " + name);
        if (arg != "counter" && arg != "gauge" && arg != "histogram" && arg != "summary" && arg != "untyped")
          return fail("unknown type '" + arg + "'");
        f.type = arg;
      } else {
        for (size_t i = 0; i < arg.size(); ++i) {
          if (arg[i] != '\\') continue;
          if (i + 1 >= arg.size() || (arg[i + 1] != '\\' && arg[i + 1] != 'n')) return fail("bad escape in HELP");
          ++i;  // skip the escaped character
        }
        f.help = arg;
      }
      continue;
    }
    PromSample s;
    size_t i = 0;
    while (i < line.size() && NameChar(line[i])) ++i;
    s.name = line.substr(0, i);
    if (s.name.empty() || !NameStart(s.name[0])) return fail("bad sample name");
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t start = i;
        while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
        const std::string label = line.substr(start, i - start);
        if (label.empty() || std::isdigit(static_cast<unsigned char>(label[0]))) return fail("bad label name");
        if (i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') return fail("expected =\" after " + label);
        i += 2;
        std::string value;
        while (i < line.size() && line[i] != '"') {
          if (line[i] == '\\') {
            if (i + 1 >= line.size()) return fail("dangling escape");
            const char e = line[i + 1];
            if (e == 'n') value += '\n';
            else if (e == '\\' || e == '"') value += e;
            else return fail("bad escape in label value");
            i += 2;
          } else {
            value += line[i++];
          }
        }
        if (i >= line.size()) return fail("unterminated label value");
        ++i;  // closing quote
        if (s.labels.count(label)) return fail("repeated label " + label);
        s.labels[label] = value;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size()) return fail("unterminated label set");
      ++i;  // '}'
    }
    if (i >= line.size() || line[i] != ' ') return fail("expected a space before the value");
    std::string value_text = line.substr(i + 1);
    const size_t sp = value_text.find(' ');  // an optional timestamp follows
    if (sp != std::string::npos) value_text = value_text.substr(0, sp);
    if (!ParseValue(value_text, &s.value)) return fail("bad value '" + value_text + "'");
    const std::string family = FamilyOf(s.name, scrape.families);
    if (family.empty() || scrape.families[family].type.empty()) return fail("sample " + s.name + " has no TYPE");
    scrape.families[family].samples.push_back(std::move(s));
  }
  for (const auto& [name, f] : scrape.families) {
    if (f.type == "histogram") {
      std::string e = CheckHistogram(name, f);
      if (!e.empty()) {
        scrape.error = e;
        return scrape;
      }
    }
    if (f.type == "counter")
      for (const auto& s : f.samples)
        if (s.value < 0) {
          scrape.error = name + ": negative counter";
          return scrape;
        }
  }
  return scrape;
}

}  // namespace llmserve::frontend::testing
