#include "worker/load_progress.h"

#include <unistd.h>

#include <cstdio>

namespace llmserve::worker {

LoadProgress::LoadProgress(std::string label, size_t total, bool enabled)
    : label_(std::move(label)), total_(total), enabled_(enabled && ::isatty(STDERR_FILENO)) {}

LoadProgress::~LoadProgress() {
  if (enabled_) std::fputc('\n', stderr);
}

void LoadProgress::Step() {
  ++done_;
  if (!enabled_ || total_ == 0) return;
  const size_t width = 30, filled = done_ * width / total_;
  std::fprintf(stderr, "\r%s [%.*s%*s] %zu/%zu", label_.c_str(), static_cast<int>(filled),
               "##############################", static_cast<int>(width - filled), "", done_, total_);
  std::fflush(stderr);
}

}  // namespace llmserve::worker
