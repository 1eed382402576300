#include "engine_core/waiting_queue.h"

#include <algorithm>
#include <tuple>

namespace llmserve::engine_core {

bool WaitingQueue::Later(int32_t a, int32_t b) const {
  const Request& ra = *(*requests_)[a];
  const Request& rb = *(*requests_)[b];
  return std::tie(ra.priority, ra.arrival_time, ra.sequence_number) >
         std::tie(rb.priority, rb.arrival_time, rb.sequence_number);
}

void WaitingQueue::Push(int32_t handle) {
  num_tokens_ += TokensOf(handle);
  if (policy_ == SchedulingPolicy::kFcfs) {
    fifo_.push_back(handle);
    return;
  }
  heap_.push_back(handle);
  std::push_heap(heap_.begin(), heap_.end(), [this](int32_t a, int32_t b) { return Later(a, b); });
}

void WaitingQueue::PushFront(int32_t handle) {
  if (policy_ == SchedulingPolicy::kFcfs) {
    num_tokens_ += TokensOf(handle);
    fifo_.push_front(handle);
  } else {
    Push(handle);  // the heap order already puts it where it belongs
  }
}

void WaitingQueue::Pop() {
  num_tokens_ -= TokensOf(Front());
  if (policy_ == SchedulingPolicy::kFcfs) {
    fifo_.pop_front();
    return;
  }
  std::pop_heap(heap_.begin(), heap_.end(), [this](int32_t a, int32_t b) { return Later(a, b); });
  heap_.pop_back();
}

bool WaitingQueue::Remove(int32_t handle) {
  if (policy_ == SchedulingPolicy::kFcfs) {
    auto it = std::find(fifo_.begin(), fifo_.end(), handle);
    if (it == fifo_.end()) return false;
    num_tokens_ -= TokensOf(handle);
    fifo_.erase(it);
    return true;
  }
  auto it = std::find(heap_.begin(), heap_.end(), handle);
  if (it == heap_.end()) return false;
  num_tokens_ -= TokensOf(handle);
  heap_.erase(it);
  std::make_heap(heap_.begin(), heap_.end(), [this](int32_t a, int32_t b) { return Later(a, b); });
  return true;
}

}  // namespace llmserve::engine_core
