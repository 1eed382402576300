#include "deploy/bench/serve_bench.h"

#include <sys/resource.h>

#include <cmath>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "common/tokenizer/tokenizer.h"
#include "deploy/bench/arrivals.h"
#include "deploy/bench/datasets.h"
#include "deploy/bench/load_runner.h"
#include "deploy/bench/progress_bar.h"
#include "deploy/bench/report.h"
#include "deploy/bench/spec_decode_stats.h"

namespace llmserve::deploy::bench {
namespace {

namespace fs = std::filesystem;
using common::tokenizer::Tokenizer;

constexpr char kUsage[] =
    "llmserve bench serve [--base-url URL] [--model NAME] [--tokenizer DIR] [flags]\n"
    "Sends --num-prompts requests from a dataset to an OpenAI-compatible server (llmserve, vLLM,\n"
    "llama.cpp's llama-server...) at --request-rate, streams the answers and reports vLLM's serving\n"
    "metrics: throughput, TTFT, TPOT, ITL, E2E latency, goodput. The flags are `vllm bench serve`'s.\n"
    "Example:\n"
    "  llmserve bench serve --base-url http://127.0.0.1:8000 --model tiny --tokenizer MODEL_DIR \\\n"
    "      --dataset-name random --random-input-len 128 --random-output-len 32 --num-prompts 50 \\\n"
    "      --request-rate 4 --save-result --result-filename out.json";

bool HasTokenizer(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && fs::is_regular_file(fs::path(dir) / "tokenizer.json", ec);
}

std::string LocalDate() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", &tm);
  return buf;
}

// The model to name in requests and a directory its tokenizer may be in: the
// model itself when it is a directory, else the `root` /v1/models gives for it
// (llmserve and vLLM report the model path there). With no --model, the first
// model the server lists.
StatusOr<std::pair<std::string, std::string>> ResolveModel(const ServeBenchOptions& o, const Endpoint& endpoint) {
  if (!o.model.empty() && (HasTokenizer(o.model) || !o.tokenizer.empty())) return std::pair{o.model, o.model};
  auto body = HttpGet(endpoint, "/v1/models", 30);
  if (!body.ok()) {
    if (!o.model.empty()) return std::pair{o.model, std::string()};
    return Status::Unavailable(body.status().message() + " (pass --model to skip asking the server)");
  }
  const nlohmann::json j = nlohmann::json::parse(*body, nullptr, false);
  const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json& data = j.is_object() && j.contains("data") && j["data"].is_array() ? j["data"] : empty;
  for (const auto& m : data) {
    if (!m.is_object() || !m.contains("id") || !m["id"].is_string()) continue;
    const std::string id = m["id"].get<std::string>();
    if (!o.model.empty() && id != o.model) continue;
    std::string root = m.contains("root") && m["root"].is_string() ? m["root"].get<std::string>() : "";
    return std::pair{id, root};
  }
  if (!o.model.empty()) return std::pair{o.model, std::string()};
  return Status::Unavailable("the server's /v1/models lists no model; pass --model");
}

StatusOr<std::vector<SampleRequest>> Sample(const ServeBenchOptions& o, const Tokenizer& tok) {
  if (o.dataset_name == "random") return SampleRandom(tok, o.num_prompts, o.random, o.seed);
  if (o.dataset_name == "prefix_repetition") return SamplePrefixRepetition(tok, o.num_prompts, o.prefix, o.seed);
  return SampleShareGpt(tok, o.dataset_path, o.num_prompts, o.sharegpt_output_len, o.seed);
}

// With no concurrency limit every request may hold a socket at once: lift the
// soft open-file limit to the hard one so that 1000+ prompts do not hit EMFILE.
void RaiseOpenFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

// vLLM's --ready-check-timeout-sec (send the first prompt until it succeeds)
// and --num-warmups (that many copies of it, not measured).
Status ReadyCheckAndWarmUp(const ServeBenchOptions& o, const Endpoint& endpoint, LoadRequest first,
                           LoadOptions load) {
  load.on_progress = nullptr;
  load.max_duration_s = 0;
  first.arrival_s = 0;
  first.request_id.clear();
  if (o.ready_check_timeout_s > 0) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.ready_check_timeout_s);
    std::string last_error;
    while (true) {
      LLMSERVE_ASSIGN_OR_RETURN(LoadResult r, RunLoad(endpoint, {first}, load));
      if (r.outputs[0].success) break;
      last_error = r.outputs[0].error;
      if (std::chrono::steady_clock::now() >= end) {
        return Status::Unavailable("the first request did not succeed within --ready-check-timeout-sec: " +
                                   last_error);
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (!o.quiet) std::cout << "Initial test run completed." << std::endl;
  }
  if (o.num_warmups > 0) {
    if (!o.quiet) std::cout << "Warming up with " << o.num_warmups << " requests..." << std::endl;
    LLMSERVE_ASSIGN_OR_RETURN(LoadResult r, RunLoad(endpoint, std::vector<LoadRequest>(o.num_warmups, first), load));
    (void)r;
  }
  return Status::Ok();
}

// The dataset's samples as requests, each with its constraint when --structured-output is on.
std::vector<LoadRequest> BuildRequests(const ServeBenchOptions& o, const std::string& model_id,
                                       const std::vector<SampleRequest>& samples,
                                       const std::vector<double>& arrivals,
                                       const std::vector<std::optional<Constraint>>& plan) {
  std::vector<LoadRequest> requests;
  requests.reserve(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const Constraint* c = plan[i] ? &*plan[i] : nullptr;
    requests.push_back({o.endpoint, RequestBody(o, model_id, samples[i], c), samples[i].prompt_len, arrivals[i],
                        o.request_id_prefix.empty() ? "" : o.request_id_prefix + std::to_string(i)});
  }
  return requests;
}

// Writes the JSON as --save-result / --append-result ask; returns the path.
StatusOr<std::string> SaveResult(const ServeBenchOptions& o, const RunFacts& facts, const nlohmann::json& json) {
  fs::path path = o.result_filename.empty() ? fs::path(DefaultResultFilename(o, facts)) : fs::path(o.result_filename);
  if (!o.result_dir.empty()) {
    std::error_code ec;
    fs::create_directories(o.result_dir, ec);
    if (ec) return Status::Unavailable("--result-dir: cannot create '" + o.result_dir + "': " + ec.message());
    path = fs::path(o.result_dir) / path;
  }
  std::ofstream f(path, o.append_result ? std::ios::app : std::ios::trunc);
  f << json.dump() << "\n";
  if (!f) return Status::Unavailable("cannot write results to '" + path.string() + "'");
  return path.string();
}

}  // namespace

