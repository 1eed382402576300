#pragma once
// A one-line progress bar on stderr while a model loads, shown only when
// stderr is a terminal.

#include <cstddef>
#include <string>

namespace llmserve::worker {

class LoadProgress {
 public:
  // `total` steps; `enabled` false (or stderr not a tty) prints nothing.
  LoadProgress(std::string label, size_t total, bool enabled);
  ~LoadProgress();
  // Marks one more step done.
  void Step();

 private:
  std::string label_;
  size_t total_;
  size_t done_ = 0;
  bool enabled_;
};

}  // namespace llmserve::worker
