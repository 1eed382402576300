#include "frontend/serving/embedding_job.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <ctime>

#include <boost/beast/core/detail/base64.hpp>

#include "base/wall_clock.h"
#include "frontend/openai/api_error.h"
#include "frontend/openai/responses.h"

namespace llmserve::frontend::serving {

std::vector<float> FinishEmbedding(const std::vector<float>& pooled, std::optional<int32_t> dimensions,
                                   bool normalize) {
  std::vector<float> v = pooled;
  if (dimensions && static_cast<size_t>(*dimensions) < v.size()) v.resize(static_cast<size_t>(*dimensions));
  if (!normalize) return v;
  double sum = 0;
  for (float x : v) sum += static_cast<double>(x) * x;
  const double norm = std::max(std::sqrt(sum), 1e-12);
  for (float& x : v) x = static_cast<float>(x / norm);
  return v;
}

std::string Base64Floats(const std::vector<float>& v) {
  static_assert(std::endian::native == std::endian::little, "base64 embeddings are little-endian float32");
  namespace b64 = boost::beast::detail::base64;
  const size_t bytes = v.size() * sizeof(float);
  std::string out(b64::encoded_size(bytes), '\0');
  out.resize(b64::encode(out.data(), v.data(), bytes));
  return out;
}

class EmbeddingJob::Sink : public OutputSink {
 public:
  Sink(std::shared_ptr<EmbeddingJob> job, size_t index) : job_(std::move(job)), index_(index) {}
  void OnOutput(const proto::EngineCoreOutput& output) override { job_->OnOutput(index_, output, 0, 0); }
  void OnOutputFrom(const proto::EngineCoreOutput& output, const OutputOrigin& origin) override {
    job_->OnOutput(index_, output, origin.engine_rank, origin.engine_timestamp);
  }
  void OnError(const Status& status) override { job_->OnError(index_, status); }
  void OnRouted(uint32_t engine_rank) override { job_->OnRouted(index_, engine_rank); }

 private:
  std::shared_ptr<EmbeddingJob> job_;
  size_t index_;
};

EmbeddingJob::EmbeddingJob(const ServingContext& context, EmbeddingJobSpec spec,
                           std::shared_ptr<http::ResponseWriter> writer)
    : context_(context), spec_(std::move(spec)), writer_(std::move(writer)) {}

EmbeddingJob::~EmbeddingJob() = default;

void EmbeddingJob::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  created_ = static_cast<int64_t>(std::time(nullptr));
  const auto arrival = metrics::RequestTracker::Clock::now();
  const int32_t max_model_len = context_.engine->max_model_len();
  std::vector<proto::EngineCoreRequest> requests;
  for (size_t p = 0; p < spec_.prompts.size(); ++p) {
    Item& item = items_.emplace_back();
    item.engine_request_id = spec_.request_id + "-" + std::to_string(p);
    const auto prompt_tokens = static_cast<int32_t>(spec_.prompts[p].size());
    item.tracker = context_.metrics ? std::make_unique<metrics::RequestTracker>(
                                          context_.metrics, prompt_tokens, arrival,
                                          metrics::TrackedParams{1, 1, max_model_len, spec_.lora_name.value_or("")})
                                    : std::make_unique<metrics::RequestTracker>();
    proto::EngineCoreRequest& r = requests.emplace_back();
    r.request_id = item.engine_request_id;
    r.prompt_token_ids = spec_.prompts[p];
    r.sampling_params.max_tokens = 1;  // unused: a pooling request ends with its prefill
    r.pooling_params.emplace();
    r.pooling_params->dimensions = spec_.dimensions;
    r.pooling_params->normalize = spec_.normalize;
    r.arrival_time = base::EpochSeconds();
    r.lora_name = spec_.lora_name;
    r.priority = spec_.priority;
    r.data_parallel_rank = spec_.data_parallel_rank;
  }
  remaining_ = items_.size();
  for (size_t i = 0; i < items_.size(); ++i) {
    Status s = context_.engine->Submit(std::move(requests[i]), std::make_shared<Sink>(shared_from_this(), i));
    if (!s.ok()) {
      Fail(s);
      return;
    }
    items_[i].submitted = true;
  }
  writer_->OnDisconnect([weak = weak_from_this()] {
    if (auto job = weak.lock()) job->OnDisconnect();
  });
}

