#include "deploy/bench/serve_options.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace llmserve::deploy::bench {

using Kind = ArgSpec::Kind;

std::vector<ArgSpec> ServeBenchArgSpecs() {
  return {
      {"backend", Kind::kValue, "openai", "openai or vllm (/v1/completions) or openai-chat (/v1/chat/completions)"},
      {"base-url", Kind::kValue, "", "server base URL, e.g. http://127.0.0.1:8000 (default http://HOST:PORT)"},
      {"host", Kind::kValue, "127.0.0.1", "server host when --base-url is not given"},
      {"port", Kind::kValue, "8000", "server port when --base-url is not given"},
      {"endpoint", Kind::kValue, "", "API path (default /v1/completions; /v1/chat/completions for openai-chat)"},
      {"model", Kind::kValue, "", "model name sent in requests (default: the first of GET /v1/models)"},
      {"served-model-name", Kind::kValue, "", "model name for the request body when it differs from --model"},
      {"tokenizer", Kind::kValue, "", "directory with tokenizer.json (default: --model when it is a directory)"},
      {"dataset-name", Kind::kValue, "random", "random, sharegpt or prefix_repetition (prefix-repetition)"},
      {"dataset-path", Kind::kValue, "", "ShareGPT JSON file for --dataset-name sharegpt"},
      {"num-prompts", Kind::kValue, "1000", "number of requests"},
      {"seed", Kind::kValue, "0", "seed for datasets and arrival times"},
      {"input-len", Kind::kValue, "", "general input length (sets --random-input-len)"},
      {"output-len", Kind::kValue, "", "general output length (sets every dataset's output length)"},
      {"random-input-len", Kind::kValue, "1024", "random dataset: prompt tokens"},
      {"random-output-len", Kind::kValue, "128", "random dataset: output tokens"},
      {"random-range-ratio", Kind::kValue, "0.0", "random dataset: lengths vary uniformly by +-ratio, in [0, 1)"},
      {"random-prefix-len", Kind::kValue, "0", "random dataset: random tokens shared by all prompts"},
      {"prefix-repetition-prefix-len", Kind::kValue, "256", "prefix_repetition: tokens per shared prefix"},
      {"prefix-repetition-suffix-len", Kind::kValue, "256", "prefix_repetition: tokens per suffix"},
      {"prefix-repetition-num-prefixes", Kind::kValue, "10", "prefix_repetition: distinct prefixes"},
      {"prefix-repetition-output-len", Kind::kValue, "128", "prefix_repetition: output tokens"},
      {"sharegpt-output-len", Kind::kValue, "", "sharegpt: output tokens (default: the reference answer's)"},
      {"request-rate", Kind::kValue, "inf", "requests per second; inf sends all at once"},
      {"burstiness", Kind::kValue, "1.0", "gamma shape of the gaps: 1 = Poisson, <1 burstier, >1 steadier"},
      {"max-concurrency", Kind::kValue, "", "most requests in flight at once (default: no limit)"},
      {"ignore-eos", Kind::kSwitch, "", "send ignore_eos (always on for the random dataset, as in vLLM)"},
      {"temperature", Kind::kValue, "", "sampling temperature (default: the server's)"},
      {"top-p", Kind::kValue, "", "top_p sampling parameter"},
      {"top-k", Kind::kValue, "", "top_k sampling parameter"},
      {"min-p", Kind::kValue, "", "min_p sampling parameter"},
      {"extra-body", Kind::kValue, "", "JSON object merged into every request body"},
      {"structured-output", Kind::kValue, "",
       "constrain answers: json (JSON Schema), json_object, regex, choice or grammar (EBNF); default none"},
      {"structured-output-ratio", Kind::kValue, "1.0",
       "fraction in [0, 1] of the requests that carry a constraint (chosen from --seed)"},
      {"structured-output-schema", Kind::kValue, "",
       "JSON file with one schema or an array of schemas replacing the built-in corpus (json mode)"},
      {"percentile-metrics", Kind::kValue, "ttft,tpot,itl,e2el", "metrics to report: of ttft,tpot,itl,e2el"},
      {"metric-percentiles", Kind::kValue, "99", "comma-separated percentiles to report, e.g. 50,90,99"},
      {"goodput", Kind::kList, "", "SLOs as KEY:MS pairs (ttft, tpot, e2el), e.g. --goodput ttft:500 tpot:50"},
      {"save-result", Kind::kSwitch, "", "save the results as JSON"},
      {"save-detailed", Kind::kSwitch, "", "include per-request lists (ttfts, itls, input_lens, output_lens...)"},
      {"result-filename", Kind::kValue, "", "JSON file name (default LABEL-RATEqps[-concurrencyN]-MODEL-DATE.json)"},
      {"result-dir", Kind::kValue, "", "directory for the JSON file"},
      {"label", Kind::kValue, "", "label of the results (default: --backend)"},
      {"metadata", Kind::kList, "", "KEY=VALUE pairs stored in the JSON"},
      {"header", Kind::kList, "", "KEY=VALUE HTTP headers sent with each request"},
      {"disable-tqdm", Kind::kSwitch, "", "no progress bar"},
      {"request-timeout", Kind::kValue, "600", "seconds one request may take before it counts as failed"},
      {"max-duration", Kind::kValue, "0", "seconds the whole run may take (0 = no limit); later requests fail"},
      {"num-warmups", Kind::kValue, "0", "requests sent before the run and not measured"},
      {"ready-check-timeout-sec", Kind::kValue, "0", "retry the first request up to this long until the server answers"},
      {"request-id-prefix", Kind::kValue, "bench-", "x-request-id of request i is PREFIX + i"},
      {"append-result", Kind::kSwitch, "", "append the JSON to the result file as a new line"},
      {"trust-remote-code", Kind::kSwitch, "", "accepted for vLLM compatibility (tokenizers here run no code)"},
      {"tokenizer-mode", Kind::kValue, "auto", "accepted for vLLM compatibility: auto, hf or slow (all the same here)"},
  };
}

