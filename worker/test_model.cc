#include "worker/test_model.h"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <filesystem>
#include <fstream>
#include <map>

#include "kernels/cpu/linear.h"
#include "worker/random_weights.h"
#include "worker/safetensors_writer.h"

namespace llmserve::worker {

namespace fs = std::filesystem;

namespace {

constexpr const char* kArches = "qwen3, llama, mistral, qwen2, qwen3_moe, mixtral, deepseek_v2, deepseek_v3";

bool IsDeepseek(const std::string& a) { return a == "deepseek_v2" || a == "deepseek_v3"; }

bool KnownArch(const std::string& a) {
  return a == "qwen3" || a == "llama" || a == "mistral" || a == "qwen2" || a == "qwen3_moe" || a == "mixtral" ||
         IsDeepseek(a);
}

bool IsMoeArch(const std::string& a) { return a == "qwen3_moe" || a == "mixtral" || IsDeepseek(a); }

// Whether layer l of a spec is a mixture of experts (Hugging Face's rule).
bool IsMoeLayer(const TestModelSpec& s, size_t l) {
  if (s.arch == "mixtral") return true;
  if (IsDeepseek(s.arch)) return l >= s.first_k_dense_replace;
  if (s.arch != "qwen3_moe" || (l + 1) % s.decoder_sparse_step != 0) return false;
  return std::find(s.mlp_only_layers.begin(), s.mlp_only_layers.end(), l) == s.mlp_only_layers.end();
}

}  // namespace

StatusOr<TestModelSpec> TestModelPreset(const std::string& preset, const std::string& arch) {
  if (!KnownArch(arch)) return Status::InvalidArgument("unknown arch '" + arch + "' (" + kArches + ")");
  TestModelSpec s;
  s.arch = arch;
  if (preset == "tiny") return s;
  if (preset == "qwen3-30b-a3b") {
    if (arch != "qwen3_moe") return Status::InvalidArgument("preset qwen3-30b-a3b is --arch qwen3_moe");
    s.hidden_size = 2048;
    s.num_layers = 48;
    s.num_heads = 32;
    s.num_kv_heads = 4;
    s.head_dim = 128;
    s.intermediate_size = 6144;
    s.num_experts = 128;
    s.num_experts_per_tok = 8;
    s.moe_intermediate_size = 768;
    s.vocab_size = 151936;
    s.tie_word_embeddings = false;
    return s;
  }
  if (preset == "deepseek-v3") {
    if (arch != "deepseek_v3") return Status::InvalidArgument("preset deepseek-v3 is --arch deepseek_v3");
    s.hidden_size = 7168;
    s.num_layers = 61;
    s.num_heads = 128;
    s.num_kv_heads = 128;
    s.intermediate_size = 18432;
    s.q_lora_rank = 1536;
    s.kv_lora_rank = 512;
    s.qk_nope_head_dim = 128;
    s.qk_rope_head_dim = 64;
    s.v_head_dim = 128;
    s.num_experts = 256;
    s.num_experts_per_tok = 8;
    s.moe_intermediate_size = 2048;
    s.n_shared_experts = 1;
    s.first_k_dense_replace = 3;
    s.n_group = 8;
    s.topk_group = 4;
    s.routed_scaling_factor = 2.5;
    s.vocab_size = 151936;
    s.tie_word_embeddings = false;
    return s;
  }
  if (preset == "qwen3-8b") {
    s.hidden_size = 4096;
    s.num_layers = 36;
    s.num_heads = 32;
    s.num_kv_heads = 8;
    s.head_dim = 128;
    s.intermediate_size = 12288;
    s.vocab_size = 151936;
    s.tie_word_embeddings = false;
    return s;
  }
  if (preset == "qwen3-0.6b") {
    s.hidden_size = 1024;
    s.num_layers = 28;
    s.num_heads = 16;
    s.num_kv_heads = 8;
    s.head_dim = 128;
    s.intermediate_size = 3072;
    s.vocab_size = 151936;
    return s;
  }
  return Status::InvalidArgument("unknown preset '" + preset +
                                 "' (tiny, qwen3-0.6b, qwen3-8b, qwen3-30b-a3b, deepseek-v3)");
}

StatusOr<std::string> FindDemoTokenizerDir() {
  auto has = [](const fs::path& d) {
    std::error_code ec;
    return fs::exists(d / "tokenizer.json", ec) && fs::exists(d / "tokenizer_config.json", ec);
  };
  if (const char* env = std::getenv("LLMSERVE_TOKENIZER_DIR"); env != nullptr && *env) {
    if (has(env)) return std::string(env);
    return Status::NotFound(std::string("LLMSERVE_TOKENIZER_DIR=") + env + " has no tokenizer.json");
  }
  // Installed: <prefix>/bin/x and <prefix>/share/llmserve/demo-tokenizer; in
  // the build tree: build/bin/x (or build/tests/...) and build/share/....
  const fs::path rel = fs::path("share") / "llmserve" / "demo-tokenizer";
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path d = exe.parent_path(); !ec && !d.empty(); d = d.parent_path()) {
    if (has(d / rel)) return (d / rel).string();
    if (d == d.parent_path()) break;
  }
  return Status::NotFound("cannot find share/llmserve/demo-tokenizer above " + exe.parent_path().string() +
                          " (it is built and installed with the binaries; or set LLMSERVE_TOKENIZER_DIR, "
                          "or pass the tokenizer directory)");
}


