#pragma once
// The warning for request fields the server accepts but ignores, as vLLM
// words it ("The following fields were present in the request but ignored:
// {'a', 'b'}"), given once per distinct set of names: a client that always
// sends the same extra field is named once, not on every request.

#include <cstddef>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace llmserve::frontend::serving {

class IgnoredFieldsLog {
 public:
  // Remembers at most `max_sets` sets; past that, new sets are not warned
  // about (the last warning says so).
  explicit IgnoredFieldsLog(size_t max_sets = 1024) : max_sets_(max_sets) {}

  // The warning line the first time `fields` (a non-empty set of names) is
  // seen; nullopt for an empty list, a set seen before, or once full.
  std::optional<std::string> Note(const std::vector<std::string>& fields);

 private:
  const size_t max_sets_;
  std::mutex mu_;
  std::set<std::string> seen_;
};

// Logs Note(fields) at WARNING through one process-wide IgnoredFieldsLog.
void WarnIgnoredFields(const std::vector<std::string>& fields);

}  // namespace llmserve::frontend::serving