namespace {

StatusOr<std::vector<std::pair<std::string, std::string>>> KeyValues(const ArgParser& args, const char* flag) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& item : args.List(flag)) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status::InvalidArgument(std::string("--") + flag + ": expected KEY=VALUE, got '" + item + "'");
    }
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

StatusOr<int64_t> NonNegative(const ArgParser& args, const char* flag) {
  LLMSERVE_ASSIGN_OR_RETURN(int64_t v, args.Int(flag));
  if (v < 0) return Status::InvalidArgument(std::string("--") + flag + " must be non-negative");
  return v;
}

// The server and model the requests go to: --backend, --base-url, --endpoint, --model.
Status ParseServer(const ArgParser& args, ServeBenchOptions* out) {
  ServeBenchOptions& o = *out;
  o.backend = args.Get("backend");
  if (o.backend == "openai" || o.backend == "vllm") o.api = ApiKind::kCompletions;
  else if (o.backend == "openai-chat") o.api = ApiKind::kChat;
  else return Status::InvalidArgument("--backend must be openai, vllm or openai-chat, got '" + o.backend + "'");
  o.base_url = args.Has("base-url") ? args.Get("base-url") : "http://" + args.Get("host") + ":" + args.Get("port");
  o.endpoint = args.Get("endpoint");
  if (o.endpoint.empty()) o.endpoint = o.api == ApiKind::kChat ? "/v1/chat/completions" : "/v1/completions";
  if (o.endpoint.front() != '/') o.endpoint = "/" + o.endpoint;
  o.model = args.Get("model");
  o.served_model_name = args.Get("served-model-name");
  o.tokenizer = args.Get("tokenizer");
  return Status::Ok();
}

