#include "deploy/make_model_command.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>

#include "common/gguf/ggml_type.h"
#include "deploy/make_lora_adapter.h"
#include "worker/gguf_export.h"
#include "worker/gguf_test_model.h"
#include "worker/quantized_export.h"
#include "worker/test_model.h"

// make-model parses its own arguments (no gflags): its option names (--out,
// --seed, --arch...) are common words and must not become process-wide flags
// of the `llmserve` binary.

namespace llmserve::deploy {
namespace {

constexpr const char* kMakeModelUsage =
    "usage: llmserve make-model --out DIR [--preset tiny|qwen3-0.6b|qwen3-30b-a3b]\n"
    "         [--arch qwen3|llama|mistral|qwen2|qwen3_moe|mixtral]\n"
    "         [--seed N] [--std X] [--norm-jitter X] [--dtype bf16|f16|f32] [--shards N]\n"
    "         [--layers N] [--hidden N] [--heads N] [--kv-heads N] [--head-dim N] [--intermediate N]\n"
    "         [--vocab N] [--max-pos N] [--rope-theta X] [--rope-scaling JSON] [--sliding-window N]\n"
    "         [--tie true|false] [--tokenizer-dir DIR]\n"
    "         [--experts N] [--experts-per-tok N] [--moe-intermediate N] [--norm-topk-prob true|false]\n"
    "         [--decoder-sparse-step N]\n"
    "         [--format safetensors|gguf|compressed-tensors|gptq|awq] [--group-size N]\n"
    "         [--gguf-type f32|f16|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|q4_k|q5_k|q6_k]\n"
    "Writes config.json, generation_config.json, safetensors (random weights; each tensor depends only\n"
    "on the seed and its name) and the real Qwen3 tokenizer (tokenizer.json, tokenizer_config.json from\n"
    "share/llmserve/demo-tokenizer beside the binaries unless --tokenizer-dir is given).\n"
    "Presets: tiny (hidden 64, 2 layers, 4 heads, 2 KV heads, head_dim 16, intermediate 128,\n"
    "vocab 151936; the default) and qwen3-0.6b (hidden 1024, 28 layers, 16 heads, 8 KV heads,\n"
    "head_dim 128, intermediate 3072, vocab 151936, tied embeddings). The mixture-of-experts arches\n"
    "(qwen3_moe, mixtral) add 8 experts, 2 per token (qwen3_moe experts 32 wide; mixtral's are\n"
    "--intermediate wide); qwen3-30b-a3b (--arch qwen3_moe) is Qwen3-30B-A3B's shape: hidden 2048,\n"
    "48 layers, 32 heads, 4 KV heads, 128 experts of width 768, 8 per token, untied; each layer holds\n"
    "about 1.2 GB of bf16 experts, so take a slice with --layers N.\n"
    "--format gguf writes one model.gguf of --gguf-type; --format compressed-tensors writes a\n"
    "compressed-tensors W8A8 int8 checkpoint (the decoder layers' linear weights as int8 with one\n"
    "scale per output channel, config.json's quantization_config saying so); --format gptq|awq a GPTQ\n"
    "or AWQ (GEMM layout) 4-bit checkpoint (rounded to nearest per output row and group of\n"
    "--group-size input columns, default 128, a multiple of 32 dividing every layer's in_features).\n";

bool ParseSize(const std::string& s, size_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || end == s.c_str() || *end != '\0' || s[0] == '-') return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool ParseDouble(const std::string& s, double* out) {
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0';
}

// The model of `spec` written as a compressed-tensors W8A8 int8, GPTQ or AWQ
// checkpoint (`format`), through a float copy in OUT/.hf-staging.
Status WriteQuantizedTestModel(const worker::TestModelSpec& spec, const std::string& format, size_t group_size,
                               const std::string& out) {
  const std::string staging = out + "/.hf-staging";
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);
  Status st = worker::WriteTestModel(spec, staging);
  if (st.ok()) {
    st = format == "gptq"  ? worker::ExportGptq(staging, group_size, out)
         : format == "awq" ? worker::ExportAwq(staging, group_size, out)
                           : worker::ExportCompressedTensorsInt8(staging, out);
  }
  std::filesystem::remove_all(staging, ec);
  return st;
}

}  // namespace