namespace {

// The safetensors dtype of `s.dtype`.
StatusOr<std::string> SafetensorsDtype(const std::string& dtype) {
  if (dtype == "bf16") return std::string("BF16");
  if (dtype == "f16") return std::string("F16");
  if (dtype == "f32") return std::string("F32");
  return Status::InvalidArgument("unknown weight dtype '" + dtype + "' (bf16, f16, f32)");
}

// Copies tokenizer.json and tokenizer_config.json from `tok_dir` to `out_dir`.
Status CopyTokenizer(const std::string& tok_dir, const std::string& out_dir) {
  std::error_code ec;
  for (const char* f : {"tokenizer.json", "tokenizer_config.json"}) {
    fs::copy_file(fs::path(tok_dir) / f, fs::path(out_dir) / f, fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::NotFound((fs::path(tok_dir) / f).string() + ": " + ec.message());
  }
  return Status::Ok();
}

// DeepSeek's attention tensors under `p` (…self_attn.), but o_proj.
template <typename Add>
void AddMlaTensors(const TestModelSpec& s, const std::string& p, Add& add) {
  const size_t h = s.hidden_size, qk = s.qk_nope_head_dim + s.qk_rope_head_dim;
  if (s.q_lora_rank > 0) {
    add(p + "q_a_proj.weight", {s.q_lora_rank, h}, false);
    add(p + "q_a_layernorm.weight", {s.q_lora_rank}, true);
    add(p + "q_b_proj.weight", {s.num_heads * qk, s.q_lora_rank}, false);
  } else {
    add(p + "q_proj.weight", {s.num_heads * qk, h}, false);
  }
  add(p + "kv_a_proj_with_mqa.weight", {s.kv_lora_rank + s.qk_rope_head_dim, h}, false);
  add(p + "kv_a_layernorm.weight", {s.kv_lora_rank}, true);
  add(p + "kv_b_proj.weight", {s.num_heads * (s.qk_nope_head_dim + s.v_head_dim), s.kv_lora_rank}, false);
}

// Every weight of the checkpoint in Hugging Face naming, each filled on write
// with normals seeded by (spec seed, tensor name): N(0, std²) for matrices and
// biases, N(1, norm_jitter²) for norms.
std::vector<TensorToWrite> RandomTensors(const TestModelSpec& s, const std::string& st_dtype) {
  const size_t h = s.hidden_size, hd = s.head_dim, ff = s.intermediate_size;
  const size_t q = s.num_heads * hd, kv = s.num_kv_heads * hd;
  std::vector<TensorToWrite> tensors;
  auto add = [&](const std::string& name, std::vector<size_t> shape, bool is_norm, const std::string& dtype = "") {
    TensorToWrite t;
    t.name = name;
    t.shape = shape;
    t.dtype = dtype.empty() ? st_dtype : dtype;
    size_t n = 1;
    for (size_t d : shape) n *= d;
    const double mean = is_norm ? 1.0 : 0.0, std = is_norm ? s.norm_jitter : s.std;
    const uint64_t seed = s.seed;
    const std::string t_dtype = t.dtype;
    t.fill = [=](uint8_t* out) {
      std::vector<float> v(n);
      Normals(seed, name, mean, std, n, v.data());
      Encode(v, t_dtype, out);
    };
    tensors.push_back(std::move(t));
  };
  add("model.embed_tokens.weight", {s.vocab_size, h}, false);
  for (size_t i = 0; i < s.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    add(p + "input_layernorm.weight", {h}, true);
    if (IsDeepseek(s.arch)) {
      AddMlaTensors(s, p + "self_attn.", add);
    } else {
      add(p + "self_attn.q_proj.weight", {q, h}, false);
      add(p + "self_attn.k_proj.weight", {kv, h}, false);
      add(p + "self_attn.v_proj.weight", {kv, h}, false);
    }
    if (s.arch == "qwen2") {
      add(p + "self_attn.q_proj.bias", {q}, false);
      add(p + "self_attn.k_proj.bias", {kv}, false);
      add(p + "self_attn.v_proj.bias", {kv}, false);
    }
    add(p + "self_attn.o_proj.weight", {h, IsDeepseek(s.arch) ? s.num_heads * s.v_head_dim : q}, false);
    if (s.kv_cache_scale != 0) {
      for (const auto& scale : {std::pair{"k_scale", s.kv_cache_scale}, {"v_scale", 2 * s.kv_cache_scale}}) {
        TensorToWrite t;
        t.name = p + "self_attn." + scale.first;
        t.dtype = "F32";
        const float value = scale.second;
        t.fill = [value](uint8_t* out) { std::memcpy(out, &value, sizeof value); };
        tensors.push_back(std::move(t));
      }
    }
    if (s.arch == "qwen3" || s.arch == "qwen3_moe") {
      add(p + "self_attn.q_norm.weight", {hd}, true);
      add(p + "self_attn.k_norm.weight", {hd}, true);
    }
    add(p + "post_attention_layernorm.weight", {h}, true);
    if (IsMoeLayer(s, i)) {
      const bool mixtral = s.arch == "mixtral";
      const std::string m = p + (mixtral ? "block_sparse_moe." : "mlp.");
      const size_t eff = mixtral ? ff : s.moe_intermediate_size;
      add(m + "gate.weight", {s.num_experts, h}, false);
      if (s.arch == "deepseek_v3") add(m + "gate.e_score_correction_bias", {s.num_experts}, false, "F32");
      if (IsDeepseek(s.arch) && s.n_shared_experts > 0) {
        const size_t sff = s.n_shared_experts * eff;
        add(m + "shared_experts.gate_proj.weight", {sff, h}, false);
        add(m + "shared_experts.up_proj.weight", {sff, h}, false);
        add(m + "shared_experts.down_proj.weight", {h, sff}, false);
      }
      for (size_t e = 0; e < s.num_experts; ++e) {
        const std::string x = m + "experts." + std::to_string(e) + ".";
        add(x + (mixtral ? "w1" : "gate_proj") + ".weight", {eff, h}, false);
        add(x + (mixtral ? "w3" : "up_proj") + ".weight", {eff, h}, false);
        add(x + (mixtral ? "w2" : "down_proj") + ".weight", {h, eff}, false);
      }
      continue;
    }
    add(p + "mlp.gate_proj.weight", {ff, h}, false);
    add(p + "mlp.up_proj.weight", {ff, h}, false);
    add(p + "mlp.down_proj.weight", {h, ff}, false);
  }
  add("model.norm.weight", {h}, true);
  if (!s.tie_word_embeddings) add("lm_head.weight", {s.vocab_size, h}, false);
  return tensors;
}

// DeepSeek's attention and expert keys of config.json.
void AddDeepseekConfig(const TestModelSpec& s, nlohmann::ordered_json& c) {
  const bool v3 = s.arch == "deepseek_v3";
  c["num_key_value_heads"] = s.num_heads;
  c["head_dim"] = s.qk_rope_head_dim;
  c["q_lora_rank"] = s.q_lora_rank > 0 ? nlohmann::ordered_json(s.q_lora_rank) : nlohmann::ordered_json();
  c["kv_lora_rank"] = s.kv_lora_rank;
  c["qk_nope_head_dim"] = s.qk_nope_head_dim;
  c["qk_rope_head_dim"] = s.qk_rope_head_dim;
  c["v_head_dim"] = s.v_head_dim;
  c["n_routed_experts"] = s.num_experts;
  c["n_shared_experts"] = s.n_shared_experts;
  c["num_experts_per_tok"] = s.num_experts_per_tok;
  c["moe_intermediate_size"] = s.moe_intermediate_size;
  c["first_k_dense_replace"] = s.first_k_dense_replace;
  c["moe_layer_freq"] = 1;
  c["n_group"] = s.n_group;
  c["topk_group"] = s.topk_group;
  c["topk_method"] = v3 ? "noaux_tc" : s.n_group > 1 ? "group_limited_greedy" : "greedy";
  c["scoring_func"] = v3 ? "sigmoid" : "softmax";
  c["norm_topk_prob"] = s.norm_topk_prob;
  c["routed_scaling_factor"] = s.routed_scaling_factor;
  if (v3) c["rope_interleave"] = true;
}

// config.json of the checkpoint.
nlohmann::ordered_json ConfigJson(const TestModelSpec& s, const nlohmann::json& rope_scaling) {
  static const std::map<std::string, std::string> kClass = {
      {"qwen3", "Qwen3ForCausalLM"},       {"llama", "LlamaForCausalLM"},
      {"mistral", "MistralForCausalLM"},   {"qwen2", "Qwen2ForCausalLM"},
      {"qwen3_moe", "Qwen3MoeForCausalLM"}, {"mixtral", "MixtralForCausalLM"},
      {"deepseek_v2", "DeepseekV2ForCausalLM"}, {"deepseek_v3", "DeepseekV3ForCausalLM"}};
  nlohmann::ordered_json c;
  c["architectures"] = {kClass.at(s.arch)};
  c["model_type"] = s.arch;
  c["torch_dtype"] = s.dtype == "bf16" ? "bfloat16" : s.dtype == "f16" ? "float16" : "float32";
  c["hidden_size"] = s.hidden_size;
  c["num_hidden_layers"] = s.num_layers;
  c["num_attention_heads"] = s.num_heads;
  c["num_key_value_heads"] = s.num_kv_heads;
  c["head_dim"] = s.head_dim;
  c["intermediate_size"] = s.intermediate_size;
  c["vocab_size"] = s.vocab_size;
  c["rms_norm_eps"] = 1e-6;
  c["rope_theta"] = s.rope_theta;
  c["rope_scaling"] = rope_scaling;
  c["max_position_embeddings"] = s.max_position_embeddings;
  c["tie_word_embeddings"] = s.tie_word_embeddings;
  c["attention_bias"] = false;
  c["hidden_act"] = "silu";
  if (s.arch == "mixtral") {
    c["num_local_experts"] = s.num_experts;
    c["num_experts_per_tok"] = s.num_experts_per_tok;
  } else if (s.arch == "qwen3_moe") {
    c["num_experts"] = s.num_experts;
    c["num_experts_per_tok"] = s.num_experts_per_tok;
    c["moe_intermediate_size"] = s.moe_intermediate_size;
    c["norm_topk_prob"] = s.norm_topk_prob;
    c["decoder_sparse_step"] = s.decoder_sparse_step;
    c["mlp_only_layers"] = s.mlp_only_layers;
  } else if (IsDeepseek(s.arch)) {
    AddDeepseekConfig(s, c);
  }
  if (s.arch == "mistral" || s.arch == "mixtral") {
    c["sliding_window"] = s.sliding_window > 0 ? nlohmann::ordered_json(s.sliding_window) : nlohmann::ordered_json();
  } else {
    c["use_sliding_window"] = false;
    c["sliding_window"] = nullptr;
  }
  c["bos_token_id"] = 151643;
  c["eos_token_id"] = 151645;
  c["initializer_range"] = s.std;
  c["_llmserve_random_weights"] = {{"seed", s.seed}, {"std", s.std}, {"norm_jitter", s.norm_jitter}};
  return c;
}

// generation_config.json of the checkpoint (greedy, Qwen3's special tokens).
nlohmann::ordered_json GenerationConfigJson() {
  nlohmann::ordered_json g;
  g["bos_token_id"] = 151643;
  g["eos_token_id"] = {151645, 151643};
  g["pad_token_id"] = 151643;
  g["do_sample"] = false;
  return g;
}

}  // namespace

Status WriteTestModel(const TestModelSpec& s, const std::string& out_dir, bool with_weights) {
  if (!KnownArch(s.arch)) return Status::InvalidArgument("unknown arch '" + s.arch + "' (" + kArches + ")");
  if (IsMoeArch(s.arch) && (s.num_experts == 0 || s.num_experts_per_tok == 0 ||
                            s.num_experts_per_tok > s.num_experts || s.moe_intermediate_size == 0 ||
                            s.decoder_sparse_step == 0)) {
    return Status::InvalidArgument("inconsistent experts (need 1 <= experts per token <= experts, widths > 0)");
  }
  if (IsDeepseek(s.arch) && (s.kv_lora_rank == 0 || s.qk_nope_head_dim == 0 || s.v_head_dim == 0 ||
                             s.qk_rope_head_dim == 0 || s.qk_rope_head_dim % 2 != 0 || s.n_group == 0 ||
                             s.num_experts % s.n_group != 0 || s.topk_group == 0 || s.topk_group > s.n_group)) {
    return Status::InvalidArgument("inconsistent DeepSeek shape (latent, head and rotary dims > 0, rotary even; "
                                   "n_group must divide the experts, topk_group in [1, n_group])");
  }
  std::string st_dtype;
  LLMSERVE_ASSIGN_OR_RETURN(st_dtype, SafetensorsDtype(s.dtype));
  if (s.num_heads == 0 || s.num_kv_heads == 0 || s.num_heads % s.num_kv_heads != 0 || s.head_dim % 2 != 0 ||
      s.hidden_size == 0 || s.num_layers == 0 || s.intermediate_size == 0 || s.vocab_size == 0) {
    return Status::InvalidArgument("inconsistent model shape (heads must be a multiple of kv heads, head_dim even)");
  }
  nlohmann::json rope_scaling = nullptr;
  if (!s.rope_scaling_json.empty()) {
    try {
      rope_scaling = nlohmann::json::parse(s.rope_scaling_json);
    } catch (const std::exception& e) {
      return Status::InvalidArgument(std::string("rope_scaling is not JSON: ") + e.what());
    }
  }
  std::string tok_dir = s.tokenizer_dir;
  if (tok_dir.empty()) {
    LLMSERVE_ASSIGN_OR_RETURN(tok_dir, FindDemoTokenizerDir());
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::Unavailable(out_dir + ": " + ec.message());
  LLMSERVE_RETURN_IF_ERROR(CopyTokenizer(tok_dir, out_dir));
  std::ofstream(fs::path(out_dir) / "config.json") << ConfigJson(s, rope_scaling).dump(2) << "\n";
  std::ofstream(fs::path(out_dir) / "generation_config.json") << GenerationConfigJson().dump(2) << "\n";
  if (!with_weights) return Status::Ok();
  return WriteSafetensors(out_dir, RandomTensors(s, st_dtype), s.num_shards);
}

}  // namespace llmserve::worker
