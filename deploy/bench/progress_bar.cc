#include "deploy/bench/progress_bar.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace llmserve::deploy::bench {

ProgressBar::ProgressBar(size_t total, bool enabled)
    : total_(total), enabled_(enabled && isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

void ProgressBar::Update(size_t done) {
  done_ = done;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  Draw(done);
}

void ProgressBar::Draw(size_t done) {
  constexpr size_t kWidth = 30;
  const size_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
  std::string bar(filled, '=');
  if (filled < kWidth) bar += '>' + std::string(kWidth - filled - 1, ' ');
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "\r[%s] %zu/%zu requests, %.1f s", bar.c_str(), done, total_, secs);
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (!enabled_) return;
  Draw(done_);
  std::fputc('\n', stderr);
}

}  // namespace llmserve::deploy::bench
