#include "frontend/serving/ignored_fields_log.h"

#include <glog/logging.h>

#include <algorithm>

namespace llmserve::frontend::serving {

std::optional<std::string> IgnoredFieldsLog::Note(const std::vector<std::string>& fields) {
  if (fields.empty()) return std::nullopt;
  std::vector<std::string> names = fields;
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string set = "{";
  for (size_t i = 0; i < names.size(); ++i) set += (i ? ", '" : "'") + names[i] + "'";
  set += "}";
  std::lock_guard<std::mutex> lock(mu_);
  if (seen_.size() >= max_sets_ || !seen_.insert(set).second) return std::nullopt;
  std::string line = "The following fields were present in the request but ignored: " + set;
  if (seen_.size() == max_sets_)
    line += " (" + std::to_string(max_sets_) + " distinct sets named; further ones are not logged)";
  return line;
}

void WarnIgnoredFields(const std::vector<std::string>& fields) {
  static IgnoredFieldsLog log;
  if (auto line = log.Note(fields)) LOG(WARNING) << *line;
}

}  // namespace llmserve::frontend::serving