void EmbeddingJob::OnRouted(size_t index, uint32_t engine) {
  if (index < items_.size()) items_[index].tracker->OnRouted(engine);
}

void EmbeddingJob::OnOutput(size_t index, const proto::EngineCoreOutput& output, uint32_t engine,
                            double engine_timestamp) {
  std::lock_guard<std::mutex> lock(mu_);
  if (index >= items_.size() || items_[index].finished) return;
  Item& item = items_[index];
  item.tracker->OnOutput(output, engine, engine_timestamp, metrics::RequestTracker::Clock::now());
  if (!output.finish_reason) return;
  item.finished = true;
  item.tracker->OnFinished(*output.finish_reason, metrics::RequestTracker::Clock::now());
  --remaining_;
  if (output.error_code) {
    Fail(Status(*output.error_code, output.error_message.value_or("the engine refused the request")));
    return;
  }
  if (!output.pooling_output) {
    Fail(Status::Internal("the engine finished request " + item.engine_request_id + " without a pooled output (" +
                          proto::FinishReasonName(*output.finish_reason) + ")"));
    return;
  }
  item.embedding = FinishEmbedding(*output.pooling_output, spec_.dimensions, spec_.normalize);
  if (remaining_ == 0) Respond();
}

void EmbeddingJob::OnError(size_t index, const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (index < items_.size() && !items_[index].finished) {
    items_[index].finished = true;
    items_[index].tracker->OnFinished(proto::FinishReason::kError, metrics::RequestTracker::Clock::now());
    --remaining_;
  }
  Fail(status);
}

void EmbeddingJob::OnDisconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  Fail(Status::Unavailable("the client disconnected"));  // nobody reads the answer
}

void EmbeddingJob::Fail(const Status& status) {
  std::vector<std::string> to_abort;
  for (Item& item : items_) {
    if (!item.submitted || item.finished) continue;
    item.finished = true;
    item.tracker->OnFinished(proto::FinishReason::kAbort, metrics::RequestTracker::Clock::now());
    to_abort.push_back(item.engine_request_id);
  }
  if (!to_abort.empty()) context_.engine->Abort(to_abort);
  if (responded_) return;
  responded_ = true;
  writer_->Respond(openai::ErrorResponse(openai::FromStatus(status)));
}

void EmbeddingJob::Respond() {
  if (responded_) return;
  responded_ = true;
  nlohmann::json data = nlohmann::json::array();
  int64_t prompt_tokens = 0;
  for (size_t i = 0; i < items_.size(); ++i) {
    const std::vector<float>& v = *items_[i].embedding;
    nlohmann::json value = spec_.encoding == openai::EmbeddingEncoding::kBase64 ? nlohmann::json(Base64Floats(v))
                                                                                 : nlohmann::json(v);
    data.push_back({{"index", i},
                    {"object", spec_.pooling_endpoint ? "pooling" : "embedding"},
                    {spec_.pooling_endpoint ? "data" : "embedding", std::move(value)}});
    prompt_tokens += static_cast<int64_t>(spec_.prompts[i].size());
  }
  const nlohmann::json body = {
      {"id", spec_.request_id},
      {"object", "list"},
      {"created", created_},
      {"model", spec_.model},
      {"data", std::move(data)},
      {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}, {"completion_tokens", 0},
                 {"prompt_tokens_details", nullptr}}}};
  writer_->Respond(http::HttpResponse::Make(200, "application/json", openai::Dump(body)));
}

}  // namespace llmserve::frontend::serving
