#include "worker/prompt_pooler.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace llmserve::worker {

StatusOr<PoolingType> ParsePoolingType(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "LAST") return PoolingType::kLast;
  if (upper == "MEAN") return PoolingType::kMean;
  if (upper == "CLS") return PoolingType::kCls;
  return Status::InvalidArgument("pooling_type must be LAST, MEAN or CLS, got '" + std::string(name) + "'");
}

PooledRows PromptPooler::RowsOf(size_t start, size_t n) const {
  switch (type_) {
    case PoolingType::kLast: return Finishes(start, n) ? PooledRows{prompt_len_ - 1, 1} : PooledRows{start, 0};
    case PoolingType::kCls: return start == 0 && n > 0 ? PooledRows{0, 1} : PooledRows{start, 0};
    case PoolingType::kMean: return PooledRows{start, n};
  }
  return {};
}

size_t PromptPooler::Add(size_t start, size_t n, const float* rows) {
  const PooledRows r = RowsOf(start, n);
  if (type_ != PoolingType::kMean) {
    if (r.count == 1) picked_.assign(rows, rows + hidden_size_);
    return r.count;
  }
  if (start == 0 || sum_.empty()) sum_.assign(hidden_size_, 0.0);
  for (size_t i = 0; i < r.count; ++i)
    for (size_t d = 0; d < hidden_size_; ++d) sum_[d] += rows[i * hidden_size_ + d];
  return r.count;
}

std::vector<float> PromptPooler::Take() const {
  if (type_ != PoolingType::kMean) return picked_;
  std::vector<float> mean(hidden_size_);
  const double len = static_cast<double>(std::max<size_t>(prompt_len_, 1));
  for (size_t d = 0; d < hidden_size_; ++d) mean[d] = static_cast<float>(sum_[d] / len);
  return mean;
}

}  // namespace llmserve::worker