std::string RequestBody(const ServeBenchOptions& o, const std::string& model, const SampleRequest& s,
                        const Constraint* constraint) {
  nlohmann::ordered_json body;
  body["model"] = o.served_model_name.empty() ? model : o.served_model_name;
  if (o.api == ApiKind::kChat) {
    body["messages"] = nlohmann::ordered_json::array({{{"role", "user"}, {"content", s.prompt}}});
    body["max_completion_tokens"] = s.expected_output_len;
  } else {
    body["prompt"] = s.prompt;
    body["max_tokens"] = s.expected_output_len;
  }
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  // A constrained answer must be free to end when its grammar does, so the
  // random dataset's implicit ignore_eos does not apply to it (--ignore-eos does).
  if (o.ignore_eos && (constraint == nullptr || o.ignore_eos_flag)) body["ignore_eos"] = true;
  for (const auto& [k, v] : o.sampling) body[k] = nlohmann::ordered_json::parse(v);
  if (constraint != nullptr) ApplyConstraint(o.api, *constraint, &body);
  if (!o.extra_body.empty()) body.update(nlohmann::ordered_json::parse(o.extra_body));
  return body.dump();
}

StatusOr<ServeBenchResult> RunServeBenchmark(const ServeBenchOptions& o) {
  LLMSERVE_ASSIGN_OR_RETURN(Endpoint endpoint, ParseBaseUrl(o.base_url));
  LLMSERVE_ASSIGN_OR_RETURN(auto model, ResolveModel(o, endpoint));
  const auto& [model_id, model_dir] = model;
  std::string tokenizer_dir = o.tokenizer;
  if (tokenizer_dir.empty() && HasTokenizer(model_dir)) tokenizer_dir = model_dir;
  if (tokenizer_dir.empty()) {
    return Status::InvalidArgument("bench serve needs the model's tokenizer: pass --tokenizer DIR "
                                   "(a directory with tokenizer.json); '" + model_id + "' is not one");
  }
  auto tok_or = Tokenizer::FromDirectory(tokenizer_dir);
  if (!tok_or.ok()) return Status::InvalidArgument("--tokenizer: " + tok_or.status().message());
  const Tokenizer& tok = **tok_or;

  LLMSERVE_ASSIGN_OR_RETURN(std::vector<SampleRequest> samples, Sample(o, tok));
  LLMSERVE_ASSIGN_OR_RETURN(std::vector<double> arrivals, ArrivalTimes(samples.size(), o.request_rate,
                                                                       o.burstiness, o.seed));
  const auto plan = PlanConstraints(o.structured, samples.size(), o.seed);
  const std::vector<LoadRequest> requests = BuildRequests(o, model_id, samples, arrivals, plan);

  LoadOptions load;
  load.api = o.api;
  load.max_concurrency = o.max_concurrency;
  load.request_timeout_s = o.request_timeout_s;
  load.max_duration_s = o.max_duration_s;
  load.headers = o.headers;
  if (const char* key = std::getenv("OPENAI_API_KEY"); key && *key) {
    load.headers.emplace_back("Authorization", std::string("Bearer ") + key);
  }
  RaiseOpenFileLimit();
  ProgressBar bar(requests.size(), o.show_progress);
  load.on_progress = [&bar](size_t done, size_t) { bar.Update(done); };
  if (!o.quiet) {
    std::cout << "Traffic request rate: " << PyFloat(o.request_rate)
              << "\nBurstiness factor: " << PyFloat(o.burstiness)
              << (o.burstiness == 1.0 ? " (Poisson process)" : " (Gamma distribution)")
              << "\nMaximum request concurrency: "
              << (o.max_concurrency ? std::to_string(o.max_concurrency) : std::string("None")) << std::endl;
  }
  LLMSERVE_RETURN_IF_ERROR(ReadyCheckAndWarmUp(o, endpoint, requests.front(), load));
  // vLLM's bench reads the spec decode counters around the measured run only (not the warm-up).
  const std::optional<SpecDecodeCounters> spec_before = FetchSpecDecodeCounters(endpoint);
  LLMSERVE_ASSIGN_OR_RETURN(LoadResult run, RunLoad(endpoint, requests, load));
  bar.Finish();
  const std::optional<SpecDecodeCounters> spec_after = FetchSpecDecodeCounters(endpoint);

  // Output tokens: the server's usage when it reported it, else count the text.
  size_t by_usage = 0, by_tokenizer = 0;
  for (auto& out : run.outputs) {
    if (!out.success) continue;
    if (out.usage_reported) {
      ++by_usage;
    } else {
      ++by_tokenizer;
      out.output_tokens = static_cast<int64_t>(tok.Encode(out.generated_text, false).size());
    }
  }
  RunFacts facts;
  facts.model_id = model_id;
  facts.tokenizer_id = tokenizer_dir;
  facts.date = LocalDate();
  facts.duration_s = run.duration_s;
  facts.output_tokens_source = by_tokenizer == 0 ? "usage" : by_usage == 0 ? "tokenizer" : "usage+tokenizer";

  ServeBenchResult result;
  result.metrics = ComputeMetrics(run.outputs, run.duration_s, o.metric_percentiles, o.goodput);
  CountStructuredOutputs(plan, run.outputs, &result.metrics);
  result.metrics.spec_decode = SummarizeSpecDecode(spec_before, spec_after);
  result.json = ResultJson(o, facts, result.metrics, run.outputs);
  if (!o.quiet) {
    size_t shown = 0;
    for (const auto& out : run.outputs) {
      if (out.success || shown >= 10) continue;
      if (shown++ == 0) std::cout << "Failed requests during benchmark run detected (capping to 10):\n";
      std::cout << "Error " << shown - 1 << ": " << out.error << "\n";
    }
    std::cout << ResultTable(o, facts, result.metrics) << std::flush;
  }
  if (o.save_result || o.append_result) {
    LLMSERVE_ASSIGN_OR_RETURN(result.saved_path, SaveResult(o, facts, result.json));
  }
  return result;
}

int RunBenchServeCommand(int argc, char** argv) {
  ArgParser args(kUsage, ServeBenchArgSpecs());
  if (Status s = args.Parse(argc, argv); !s.ok()) {
    std::cerr << "llmserve bench serve: " << s.message() << "\n";
    return 2;
  }
  if (args.help_requested()) {
    std::cout << args.Help();
    return 0;
  }
  auto options = ServeBenchOptionsFromArgs(args);
  if (!options.ok()) {
    std::cerr << "llmserve bench serve: " << options.status().message() << "\n";
    return 2;
  }
  auto result = RunServeBenchmark(*options);
  if (!result.ok()) {
    std::cerr << "llmserve bench serve: " << result.status().message() << "\n";
    return 1;
  }
  if (!result->saved_path.empty()) std::cout << "Results saved to " << result->saved_path << "\n";
  return result->metrics.completed > 0 ? 0 : 1;
}

}  // namespace llmserve::deploy::bench
