// The data behind deploy/vllm_flags.h: vLLM's `vllm serve` flags that
// llmserve accepts without effect or rejects, and vLLM's spellings of our own
// flags. docs/vllm-serve-flags.md explains each row (a test checks that the
// doc and these tables agree), and says which vLLM commit they come from.
#include "deploy/vllm_flags.h"

namespace llmserve::deploy {

namespace {

using A = VllmArity;

constexpr char kTextOnly[] = "text-only: no multimodal models or inputs";
constexpr char kNoExpertParallel[] =
    "expert load balancing and all-to-all backends are not implemented (experts are placed statically); outputs are "
    "the same";
constexpr char kDbo[] = "dual-batch overlap is an expert-parallel speed-up; outputs are the same";
constexpr char kCudaGraphs[] = "llmserve's CUDA backend sizes its CUDA graphs itself";
constexpr char kNoDownload[] = "llmserve downloads nothing: models come from a path or the local HF cache";
constexpr char kNoMamba[] = "no Mamba / state-space models";
constexpr char kNoTracing[] = "no OpenTelemetry tracing";
constexpr char kNotUvicorn[] = "the HTTP server is not uvicorn; logs are glog's";
constexpr char kRope[] = "overriding the model's RoPE settings";

constexpr NoEffectVllmFlag kNoEffect[] = {
    {"additional-config", A::kOne, "extra settings for vLLM platform plugins; llmserve has none"},
    {"aggregate-engine-logging", A::kNone, "the stats line's layout is llmserve's own"},
    {"all2all-backend", A::kOne, kNoExpertParallel},
    {"allowed-local-media-path", A::kOne, kTextOnly},
    {"allowed-media-domains", A::kList, kTextOnly},
    {"async-scheduling", A::kBool, "a scheduling speed-up; outputs are the same"},
    {"calculate-kv-scales", A::kBool,
     "fp8 KV cache scales come from the checkpoint (self_attn.k_scale / v_scale) or are 1.0; llmserve does not "
     "compute them"},
    {"code-revision", A::kOne, "no model code is downloaded or run"},
    {"collect-detailed-traces", A::kList, kNoTracing},
    {"compilation-config", A::kOne, "no torch.compile: kernels are compiled ahead of time"},
    {"cpu-offload-gb", A::kOne, "weights are not offloaded (on CPU they are in RAM already)"},
    {"cuda-graph-sizes", A::kList, kCudaGraphs},
    {"cudagraph-capture-sizes", A::kList, kCudaGraphs},
    {"dbo-decode-token-threshold", A::kOne, kDbo},
    {"dbo-prefill-token-threshold", A::kOne, kDbo},
    {"default-mm-loras", A::kOne, kTextOnly},
    {"disable-cascade-attn", A::kBool, "llmserve has no cascade attention"},
    {"disable-chunked-mm-input", A::kBool, kTextOnly},
    {"disable-custom-all-reduce", A::kBool, "tensor-parallel all-reduce is llmserve's own (shared memory on CPU)"},
    {"disable-fastapi-docs", A::kBool, "there are no FastAPI /docs pages"},
    {"disable-frontend-multiprocessing", A::kBool, "frontends are always separate processes"},
    {"disable-hybrid-kv-cache-manager", A::kBool, "one KV cache manager serves every supported model"},
    {"disable-log-requests", A::kBool, "no request log is the default (--enable-log-requests turns it on)"},
    {"disable-mm-preprocessor-cache", A::kNone, kTextOnly},
    {"disable-nccl-for-dp-synchronization", A::kBool, "data-parallel ranks synchronise over ZeroMQ, not NCCL"},
    {"disable-uvicorn-access-log", A::kBool, kNotUvicorn},
    {"distributed-executor-backend", A::kOne, "workers are always processes that llmserve starts (vLLM's mp)"},
    {"enable-chunked-prefill", A::kBool, "chunked prefill is always on; outputs are the same"},
    {"enable-dbo", A::kBool, kDbo},
    {"enable-eplb", A::kBool, kNoExpertParallel},
    {"enable-mm-embeds", A::kBool, kTextOnly},
    {"enable-multimodal-encoder-data-parallel", A::kNone, kTextOnly},
    {"eplb-config", A::kOne, kNoExpertParallel},
    {"eplb-log-balancedness", A::kBool, kNoExpertParallel},
    {"eplb-step-interval", A::kOne, kNoExpertParallel},
    {"eplb-window-size", A::kOne, kNoExpertParallel},
    {"fully-sharded-loras", A::kBool, "how LoRA work is split among tensor-parallel ranks; outputs are the same"},
    {"guided-decoding-backend", A::kOne, "structured outputs always use the built-in grammar engine"},
    {"guided-decoding-disable-fallback", A::kOne, "there is no other grammar backend to fall back to"},
    {"h11-max-header-count", A::kOne, "the HTTP parser is not h11; see --max-request-body-bytes"},
    {"h11-max-incomplete-event-size", A::kOne, "the HTTP parser is not h11; see --max-request-body-bytes"},
    {"hf-token", A::kOptional, kNoDownload},
    {"ignore-patterns", A::kList, "only *.safetensors (or GGUF) weights are read"},
    {"interleave-mm-strings", A::kBool, kTextOnly},
    {"kv-sharing-fast-prefill", A::kBool, "a prefill speed-up for KV-sharing models; llmserve computes every layer"},
    {"limit-mm-per-prompt", A::kOne, kTextOnly},
    {"log-config-file", A::kOne, "logging is glog's (GLOG_* environment variables)"},
    {"log-error-stack", A::kBool, "errors have no Python stack to log"},
    {"logits-processor-pattern", A::kOne, "requests cannot name logits processors"},
    {"lora-dtype", A::kOne, "LoRA factors are kept and multiplied in float32"},
    {"lora-extra-vocab-size", A::kOne, "adapters with extra vocabulary are refused when loaded"},
    {"mamba-block-size", A::kOne, kNoMamba},
    {"mamba-cache-dtype", A::kOne, kNoMamba},
    {"mamba-ssm-cache-dtype", A::kOne, kNoMamba},
    {"max-cudagraph-capture-size", A::kOne, kCudaGraphs},
    {"max-long-partial-prefills", A::kOne, "a limit on concurrent partial prefills; scheduling only"},
    {"max-num-partial-prefills", A::kOne, "a limit on concurrent partial prefills; scheduling only"},
    {"max-parallel-loading-workers", A::kOne, "weights are memory-mapped, not read by loader workers"},
    {"media-io-kwargs", A::kOne, kTextOnly},
    {"mm-encoder-attn-backend", A::kOne, kTextOnly},
    {"mm-encoder-tp-mode", A::kOne, kTextOnly},
    {"mm-processor-cache-gb", A::kOne, kTextOnly},
    {"mm-processor-cache-type", A::kOne, kTextOnly},
    {"mm-processor-kwargs", A::kOne, kTextOnly},
    {"mm-shm-cache-max-object-size-mb", A::kOne, kTextOnly},
    {"model-loader-extra-config", A::kOne, "options of vLLM's special loaders; safetensors need none"},
    {"num-lookahead-slots", A::kOne, "the draft tokens' KV slots follow from --speculative-config"},
    {"num-redundant-experts", A::kOne, kNoExpertParallel},
    {"otlp-traces-endpoint", A::kOne, kNoTracing},
    {"pt-load-map-location", A::kOne, "PyTorch .bin/.pt checkpoints are not read"},
    {"ray-workers-use-nsight", A::kBool, "no Ray"},
    {"root-path", A::kOne, "only FastAPI's docs URLs use it; routes are the same"},
    {"safetensors-load-strategy", A::kOne, "safetensors files are memory-mapped"},
    {"show-hidden-metrics-for-version", A::kOne, "no metrics are hidden as deprecated"},
    {"skip-mm-profiling", A::kBool, kTextOnly},
    {"swap-space", A::kOne, "no CPU swap space: preempted requests are recomputed, as in vLLM V1"},
    {"trust-remote-code", A::kBool, "no model code is downloaded or run; architectures are built in"},
    {"use-tqdm-on-load", A::kBool, "loading progress is llmserve's own log line"},
    {"uvicorn-log-level", A::kOne, kNotUvicorn},
    {"video-pruning-rate", A::kOne, kTextOnly},
};

constexpr RejectedVllmFlag kRejected[] = {
    {"chat-template-content-format", A::kOne, "choosing the chat content format", "auto"},
    {"config-format", A::kOne, "model configs other than Hugging Face's config.json", "auto,hf"},
    {"data-parallel-backend", A::kOne, "Ray data parallelism", "mp"},
    {"data-parallel-hybrid-lb", A::kBool, "hybrid data-parallel load balancing", ""},
    {"data-parallel-rank", A::kOne, "external data-parallel load balancing (one rank per server)", ""},
    {"decode-context-parallel-size", A::kOne, "decode context parallelism", "1"},
    {"disable-sliding-window", A::kBool, "disabling sliding-window attention", ""},
    {"enable-force-include-usage", A::kBool, "usage in every response", ""},
    {"enable-prompt-embeds", A::kBool, "prompt embeddings as input", ""},
    {"enable-prompt-tokens-details", A::kBool, "prompt_tokens_details in usage", ""},
    {"enable-server-load-tracking", A::kBool, "server load tracking", ""},
    {"enable-sleep-mode", A::kBool, "sleep mode", ""},
    {"enable-ssl-refresh", A::kBool, "reloading the TLS certificate when its files change (restart instead)", ""},
    {"enable-tokenizer-info-endpoint", A::kBool, "the /get_tokenizer_info endpoint", ""},
    {"exclude-tools-when-tool-choice-none", A::kBool, "leaving tools out of the prompt for tool_choice none", ""},
    {"external-parameters", A::kOne, "external scheduler parameters", ""},
    {"guided-decoding-disable-additional-properties", A::kOne, "disable_additional_properties", ""},
    {"guided-decoding-disable-any-whitespace", A::kOne,
     "this deprecated spelling; use --structured-outputs-config '{\"disable_any_whitespace\": true}'", ""},
    {"hf-config-path", A::kOne, "a model config from another path", ""},
    {"hf-overrides", A::kOne, "overriding the model's config", ""},
    {"io-processor-plugin", A::kOne, "IO processor plugins", ""},
    {"logits-processors", A::kList, "custom logits processors", ""},
    {"logprobs-mode", A::kOne, "logprobs other than the raw model log-probabilities", "raw_logprobs"},
    {"middleware", A::kOne, "Python ASGI middleware", ""},
    {"model-impl", A::kOne, "other model implementations", "auto,vllm,transformers"},
    {"num-gpu-blocks-override", A::kOne, "a KV cache size in blocks; use --kv-cache-memory", ""},
    {"override-attention-dtype", A::kOne, "a separate attention dtype", ""},
    {"pipeline-parallel-size", A::kOne, "pipeline parallelism", "1"},
    {"response-role", A::kOne, "a response role other than assistant", "assistant"},
    {"rope-scaling", A::kOne, kRope, ""},
    {"rope-theta", A::kOne, kRope, ""},
    {"scheduler-cls", A::kOne, "custom scheduler classes", ""},
    {"skip-tokenizer-init", A::kBool, "serving without a tokenizer", ""},
    {"tokenizer-mode", A::kOne, "tokenizers other than the model's tokenizer.json", "auto,hf,slow"},
    {"tokenizer-revision", A::kOne, "a separate tokenizer revision (--revision picks the model's)", ""},
    {"tokens-only", A::kBool, "the tokens-only API", ""},
    {"tool-parser-plugin", A::kOne, "tool parser plugins", ""},
    {"tool-server", A::kOne, "tool servers", ""},
    {"trust-request-chat-template", A::kBool, "chat templates sent in requests", ""},
    {"uds", A::kOne, "serving on a Unix domain socket", ""},
    {"worker-cls", A::kOne, "custom worker classes", "auto"},
    {"worker-extension-cls", A::kOne, "worker extension classes", ""},
};

constexpr VllmFlagAlias kAliases[] = {
    {"asc", true, "api-server-count"},
    {"dcp", true, "decode-context-parallel-size"},
    {"dp", true, "data-parallel-size"},
    {"dpa", true, "data-parallel-address"},
    {"dpb", true, "data-parallel-backend"},
    {"dpl", true, "data-parallel-size-local"},
    {"dpn", true, "data-parallel-rank"},
    {"dpp", true, "data-parallel-rpc-port"},
    {"dpr", true, "data-parallel-start-rank"},
    {"kv-cache-memory-bytes", false, "kv-cache-memory"},
    {"O", true, "compilation-config"},
    {"pp", true, "pipeline-parallel-size"},
    {"q", true, "quantization"},
    {"tp", true, "tensor-parallel-size"},
};

}  // namespace

std::span<const NoEffectVllmFlag> NoEffectVllmFlags() { return kNoEffect; }
std::span<const RejectedVllmFlag> RejectedVllmFlags() { return kRejected; }
std::span<const VllmFlagAlias> VllmFlagAliases() { return kAliases; }

}  // namespace llmserve::deploy
