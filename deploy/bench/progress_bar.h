#pragma once
// A one-line progress bar on stderr ("[=====>    ] 12/20 requests, 3.1 s"),
// redrawn in place; silent when stderr is not a terminal or when disabled.

#include <chrono>
#include <cstddef>

namespace llmserve::deploy::bench {

class ProgressBar {
 public:
  // `total` is the count that means done; `enabled` false prints nothing.
  ProgressBar(size_t total, bool enabled);
  // Redraws with `done` of total finished (at most ~10 redraws a second).
  void Update(size_t done);
  // Draws the final state and ends the line.
  void Finish();

 private:
  void Draw(size_t done);

  size_t total_;
  bool enabled_;
  size_t done_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace llmserve::deploy::bench
