#include "engine_core/structured_output/counted_tokens.h"

#include <algorithm>

namespace llmserve::engine_core::structured_output {

CountedTokens CountedTokens::Build(const std::vector<Counted>& open, std::vector<Counted> exits, bool dense,
                                   int32_t mask_words) {
  CountedTokens c;
  int32_t max_starts = -1;
  for (const Counted& t : open) max_starts = std::max(max_starts, t.starts);
  c.open_begin.assign(max_starts + 2, 0);
  for (const Counted& t : open) ++c.open_begin[t.starts + 1];
  for (size_t n = 1; n < c.open_begin.size(); ++n) c.open_begin[n] += c.open_begin[n - 1];
  c.open_ids.resize(open.size());
  std::vector<int32_t> fill(c.open_begin.begin(), c.open_begin.end() - 1);
  for (const Counted& t : open) c.open_ids[fill[t.starts]++] = t.token;
  for (int32_t n = 0; n <= max_starts; ++n) {
    std::sort(c.open_ids.begin() + c.open_begin[n], c.open_ids.begin() + c.open_begin[n + 1]);
  }
  if (dense) {
    // Masks for the small counts, where clearing the tokens that start too
    // many copies from the whole set would touch too many bits.
    const int32_t total = static_cast<int32_t>(open.size());
    std::vector<uint32_t> bits(mask_words, 0);
    for (int32_t k = 0; k < max_starts && k < kMaxDenseMasks; ++k) {
      if (total - c.open_begin[k + 1] <= kMaxCleared) break;
      for (int32_t i = c.open_begin[k]; i < c.open_begin[k + 1]; ++i) {
        bits[c.open_ids[i] >> 5] |= uint32_t{1} << (c.open_ids[i] & 31);
      }
      c.open_at_most.push_back(bits);
    }
  }
  std::sort(exits.begin(), exits.end(), [](const Counted& a, const Counted& b) { return a.token < b.token; });
  c.exits = std::move(exits);
  return c;
}

size_t CountedTokens::bytes() const {
  size_t n = sizeof(*this) + (open_begin.size() + open_ids.size()) * sizeof(int32_t) + exits.size() * sizeof(Counted);
  for (const auto& m : open_at_most) n += m.size() * sizeof(uint32_t);
  return n;
}

}  // namespace llmserve::engine_core::structured_output