// The dataset and its lengths: --dataset-*, --num-prompts, --seed, the *-len flags.
Status ParseDataset(const ArgParser& args, ServeBenchOptions* out) {
  ServeBenchOptions& o = *out;
  o.dataset_name = args.Get("dataset-name");
  if (o.dataset_name == "prefix-repetition") o.dataset_name = "prefix_repetition";
  if (o.dataset_name != "random" && o.dataset_name != "sharegpt" && o.dataset_name != "prefix_repetition") {
    return Status::InvalidArgument("--dataset-name must be random, sharegpt or prefix_repetition, got '" +
                                   o.dataset_name + "'");
  }
  o.dataset_path = args.Get("dataset-path");
  if (o.dataset_name == "sharegpt" && o.dataset_path.empty()) {
    return Status::InvalidArgument("--dataset-name sharegpt needs --dataset-path FILE");
  }
  if (o.dataset_name != "sharegpt" && !o.dataset_path.empty()) {
    return Status::InvalidArgument("--dataset-path is only for --dataset-name sharegpt");
  }
  LLMSERVE_ASSIGN_OR_RETURN(int64_t num_prompts, args.Int("num-prompts"));
  if (num_prompts < 1) return Status::InvalidArgument("--num-prompts must be at least 1");
  o.num_prompts = static_cast<size_t>(num_prompts);
  LLMSERVE_ASSIGN_OR_RETURN(int64_t seed, args.Int("seed"));
  o.seed = static_cast<uint64_t>(seed);
  LLMSERVE_ASSIGN_OR_RETURN(o.random.input_len, NonNegative(args, "random-input-len"));
  LLMSERVE_ASSIGN_OR_RETURN(o.random.output_len, NonNegative(args, "random-output-len"));
  LLMSERVE_ASSIGN_OR_RETURN(o.random.range_ratio, args.Double("random-range-ratio"));
  LLMSERVE_ASSIGN_OR_RETURN(o.random.prefix_len, NonNegative(args, "random-prefix-len"));
  LLMSERVE_ASSIGN_OR_RETURN(o.prefix.prefix_len, NonNegative(args, "prefix-repetition-prefix-len"));
  LLMSERVE_ASSIGN_OR_RETURN(o.prefix.suffix_len, NonNegative(args, "prefix-repetition-suffix-len"));
  LLMSERVE_ASSIGN_OR_RETURN(o.prefix.num_prefixes, NonNegative(args, "prefix-repetition-num-prefixes"));
  LLMSERVE_ASSIGN_OR_RETURN(o.prefix.output_len, NonNegative(args, "prefix-repetition-output-len"));
  if (args.Has("sharegpt-output-len")) {
    LLMSERVE_ASSIGN_OR_RETURN(int64_t v, NonNegative(args, "sharegpt-output-len"));
    o.sharegpt_output_len = v;
  }
  if (args.Has("input-len")) {
    LLMSERVE_ASSIGN_OR_RETURN(o.random.input_len, NonNegative(args, "input-len"));
  }
  if (args.Has("output-len")) {
    LLMSERVE_ASSIGN_OR_RETURN(int64_t v, NonNegative(args, "output-len"));
    o.random.output_len = o.prefix.output_len = v;
    o.sharegpt_output_len = v;
  }
  return Status::Ok();
}

// How requests are sent: rate, burstiness, concurrency and the request body's sampling.
Status ParseLoad(const ArgParser& args, ServeBenchOptions* out) {
  ServeBenchOptions& o = *out;
  LLMSERVE_ASSIGN_OR_RETURN(o.request_rate, args.Double("request-rate"));
  if (!(o.request_rate > 0)) return Status::InvalidArgument("--request-rate must be positive (or inf)");
  LLMSERVE_ASSIGN_OR_RETURN(o.burstiness, args.Double("burstiness"));
  if (!(o.burstiness > 0)) return Status::InvalidArgument("--burstiness must be positive");
  if (args.Has("max-concurrency")) {
    LLMSERVE_ASSIGN_OR_RETURN(int64_t c, args.Int("max-concurrency"));
    if (c < 1) return Status::InvalidArgument("--max-concurrency must be greater than 0");
    o.max_concurrency = static_cast<size_t>(c);
  }
  // As vLLM: the random dataset always ignores EOS so outputs run to the asked length.
  o.ignore_eos_flag = args.Switch("ignore-eos");
  o.ignore_eos = o.ignore_eos_flag || o.dataset_name == "random";
  for (const auto& [flag, field] : {std::pair{"temperature", "temperature"}, std::pair{"top-p", "top_p"},
                                     std::pair{"top-k", "top_k"}, std::pair{"min-p", "min_p"}}) {
    if (!args.Has(flag)) continue;
    LLMSERVE_RETURN_IF_ERROR(args.Double(flag).status());
    o.sampling.emplace_back(field, args.Get(flag));
  }
  o.extra_body = args.Get("extra-body");
  if (!o.extra_body.empty() && !nlohmann::json::parse(o.extra_body, nullptr, false).is_object()) {
    return Status::InvalidArgument("--extra-body must be a JSON object");
  }
  return Status::Ok();
}

