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
    "usage: llmserve make-model --out DIR [--preset tiny|qwen3-0.6b|qwen3-8b|qwen3-30b-a3b|deepseek-v3]\n"
    "         [--arch qwen3|llama|mistral|qwen2|qwen3_moe|mixtral|deepseek_v2|deepseek_v3]\n"
    "         [--seed N] [--std X] [--norm-jitter X] [--dtype bf16|f16|f32] [--shards N]\n"
    "         [--layers N] [--hidden N] [--heads N] [--kv-heads N] [--head-dim N] [--intermediate N]\n"
    "         [--vocab N] [--max-pos N] [--rope-theta X] [--rope-scaling JSON] [--sliding-window N]\n"
    "         [--tie true|false] [--tokenizer-dir DIR]\n"
    "         [--experts N] [--experts-per-tok N] [--moe-intermediate N] [--norm-topk-prob true|false]\n"
    "         [--decoder-sparse-step N]\n"
    "         [--q-lora-rank N] [--kv-lora-rank N] [--qk-nope-head-dim N] [--qk-rope-head-dim N]\n"
    "         [--v-head-dim N] [--shared-experts N] [--first-k-dense N] [--n-group N] [--topk-group N]\n"
    "         [--routed-scaling-factor X]\n"
    "         [--format safetensors|gguf|compressed-tensors|w4a16|compressed-tensors-fp8|gptq|awq|fp8|config]\n"
    "         [--group-size N]\n"
    "         [--desc-act true|false]\n"
    "         [--gguf-type f32|f16|bf16|q8_0|q4_0|q4_1|q5_0|q5_1|q4_k|q5_k|q6_k|q4_k_m|q5_k_m]\n"
    "Writes config.json, generation_config.json, safetensors (random weights; each tensor depends only\n"
    "on the seed and its name) and the real Qwen3 tokenizer (tokenizer.json, tokenizer_config.json from\n"
    "share/llmserve/demo-tokenizer beside the binaries unless --tokenizer-dir is given).\n"
    "Presets: tiny (hidden 64, 2 layers, 4 heads, 2 KV heads, head_dim 16, intermediate 128,\n"
    "vocab 151936; the default), qwen3-0.6b (hidden 1024, 28 layers, 16 heads, 8 KV heads,\n"
    "head_dim 128, intermediate 3072, vocab 151936, tied embeddings) and qwen3-8b (hidden 4096,\n"
    "36 layers, 32 heads, 8 KV heads, head_dim 128, intermediate 12288, vocab 151936, untied).\n"
    "The mixture-of-experts arches (qwen3_moe, mixtral) add 8 experts, 2 per token (qwen3_moe\n"
    "experts 32 wide; mixtral's are --intermediate wide); qwen3-30b-a3b (--arch qwen3_moe) is Qwen3-30B-A3B's shape: hidden 2048,\n"
    "48 layers, 32 heads, 4 KV heads, 128 experts of width 768, 8 per token, untied; each layer holds\n"
    "about 1.2 GB of bf16 experts, so take a slice with --layers N.\n"
    "deepseek_v2 / deepseek_v3 write DeepSeek's multi-head latent attention (tiny: q LoRA rank 32, 0 for\n"
    "q_proj; KV latent 32, nope 16, rotary 8, value 16 per head) and experts (8 routed, 2 per token, 32\n"
    "wide, --shared-experts 1, --first-k-dense 1 dense layers, 4 groups of which 2 eligible; V2 scores\n"
    "by softmax, V3 by sigmoid with a random e_score_correction_bias); deepseek-v3 (--arch deepseek_v3)\n"
    "is DeepSeek-V3's shape: hidden 7168, 128 heads, q LoRA 1536, latent 512, rotary 64, 256 experts of\n"
    "width 2048, 8 per token, 1 shared, 3 dense layers: take a slice with --layers N.\n"
    "--format gguf writes one model.gguf of --gguf-type (q4_k_m / q5_k_m: llama.cpp's mixtures, Q6_K\n"
    "for attn_v and ffn_down of some layers and for the output layer); --format compressed-tensors writes a\n"
    "compressed-tensors W8A8 int8 checkpoint (the decoder layers' linear weights as int8 with one\n"
    "scale per output channel, config.json's quantization_config saying so); --format gptq|awq a GPTQ\n"
    "or AWQ (GEMM layout) 4-bit checkpoint (rounded to nearest per output row and group of\n"
    "--group-size input columns, default 128, a multiple of 32 dividing every layer's in_features;\n"
    "with --desc-act true, GPTQ's act-order: each group takes its columns in a shuffled order, g_idx\n"
    "saying where each column went); --format w4a16 a compressed-tensors W4A16 checkpoint\n"
    "(pack-quantized, symmetric 4-bit groups of --group-size; --desc-act true: actorder \"group\");\n"
    "--format compressed-tensors-fp8 a compressed-tensors FP8 checkpoint (float-quantized, E4M3\n"
    "weights with one scale per output channel, dynamic activations, as *-FP8-dynamic models ship);\n"
    "--format config writes no weights, only the config and tokenizer files: a model to serve with\n"
    "--load-format dummy (random weights made at load) without writing a large checkpoint;\n"
    "--format fp8 an FP8 E4M3 checkpoint as vLLM's fp8 method reads it (blocks of --group-size ×\n"
    "--group-size weights with one F32 scale each, default 128 as Qwen3-FP8; 0: one scale per tensor).\n";

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

