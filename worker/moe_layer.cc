#include "worker/moe_layer.h"

#include <glog/logging.h>

#include <algorithm>

#include "kernels/cpu/activation.h"
#include "worker/moe_routing.h"

namespace llmserve::worker {

namespace cpu = kernels::cpu;

size_t MoeLayer::Reserve(const MoeConfig& c, size_t h, size_t ff, size_t shared_ff, size_t t) {
  const size_t k = c.num_experts_per_tok;
  router_logits_.resize(t * c.num_experts);
  chosen_.resize(t * k);
  weights_.resize(t * k);
  offsets_.resize(c.num_experts + 1);
  next_row_.resize(c.num_experts);
  order_.resize(t * k);
  slot_row_.resize(t * k);
  gathered_.resize(t * h);
  gate_up_.resize(t * 2 * std::max(ff, shared_ff));
  act_.resize(t * std::max(ff, shared_ff));
  expert_out_.resize(t * k * h);
  shared_out_.resize(shared_ff > 0 ? t * h : 0);
  size_t bytes = 0;
  for (const auto* v : {&router_logits_, &weights_, &gathered_, &gate_up_, &act_, &expert_out_, &shared_out_}) {
    bytes += v->capacity() * sizeof(float);
  }
  for (const auto* v : {&chosen_, &offsets_, &next_row_, &order_, &slot_row_}) bytes += v->capacity() * sizeof(int32_t);
  return bytes;
}

void MoeLayer::GroupByExpert(size_t t, size_t num_experts, size_t k) {
  // A counting sort by expert, stable in (token, slot) order.
  std::fill(offsets_.begin(), offsets_.end(), 0);
  for (size_t i = 0; i < t * k; ++i) ++offsets_[chosen_[i] + 1];
  for (size_t e = 0; e < num_experts; ++e) offsets_[e + 1] += offsets_[e];
  next_row_.assign(offsets_.begin(), offsets_.end() - 1);
  for (size_t i = 0; i < t * k; ++i) {
    const int32_t row = next_row_[chosen_[i]]++;
    order_[row] = static_cast<int32_t>(i / k);
    slot_row_[i] = row;
  }
}

void MoeLayer::SharedExperts(const ExpertWeights& shared, const float* x, size_t t, cpu::ThreadPool& pool) {
  const size_t ff = shared.down.cols();
  shared.gate_up.Apply(x, t, gate_up_.data(), pool);
  cpu::SiluMul(gate_up_.data(), t, ff, act_.data(), pool);
  shared.down.Apply(act_.data(), t, shared_out_.data(), pool);
}

void MoeLayer::Forward(const MoeWeights& w, const MoeConfig& c, const float* x, size_t t, size_t h, float* y,
                       cpu::ThreadPool& pool) {
  const size_t k = c.num_experts_per_tok, ne = c.num_experts;
  CHECK_EQ(w.experts.size(), ne);
  CHECK_LE(t * k, order_.size()) << "MoeLayer::Reserve was not called for " << t << " tokens";
  if (t == 0) return;
  w.router.Apply(x, t, router_logits_.data(), pool);
  const float* bias = w.correction_bias.empty() ? nullptr : w.correction_bias.data();
  RouteTokens(router_logits_.data(), t, RoutingRuleOf(c, bias), chosen_.data(), weights_.data());
  GroupByExpert(t, ne, k);
  for (size_t e = 0; e < ne; ++e) {
    const size_t begin = static_cast<size_t>(offsets_[e]), n = static_cast<size_t>(offsets_[e + 1]) - begin;
    if (n == 0 || !w.held(e)) continue;
    const size_t ff = w.experts[e].down.cols();
    for (size_t r = 0; r < n; ++r) std::copy_n(x + static_cast<size_t>(order_[begin + r]) * h, h, &gathered_[r * h]);
    const ExpertWeights& ex = w.experts[e];
    ex.gate_up.Apply(gathered_.data(), n, gate_up_.data(), pool);
    cpu::SiluMul(gate_up_.data(), n, ff, act_.data(), pool);
    ex.down.Apply(act_.data(), n, &expert_out_[begin * h], pool);
  }
  const bool shared = w.shared.down.rows() > 0;
  if (shared) {
    CHECK(!shared_out_.empty()) << "MoeLayer::Reserve was not told of the shared experts";
    SharedExperts(w.shared, x, t, pool);
  }
  pool.ParallelFor(t, 4, [&](size_t first, size_t last, size_t) {
    for (size_t i = first; i < last; ++i) {
      float* out = y + i * h;
      std::fill_n(out, h, 0.f);
      for (size_t j = 0; j < k; ++j) {
        if (!w.held(static_cast<size_t>(chosen_[i * k + j]))) continue;  // another rank adds it (EP)
        const float wj = weights_[i * k + j];
        const float* src = &expert_out_[static_cast<size_t>(slot_row_[i * k + j]) * h];
        for (size_t d = 0; d < h; ++d) out[d] += wj * src[d];
      }
      if (shared) {
        const float* src = &shared_out_[i * h];
        for (size_t d = 0; d < h; ++d) out[d] += src[d];
      }
    }
  });
}

}  // namespace llmserve::worker
