#pragma once
// The waiting queue, ordered by the scheduling policy: FCFS is a deque in
// arrival order (preempted requests go back to the front); PRIORITY is a
// binary heap on (priority, arrival_time, sequence_number). Holds request
// handles; the scheduler's request table resolves them.

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "engine_core/request.h"
#include "engine_core/scheduler_config.h"

namespace llmserve::engine_core {

class WaitingQueue final {
 public:
  // `requests` is the scheduler's handle -> request table (it outlives the queue).
  WaitingQueue(SchedulingPolicy policy, const std::vector<std::unique_ptr<Request>>* requests)
      : policy_(policy), requests_(requests) {}

  // Adds a newly arrived request.
  void Push(int32_t handle);
  // Re-adds a preempted request so it is resumed before later arrivals.
  void PushFront(int32_t handle);
  // The next request to consider; the queue must not be empty.
  int32_t Front() const { return policy_ == SchedulingPolicy::kFcfs ? fifo_.front() : heap_.front(); }
  // Removes Front().
  void Pop();
  // Removes `handle` wherever it is (abort); returns false if absent. O(n).
  bool Remove(int32_t handle);
  // Number of queued requests.
  int32_t size() const {
    return static_cast<int32_t>(policy_ == SchedulingPolicy::kFcfs ? fifo_.size() : heap_.size());
  }
  bool empty() const { return size() == 0; }
  // Sum of num_tokens() over queued requests (their tokens still to compute:
  // waiting requests hold no computed tokens).
  int64_t num_tokens() const { return num_tokens_; }

 private:
  int64_t TokensOf(int32_t handle) const { return (*requests_)[handle]->num_tokens(); }
  // Heap order: true when a should be served after b.
  bool Later(int32_t a, int32_t b) const;

  SchedulingPolicy policy_;
  const std::vector<std::unique_ptr<Request>>* requests_;
  std::deque<int32_t> fifo_;
  std::vector<int32_t> heap_;
  int64_t num_tokens_ = 0;
};

}  // namespace llmserve::engine_core