// The model of `spec` written as a compressed-tensors W8A8 int8, W4A16 or FP8,
// GPTQ, AWQ or FP8 checkpoint (`format`), through a float copy in OUT/.hf-staging.
Status WriteQuantizedTestModel(const worker::TestModelSpec& spec, const std::string& format, size_t group_size,
                               bool desc_act, const std::string& out) {
  const std::string staging = out + "/.hf-staging";
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);
  Status st = worker::WriteTestModel(spec, staging);
  if (st.ok()) {
    st = format == "gptq"    ? worker::ExportGptq(staging, group_size, out, desc_act)
         : format == "w4a16" ? worker::ExportCompressedTensorsW4A16(staging, group_size, true, out, desc_act)
         : format == "compressed-tensors-fp8" ? worker::ExportCompressedTensorsFp8(staging, out)
         : format == "awq" ? worker::ExportAwq(staging, group_size, out)
         : format == "fp8" ? worker::ExportFp8(staging, group_size, out)
                           : worker::ExportCompressedTensorsInt8(staging, out);
  }
  std::filesystem::remove_all(staging, ec);
  return st;
}


// The options left to read, `--name value` with '_' spelt '-'; each Take
// removes one, so what is left at the end is unknown.
class MakeModelOptions {
 public:
  explicit MakeModelOptions(std::map<std::string, std::string> opts) : opts_(std::move(opts)) {}

  std::string Take(const std::string& key, std::string fallback) {
    auto it = opts_.find(key);
    if (it == opts_.end()) return fallback;
    std::string v = std::move(it->second);
    opts_.erase(it);
    return v;
  }
  Status TakeSize(const std::string& key, size_t* out) {
    const std::string v = Take(key, "");
    if (v.empty() || ParseSize(v, out)) return Status::Ok();
    return Status::InvalidArgument("--" + key + " wants a non-negative integer, got '" + v + "'");
  }
  Status TakeReal(const std::string& key, double* out) {
    const std::string v = Take(key, "");
    if (v.empty() || ParseDouble(v, out)) return Status::Ok();
    return Status::InvalidArgument("--" + key + " wants a number, got '" + v + "'");
  }
  Status TakeBool(const std::string& key, bool* out) {
    const std::string v = Take(key, *out ? "true" : "false");
    if (v != "true" && v != "false") return Status::InvalidArgument("--" + key + " wants true or false");
    *out = v == "true";
    return Status::Ok();
  }
  Status CheckAllTaken() const {
    if (opts_.empty()) return Status::Ok();
    return Status::InvalidArgument("unknown option --" + opts_.begin()->first);
  }

 private:
  std::map<std::string, std::string> opts_;
};

// Reads argv into `opts`; returns an exit code when the command is done
// (--help, a malformed argument), -1 to go on.
int ReadArguments(int argc, char** argv, std::map<std::string, std::string>* opts) {
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
    (*opts)[a] = value;
  }
  return -1;
}

// The shape and initialisation options, applied to a preset's spec.
Status TakeSpecOptions(MakeModelOptions& opts, worker::TestModelSpec* spec) {
  const std::map<std::string, size_t*> sizes = {
      {"shards", &spec->num_shards},        {"layers", &spec->num_layers},       {"hidden", &spec->hidden_size},
      {"heads", &spec->num_heads},          {"kv-heads", &spec->num_kv_heads},   {"head-dim", &spec->head_dim},
      {"intermediate", &spec->intermediate_size}, {"vocab", &spec->vocab_size},
      {"max-pos", &spec->max_position_embeddings}, {"sliding-window", &spec->sliding_window},
      {"experts", &spec->num_experts}, {"experts-per-tok", &spec->num_experts_per_tok},
      {"moe-intermediate", &spec->moe_intermediate_size}, {"decoder-sparse-step", &spec->decoder_sparse_step},
      {"q-lora-rank", &spec->q_lora_rank}, {"kv-lora-rank", &spec->kv_lora_rank},
      {"qk-nope-head-dim", &spec->qk_nope_head_dim}, {"qk-rope-head-dim", &spec->qk_rope_head_dim},
      {"v-head-dim", &spec->v_head_dim}, {"shared-experts", &spec->n_shared_experts},
      {"first-k-dense", &spec->first_k_dense_replace}, {"n-group", &spec->n_group},
      {"topk-group", &spec->topk_group}};
  const std::map<std::string, double*> reals = {{"std", &spec->std},
                                                {"norm-jitter", &spec->norm_jitter},
                                                {"rope-theta", &spec->rope_theta},
                                                {"routed-scaling-factor", &spec->routed_scaling_factor}};
  for (const auto& [k, p] : sizes) LLMSERVE_RETURN_IF_ERROR(opts.TakeSize(k, p));
  for (const auto& [k, p] : reals) LLMSERVE_RETURN_IF_ERROR(opts.TakeReal(k, p));
  size_t seed = spec->seed;
  LLMSERVE_RETURN_IF_ERROR(opts.TakeSize("seed", &seed));
  spec->seed = seed;
  spec->dtype = opts.Take("dtype", spec->dtype);
  spec->rope_scaling_json = opts.Take("rope-scaling", "");
  spec->tokenizer_dir = opts.Take("tokenizer-dir", "");
  LLMSERVE_RETURN_IF_ERROR(opts.TakeBool("tie", &spec->tie_word_embeddings));
  return opts.TakeBool("norm-topk-prob", &spec->norm_topk_prob);
}

