#pragma once
// EmbeddingJob: one POST /v1/embeddings or /pooling request in flight. Each
// prompt becomes one pooling engine request; when all have returned their
// pooled hidden state the job truncates (dimensions), normalizes and answers
// with one list object. An engine error or a client disconnect aborts the
// others.
//
// Threads: engine outputs arrive on the engine client's I/O thread; a client
// disconnect arrives on an HTTP I/O thread. A mutex serialises them.

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "frontend/http/response_writer.h"
#include "frontend/metrics/request_tracker.h"
#include "frontend/openai/embedding_request.h"
#include "frontend/serving/serving_context.h"

namespace llmserve::frontend::serving {

struct EmbeddingJobSpec {
  bool pooling_endpoint = false;  // /pooling: object "pooling", the vector under "data"
  std::string request_id;         // "embd-..." or "pool-..."
  std::string model;              // as the response names it
  std::vector<std::vector<int32_t>> prompts;
  openai::EmbeddingEncoding encoding = openai::EmbeddingEncoding::kFloat;
  std::optional<int32_t> dimensions;  // checked against the model
  bool normalize = true;
  int32_t priority = 0;
  std::optional<int32_t> data_parallel_rank;
  std::optional<std::string> lora_name;
};

// The vector a client gets: the first `dimensions` values (all when unset),
// L2-normalized when `normalize` (as torch's F.normalize, eps 1e-12).
std::vector<float> FinishEmbedding(const std::vector<float>& pooled, std::optional<int32_t> dimensions, bool normalize);

// The little-endian float32 bytes of `v`, base64-encoded (encoding_format base64).
std::string Base64Floats(const std::vector<float>& v);

class EmbeddingJob : public std::enable_shared_from_this<EmbeddingJob> {
 public:
  EmbeddingJob(const ServingContext& context, EmbeddingJobSpec spec, std::shared_ptr<http::ResponseWriter> writer);
  ~EmbeddingJob();

  // Submits the engine requests; answers at once when one cannot be submitted.
  void Start();

 private:
  class Sink;
  struct Item {
    std::string engine_request_id;
    std::optional<std::vector<float>> embedding;
    std::unique_ptr<metrics::RequestTracker> tracker;
    bool submitted = false;
    bool finished = false;
  };

  void OnOutput(size_t index, const proto::EngineCoreOutput& output, uint32_t engine, double engine_timestamp);
  void OnRouted(size_t index, uint32_t engine);
  void OnError(size_t index, const Status& status);
  void OnDisconnect();
  // Aborts what is still running and answers with `status` (once).
  void Fail(const Status& status);
  void Respond();

  const ServingContext& context_;
  EmbeddingJobSpec spec_;
  std::shared_ptr<http::ResponseWriter> writer_;
  std::mutex mu_;
  std::vector<Item> items_;
  size_t remaining_ = 0;
  bool responded_ = false;
  int64_t created_ = 0;
};

}  // namespace llmserve::frontend::serving
