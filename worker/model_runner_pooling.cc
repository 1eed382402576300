// ModelRunner, the pooling runner's step (--runner pooling): prompt chunks
// in, pooled hidden states out. See model_runner.h.
#include "worker/model_runner.h"

namespace llmserve::worker {

StatusOr<proto::ModelRunnerOutput> ModelRunner::RunPooling(const proto::SchedulerOutput& step) {
  ForwardBatch batch;
  struct Chunk {
    const std::string* id;
    size_t start, n;
  };
  std::vector<Chunk> chunks;
  const size_t bs = config_.block_size;
  for (const auto& [id, count] : step.num_scheduled_tokens) {
    RequestState& st = requests_[id];
    const size_t start = static_cast<size_t>(st.num_computed_tokens), n = static_cast<size_t>(count);
    if (!st.pooler || start + n > st.prompt_tokens.size()) {
      return Status::InvalidArgument("request " + id + ": the pooling runner computes prompt tokens only; [" +
                                     std::to_string(start) + ", " + std::to_string(start + n) + ") is past its " +
                                     std::to_string(st.prompt_tokens.size()) + "-token prompt");
    }
    if ((start + n + bs - 1) / bs > st.block_ids.size()) {
      return Status::InvalidArgument("request " + id + ": its block table has " + std::to_string(st.block_ids.size()) +
                                     " blocks, too few for " + std::to_string(start + n) + " tokens");
    }
    const std::vector<int32_t> tokens(st.prompt_tokens.begin() + static_cast<std::ptrdiff_t>(start),
                                      st.prompt_tokens.begin() + static_cast<std::ptrdiff_t>(start + n));
    const size_t first_token = batch.num_tokens();
    batch.AddRequest(tokens, static_cast<int32_t>(start), st.block_ids, bs, false, st.lora_slot);
    const PooledRows rows = st.pooler->RowsOf(start, n);
    for (size_t i = 0; i < rows.count; ++i)
      batch.logits_indices.push_back(static_cast<int32_t>(first_token + rows.first - start + i));
    chunks.push_back({&id, start, n});
  }
  batch.FinishBlockTables();
  proto::ModelRunnerOutput out;
  if (batch.num_tokens() == 0) return out;
  LLMSERVE_ASSIGN_OR_RETURN(const float* hidden, backend_->ForwardHidden(batch));
  const size_t h = backend_->config().hidden_size;
  for (const Chunk& c : chunks) {
    RequestState& st = requests_[*c.id];
    hidden += st.pooler->Add(c.start, c.n, hidden) * h;
    out.req_ids.push_back(*c.id);
    out.sampled_token_ids.emplace_back();
    out.logprobs.emplace_back();
    if (st.pooler->Finishes(c.start, c.n)) out.pooler_output[*c.id] = st.pooler->Take();
  }
  return out;
}

}  // namespace llmserve::worker