int RunMakeModelCommand(int argc, char** argv) {
  std::map<std::string, std::string> opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kMakeModelUsage, stdout);
      std::fputs(kMakeLoraAdapterUsage, stdout);
      return 0;
    }
    if (a.rfind("--", 0) != 0) {
      std::fprintf(stderr, "llmserve make-model: unexpected argument '%s'\n%s", a.c_str(), kMakeModelUsage);
      return 2;
    }
    a = a.substr(2);
    for (auto& c : a) c = c == '_' ? '-' : c;
    std::string value;
    if (auto eq = a.find('='); eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      std::fprintf(stderr, "llmserve make-model: --%s needs a value\n", a.c_str());
      return 2;
    }
    opts[a] = value;
  }
  if (opts.count("lora-adapter") != 0) return RunMakeLoraAdapter(std::move(opts));
  auto take = [&](const char* k, std::string fallback) {
    auto it = opts.find(k);
    if (it == opts.end()) return fallback;
    std::string v = it->second;
    opts.erase(it);
    return v;
  };
  const std::string out = take("out", "");
  if (out.empty()) {
    std::fprintf(stderr, "llmserve make-model: --out DIR is required\n%s", kMakeModelUsage);
    return 2;
  }
  auto spec_or = worker::TestModelPreset(take("preset", "tiny"), take("arch", "qwen3"));
  if (!spec_or.ok()) {
    std::fprintf(stderr, "llmserve make-model: %s\n", spec_or.status().message().c_str());
    return 2;
  }
  worker::TestModelSpec spec = *spec_or;
  const std::map<std::string, size_t*> sizes = {
      {"shards", &spec.num_shards},        {"layers", &spec.num_layers},       {"hidden", &spec.hidden_size},
      {"heads", &spec.num_heads},          {"kv-heads", &spec.num_kv_heads},   {"head-dim", &spec.head_dim},
      {"intermediate", &spec.intermediate_size}, {"vocab", &spec.vocab_size}, {"max-pos", &spec.max_position_embeddings},
      {"sliding-window", &spec.sliding_window}, {"experts", &spec.num_experts},
      {"experts-per-tok", &spec.num_experts_per_tok}, {"moe-intermediate", &spec.moe_intermediate_size},
      {"decoder-sparse-step", &spec.decoder_sparse_step}};
  const std::map<std::string, double*> reals = {
      {"std", &spec.std}, {"norm-jitter", &spec.norm_jitter}, {"rope-theta", &spec.rope_theta}};
  for (const auto& [k, p] : sizes) {
    if (auto v = take(k.c_str(), ""); !v.empty() && !ParseSize(v, p)) {
      std::fprintf(stderr, "llmserve make-model: --%s wants a non-negative integer, got '%s'\n", k.c_str(), v.c_str());
      return 2;
    }
  }
  for (const auto& [k, p] : reals) {
    if (auto v = take(k.c_str(), ""); !v.empty() && !ParseDouble(v, p)) {
      std::fprintf(stderr, "llmserve make-model: --%s wants a number, got '%s'\n", k.c_str(), v.c_str());
      return 2;
    }
  }
  size_t seed = spec.seed;
  if (auto v = take("seed", ""); !v.empty() && !ParseSize(v, &seed)) {
    std::fprintf(stderr, "llmserve make-model: --seed wants a non-negative integer\n");
    return 2;
  }
  spec.seed = seed;
  spec.dtype = take("dtype", spec.dtype);
  spec.rope_scaling_json = take("rope-scaling", "");
  spec.tokenizer_dir = take("tokenizer-dir", "");
  const std::string tie = take("tie", spec.tie_word_embeddings ? "true" : "false");
  if (tie != "true" && tie != "false") {
    std::fprintf(stderr, "llmserve make-model: --tie wants true or false\n");
    return 2;
  }
  spec.tie_word_embeddings = tie == "true";
  const std::string norm_topk = take("norm-topk-prob", spec.norm_topk_prob ? "true" : "false");
  if (norm_topk != "true" && norm_topk != "false") {
    std::fprintf(stderr, "llmserve make-model: --norm-topk-prob wants true or false\n");
    return 2;
  }
  spec.norm_topk_prob = norm_topk == "true";
  const std::string format = take("format", "safetensors");
  auto gguf_type = worker::ParseGgufWeightType(take("gguf-type", "f16"));
  if ((format != "safetensors" && format != "gguf" && format != "compressed-tensors" && format != "gptq" &&
       format != "awq") ||
      !gguf_type.ok()) {
    std::fprintf(stderr, "llmserve make-model: %s\n",
                 gguf_type.ok() ? "--format wants safetensors, gguf, compressed-tensors, gptq or awq"
                                : gguf_type.status().message().c_str());
    return 2;
  }
  size_t group_size = 128;
  if (auto v = take("group-size", ""); !v.empty() && !ParseSize(v, &group_size)) {
    std::fprintf(stderr, "llmserve make-model: --group-size wants a positive integer\n");
    return 2;
  }
  if (!opts.empty()) {
    std::fprintf(stderr, "llmserve make-model: unknown option --%s\n%s", opts.begin()->first.c_str(), kMakeModelUsage);
    return 2;
  }
  const Status st = format == "gguf"                 ? worker::WriteGgufTestModel(spec, *gguf_type, out)
                    : format == "safetensors"        ? worker::WriteTestModel(spec, out)
                                                     : WriteQuantizedTestModel(spec, format, group_size, out);
  if (!st.ok()) {
    std::fprintf(stderr, "llmserve make-model: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s (%s, %zu layers, hidden %zu, vocab %zu, %s)\n", out.c_str(), spec.arch.c_str(),
              spec.num_layers, spec.hidden_size, spec.vocab_size,
              format == "gguf"                 ? ("GGUF " + common::gguf::GgmlTypeName(*gguf_type)).c_str()
              : format == "compressed-tensors" ? "compressed-tensors W8A8 int8"
              : format == "gptq"               ? "GPTQ 4-bit"
              : format == "awq"                ? "AWQ 4-bit"
                                               : spec.dtype.c_str());
  return 0;
}

}  // namespace llmserve::deploy
