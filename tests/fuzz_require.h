#pragma once
// The check of a fuzz target's properties: a failed one names the property
// and aborts, so that libFuzzer keeps the input as a crash.

#include <cstdio>
#include <cstdlib>

namespace llmserve::testing {

inline void FuzzRequire(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz property failed: %s\n", what);
  std::abort();
}

}  // namespace llmserve::testing