// What is reported and where: percentiles, goodput, result files, labels, headers.
Status ParseReporting(const ArgParser& args, ServeBenchOptions* out) {
  ServeBenchOptions& o = *out;
  o.percentile_metrics = SplitComma(args.Get("percentile-metrics"));
  for (const auto& m : o.percentile_metrics) {
    if (m != "ttft" && m != "tpot" && m != "itl" && m != "e2el") {
      return Status::InvalidArgument("--percentile-metrics: unknown metric '" + m + "' (use ttft,tpot,itl,e2el)");
    }
  }
  for (const auto& p : SplitComma(args.Get("metric-percentiles"))) {
    char* end = nullptr;
    const double v = std::strtod(p.c_str(), &end);
    if (*end != '\0' || !(v >= 0 && v <= 100)) {
      return Status::InvalidArgument("--metric-percentiles: '" + p + "' is not a percentile in [0, 100]");
    }
    o.metric_percentiles.push_back(v);
  }
  LLMSERVE_ASSIGN_OR_RETURN(o.goodput, ParseGoodput(args.List("goodput")));
  o.save_result = args.Switch("save-result");
  o.save_detailed = args.Switch("save-detailed");
  o.result_filename = args.Get("result-filename");
  o.result_dir = args.Get("result-dir");
  o.label = args.Get("label");
  LLMSERVE_ASSIGN_OR_RETURN(o.metadata, KeyValues(args, "metadata"));
  LLMSERVE_ASSIGN_OR_RETURN(o.headers, KeyValues(args, "header"));
  return Status::Ok();
}

// Progress, timeouts, warm-up and the vLLM-compatibility flags.
Status ParseRunLimits(const ArgParser& args, ServeBenchOptions* out) {
  ServeBenchOptions& o = *out;
  o.show_progress = !args.Switch("disable-tqdm");
  LLMSERVE_ASSIGN_OR_RETURN(o.request_timeout_s, args.Double("request-timeout"));
  if (!(o.request_timeout_s > 0)) return Status::InvalidArgument("--request-timeout must be positive");
  LLMSERVE_ASSIGN_OR_RETURN(o.max_duration_s, args.Double("max-duration"));
  if (!(o.max_duration_s >= 0) || std::isinf(o.max_duration_s)) {
    return Status::InvalidArgument("--max-duration must be a non-negative number of seconds");
  }
  LLMSERVE_ASSIGN_OR_RETURN(int64_t warmups, NonNegative(args, "num-warmups"));
  o.num_warmups = static_cast<size_t>(warmups);
  LLMSERVE_ASSIGN_OR_RETURN(o.ready_check_timeout_s, args.Double("ready-check-timeout-sec"));
  if (!(o.ready_check_timeout_s >= 0) || std::isinf(o.ready_check_timeout_s)) {
    return Status::InvalidArgument("--ready-check-timeout-sec must be a non-negative number of seconds");
  }
  o.request_id_prefix = args.Get("request-id-prefix");
  o.append_result = args.Switch("append-result");
  const std::string mode = args.Get("tokenizer-mode");
  if (mode != "auto" && mode != "hf" && mode != "slow") {
    return Status::InvalidArgument("--tokenizer-mode: only auto, hf and slow are supported, got '" + mode + "'");
  }
  return Status::Ok();
}

// --structured-output, its ratio and its schema file.
Status ParseStructured(const ArgParser& args, ServeBenchOptions* out) {
  StructuredOutputOptions& s = out->structured;
  if (args.Has("structured-output")) {
    LLMSERVE_ASSIGN_OR_RETURN(s.mode, ParseStructuredMode(args.Get("structured-output")));
  }
  LLMSERVE_ASSIGN_OR_RETURN(s.ratio, args.Double("structured-output-ratio"));
  if (!(s.ratio >= 0 && s.ratio <= 1)) {
    return Status::InvalidArgument("--structured-output-ratio must be in [0, 1], got '" +
                                   args.Get("structured-output-ratio") + "'");
  }
  if (args.Has("structured-output-ratio") && s.mode == StructuredMode::kNone) {
    return Status::InvalidArgument("--structured-output-ratio needs --structured-output MODE");
  }
  s.schema_file = args.Get("structured-output-schema");
  if (!s.schema_file.empty()) {
    if (s.mode != StructuredMode::kJson) {
      return Status::InvalidArgument("--structured-output-schema needs --structured-output json");
    }
    LLMSERVE_ASSIGN_OR_RETURN(s.schemas, LoadSchemaFile(s.schema_file));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ServeBenchOptions> ServeBenchOptionsFromArgs(const ArgParser& args) {
  ServeBenchOptions o;
  LLMSERVE_RETURN_IF_ERROR(ParseServer(args, &o));
  LLMSERVE_RETURN_IF_ERROR(ParseDataset(args, &o));
  LLMSERVE_RETURN_IF_ERROR(ParseLoad(args, &o));
  LLMSERVE_RETURN_IF_ERROR(ParseStructured(args, &o));
  LLMSERVE_RETURN_IF_ERROR(ParseReporting(args, &o));
  LLMSERVE_RETURN_IF_ERROR(ParseRunLimits(args, &o));
  return o;
}

}  // namespace llmserve::deploy::bench