// How the weights are written: --format, --gguf-type, --group-size.
struct OutputFormat {
  std::string format = "safetensors";
  worker::GgufWeightTypes gguf_types{common::gguf::GgmlType::kF16};
  size_t group_size = 128;
  bool desc_act = false;

  std::string Describe(const worker::TestModelSpec& spec) const {
    if (format == "gguf") return "GGUF " + worker::GgufWeightTypesName(gguf_types);
    if (format == "compressed-tensors") return "compressed-tensors W8A8 int8";
    if (format == "gptq") return desc_act ? "GPTQ 4-bit, act-order" : "GPTQ 4-bit";
    if (format == "w4a16") return desc_act ? "compressed-tensors W4A16, act-order" : "compressed-tensors W4A16";
    if (format == "compressed-tensors-fp8") return "compressed-tensors FP8 (channel scales)";
    if (format == "awq") return "AWQ 4-bit";
    if (format == "fp8") return "FP8 E4M3";
    if (format == "config") return "no weights: serve with --load-format dummy";
    return spec.dtype;
  }
};

Status TakeOutputFormat(MakeModelOptions& opts, OutputFormat* out) {
  out->format = opts.Take("format", out->format);
  if (out->format != "safetensors" && out->format != "gguf" && out->format != "compressed-tensors" &&
      out->format != "w4a16" && out->format != "compressed-tensors-fp8" && out->format != "gptq" &&
      out->format != "awq" && out->format != "fp8" && out->format != "config") {
    return Status::InvalidArgument("--format wants safetensors, gguf, compressed-tensors, w4a16, "
                                   "compressed-tensors-fp8, gptq, awq, fp8 or config");
  }
  LLMSERVE_ASSIGN_OR_RETURN(out->gguf_types, worker::ParseGgufWeightTypes(opts.Take("gguf-type", "f16")));
  LLMSERVE_RETURN_IF_ERROR(opts.TakeBool("desc-act", &out->desc_act));
  if (out->desc_act && out->format != "gptq" && out->format != "w4a16")
    return Status::InvalidArgument("--desc-act is for --format gptq or w4a16");
  return opts.TakeSize("group-size", &out->group_size);
}

Status WriteModel(const worker::TestModelSpec& spec, const OutputFormat& format, const std::string& out) {
  if (format.format == "gguf") return worker::WriteGgufTestModel(spec, format.gguf_types, out);
  if (format.format == "safetensors") return worker::WriteTestModel(spec, out);
  if (format.format == "config") return worker::WriteTestModel(spec, out, /*with_weights=*/false);
  return WriteQuantizedTestModel(spec, format.format, format.group_size, format.desc_act, out);
}

}  // namespace

int RunMakeModelCommand(int argc, char** argv) {
  std::map<std::string, std::string> args;
  if (const int rc = ReadArguments(argc, argv, &args); rc >= 0) return rc;
  if (args.count("lora-adapter") != 0) return RunMakeLoraAdapter(std::move(args));
  MakeModelOptions opts(std::move(args));
  const std::string out = opts.Take("out", "");
  if (out.empty()) {
    std::fprintf(stderr, "llmserve make-model: --out DIR is required\n%s", kMakeModelUsage);
    return 2;
  }
  auto spec = worker::TestModelPreset(opts.Take("preset", "tiny"), opts.Take("arch", "qwen3"));
  OutputFormat format;
  Status st = spec.status();
  if (st.ok()) st = TakeSpecOptions(opts, &*spec);
  if (st.ok()) st = TakeOutputFormat(opts, &format);
  if (st.ok()) st = opts.CheckAllTaken();
  if (!st.ok()) {
    std::fprintf(stderr, "llmserve make-model: %s\n", st.message().c_str());
    if (st.message().rfind("unknown option", 0) == 0) std::fputs(kMakeModelUsage, stderr);
    return 2;
  }
  if (st = WriteModel(*spec, format, out); !st.ok()) {
    std::fprintf(stderr, "llmserve make-model: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("wrote %s (%s, %zu layers, hidden %zu, vocab %zu, %s)\n", out.c_str(), spec->arch.c_str(),
              spec->num_layers, spec->hidden_size, spec->vocab_size, format.Describe(*spec).c_str());
  return 0;
}

}  // namespace llmserve::deploy
