#include "worker/quantization_config.h"

#include <algorithm>
#include <array>
#include <string_view>

#include <nlohmann/json.hpp>

namespace llmserve::worker {

namespace {

constexpr char kSupported[] =
    "supported: compressed-tensors W8A8 int8, W4A16 and FP8, GPTQ 4-bit, AWQ 4-bit, FP8 E4M3 checkpoints, int8 "
    "(quantize at load), gguf";

// vLLM's --quantization methods this build does not run yet: named as such
// rather than as unknown words.
constexpr std::array<std::string_view, 21> kNotYet = {
    "gptq_marlin_24", "gptq_bitblas", "fbgemm_fp8",   "ptpc_fp8", "modelopt",
    "modelopt_fp4",   "bitsandbytes", "experts_int8", "marlin",      "bitblas",  "deepspeedfp",
    "tpu_int8",       "qqq",          "hqq",          "quark",       "moe_wna16", "torchao",
    "auto-round",     "rtn",          "inc",          "mxfp4"};

bool IsNone(const std::string& flag) { return flag.empty() || flag == "None" || flag == "none"; }

// The JSON value at `key` of `j`, or null.
const nlohmann::json& At(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kNull;
  return j.is_object() && j.contains(key) ? j[key] : kNull;
}

// Checks one quantization-args object ("weights" or "input_activations" of a
// config group) is symmetric 8-bit int with the given strategies and dynamism.
Status CheckArgs(const nlohmann::json& args, const std::string& where, std::initializer_list<const char*> strategies,
                 bool dynamic) {
  if (!args.is_object()) return Status::Unimplemented(where + " is missing (W8A8 int8 needs it)");
  auto bad = [&](const char* key, const std::string& want) {
    return Status::Unimplemented(where + "." + key + " = " + At(args, key).dump() + " is not supported (" + want +
                                 "; " + kSupported + ")");
  };
  if (At(args, "num_bits") != 8) return bad("num_bits", "8 only");
  if (At(args, "type") != "int") return bad("type", "\"int\" only");
  if (At(args, "symmetric") != true) return bad("symmetric", "true only");
  const auto& strategy = At(args, "strategy");
  if (!strategy.is_string() ||
      std::none_of(strategies.begin(), strategies.end(), [&](const char* s) { return strategy == s; })) {
    std::string want;
    for (const char* s : strategies) want += std::string(want.empty() ? "" : " or ") + "\"" + s + "\"";
    return bad("strategy", want);
  }
  if (At(args, "dynamic") != dynamic) return bad("dynamic", dynamic ? "true only" : "false only");
  if (!At(args, "group_size").is_null()) return bad("group_size", "null only");
  const auto& actorder = At(args, "actorder");
  if (!actorder.is_null() && actorder != false) return bad("actorder", "null only");
  return Status::Ok();
}

}  // namespace

const char* QuantizationName(Quantization q) {
  switch (q) {
    case Quantization::kNone: return "none";
    case Quantization::kCompressedTensorsInt8: return "compressed-tensors";
    case Quantization::kCompressedTensorsWna16: return "compressed-tensors";
    case Quantization::kCompressedTensorsFp8: return "compressed-tensors";
    case Quantization::kInt8AtLoad: return "int8";
    case Quantization::kGptq: return "gptq";
    case Quantization::kAwq: return "awq";
    case Quantization::kGguf: return "gguf";
    case Quantization::kFp8: return "fp8";
  }
  return "none";
}

// GPTQ's keys: 4 bits, groups of a multiple of 32 columns (or -1: one per
// row); desc_act either way (the g_idx is read at load).
StatusOr<CheckpointQuantization> ParseGptq(const nlohmann::json& qc, const std::string& where) {
  auto bad = [&](const char* key, const std::string& want) {
    return Status::Unimplemented(where + "." + key + " = " + At(qc, key).dump() + " is not supported (" + want + ")");
  };
  if (At(qc, "bits") != 4) return bad("bits", "4 only");
  const auto& group = At(qc, "group_size");
  if (!group.is_number_integer() || (group != -1 && (group.get<int64_t>() <= 0 || group.get<int64_t>() % 32 != 0)))
    return bad("group_size", "-1 or a positive multiple of 32");
  const auto& format = At(qc, "checkpoint_format");
  if (!format.is_null() && format != "gptq" && format != "gptq_v2") return bad("checkpoint_format", "gptq or gptq_v2");
  CheckpointQuantization q;
  q.method = Quantization::kGptq;
  q.int4.group_size = group == -1 ? 0 : group.get<size_t>();
  q.int4.zero_offset = format == "gptq_v2" ? 0 : 1;
  return q;
}

// AWQ's keys (AutoAWQ writes bits / group_size, older files w_bit /
// q_group_size): 4 bits, zero points, the GEMM layout, groups of a multiple of 32.
StatusOr<CheckpointQuantization> ParseAwq(const nlohmann::json& qc, const std::string& where) {
  auto key = [&](const char* a, const char* b) { return qc.contains(a) ? a : b; };
  auto bad = [&](const char* k, const std::string& want) {
    return Status::Unimplemented(where + "." + k + " = " + At(qc, k).dump() + " is not supported (" + want + ")");
  };
  const char* bits = key("bits", "w_bit");
  const char* group = key("group_size", "q_group_size");
  if (At(qc, bits) != 4) return bad(bits, "4 only");
  const auto& g = At(qc, group);
  if (!g.is_number_integer() || g.get<int64_t>() <= 0 || g.get<int64_t>() % 32 != 0)
    return bad(group, "a positive multiple of 32");
  if (qc.contains("zero_point") && At(qc, "zero_point") != true) return bad("zero_point", "true only");
  const auto& version = At(qc, "version");
  if (!version.is_null() && version != "gemm" && version != "GEMM") return bad("version", "gemm only");
  CheckpointQuantization q;
  q.method = Quantization::kAwq;
  q.int4.packing = Int4Packing::kAwq;
  q.int4.group_size = g.get<size_t>();
  return q;
}

// vLLM's Fp8Config keys for a checkpoint serialized in FP8: E4M3, dynamic
// activations (they stay in the model's float type here), 2-D weight blocks
// or none. ignored_layers / modules_to_not_convert need nothing: those
// layers' tensors are simply not FP8.
StatusOr<CheckpointQuantization> ParseFp8(const nlohmann::json& qc, const std::string& where) {
  auto bad = [&](const char* key, const std::string& want) {
    return Status::Unimplemented(where + "." + key + " = " + At(qc, key).dump() + " is not supported (" + want + ")");
  };
  const auto& fmt = At(qc, "fmt");
  if (!fmt.is_null() && fmt != "e4m3") return bad("fmt", "e4m3 only");
  if (At(qc, "activation_scheme") != "dynamic") return bad("activation_scheme", "dynamic only");
  CheckpointQuantization q;
  q.method = Quantization::kFp8;
  const auto& block = At(qc, "weight_block_size");
  if (block.is_null()) return q;
  if (!block.is_array() || block.size() != 2 || !block[0].is_number_integer() || !block[1].is_number_integer() ||
      block[0].get<int64_t>() <= 0 || block[1].get<int64_t>() <= 0)
    return bad("weight_block_size", "null or two positive integers");
  q.fp8.block_rows = block[0].get<size_t>();
  q.fp8.block_cols = block[1].get<size_t>();
  return q;
}

// compressed-tensors "pack-quantized" (W4A16): one config group of 4-bit int
// weights, per group (a multiple of 32 columns) or per channel, static;
// activations left in float.
StatusOr<CheckpointQuantization> ParseWna16(const nlohmann::json& groups, const std::string& where) {
  if (groups.size() != 1) return Status::Unimplemented(where + ".config_groups: one group only for pack-quantized");
  const std::string group = where + ".config_groups." + groups.begin().key();
  const nlohmann::json& args = At(groups.begin().value(), "weights");
  auto bad = [&](const char* key, const std::string& want) {
    return Status::Unimplemented(group + ".weights." + key + " = " + At(args, key).dump() +
                                 " is not supported with pack-quantized (" + want + "; " + kSupported + ")");
  };
  if (!args.is_object()) return Status::InvalidArgument(group + ".weights is missing");
  if (At(args, "num_bits") != 4) return bad("num_bits", "4 only");
  if (At(args, "type") != "int") return bad("type", "\"int\" only");
  if (At(args, "dynamic") != false) return bad("dynamic", "false only");
  const auto& strategy = At(args, "strategy");
  const auto& size = At(args, "group_size");
  CheckpointQuantization q;
  q.method = Quantization::kCompressedTensorsWna16;
  q.int4.packing = Int4Packing::kPackQuantized;
  q.int4.symmetric = At(args, "symmetric") != false;
  if (strategy == "group") {
    if (!size.is_number_integer() || size.get<int64_t>() <= 0 || size.get<int64_t>() % 32 != 0)
      return bad("group_size", "a positive multiple of 32");
    q.int4.group_size = size.get<size_t>();
  } else if (strategy != "channel") {
    return bad("strategy", "\"group\" or \"channel\"");
  }
  const auto& actorder = At(args, "actorder");
  if (!actorder.is_null() && actorder != false && actorder != "group" && actorder != "weight")
    return bad("actorder", "null, \"group\" or \"weight\"");
  for (const char* other : {"input_activations", "output_activations"}) {
    if (!At(groups.begin().value(), other).is_null())
      return Status::Unimplemented(group + "." + other + " is not supported with pack-quantized (null only)");
  }
  return q;
}

// compressed-tensors "float-quantized" (FP8 W8A8 or W8A16): one config group
// of E4M3 weights with a scale per channel or per tensor; activations
// dynamic (per token or tensor) or none. Activations stay in the model's
// float type, as with vLLM's fp8 method here.
StatusOr<CheckpointQuantization> ParseCompressedFp8(const nlohmann::json& groups, const std::string& where) {
  if (groups.size() != 1) return Status::Unimplemented(where + ".config_groups: one group only for float-quantized");
  const std::string group = where + ".config_groups." + groups.begin().key();
  auto bad = [&](const std::string& at, const nlohmann::json& args, const char* key, const std::string& want) {
    return Status::Unimplemented(at + "." + key + " = " + At(args, key).dump() +
                                 " is not supported with float-quantized (" + want + "; " + kSupported + ")");
  };
  const nlohmann::json& weights = At(groups.begin().value(), "weights");
  const std::string w = group + ".weights";
  if (!weights.is_object()) return Status::InvalidArgument(w + " is missing");
  if (At(weights, "num_bits") != 8) return bad(w, weights, "num_bits", "8 only");
  if (At(weights, "type") != "float") return bad(w, weights, "type", "\"float\" only");
  if (At(weights, "dynamic") != false) return bad(w, weights, "dynamic", "false only");
  const auto& strategy = At(weights, "strategy");
  if (strategy != "channel" && strategy != "tensor") return bad(w, weights, "strategy", "\"channel\" or \"tensor\"");
  const nlohmann::json& input = At(groups.begin().value(), "input_activations");
  const std::string in = group + ".input_activations";
  if (!input.is_null() && At(input, "dynamic") != true)
    return bad(in, input, "dynamic", "true only: static input scales are not applied");
  if (!At(groups.begin().value(), "output_activations").is_null())
    return Status::Unimplemented(group + ".output_activations is not supported (null only)");
  CheckpointQuantization q;
  q.method = Quantization::kCompressedTensorsFp8;
  q.fp8.per_channel = strategy == "channel";
  return q;
}

// compressed-tensors' kv_cache_scheme: null, or static per-tensor fp8 scales
// (self_attn.k_scale / v_scale, which the loader reads and an fp8 KV cache,
// --kv-cache-dtype fp8, applies).
Status CheckKvCacheScheme(const nlohmann::json& scheme, const std::string& where) {
  if (scheme.is_null()) return Status::Ok();
  auto bad = [&](const char* key, const std::string& want) {
    return Status::Unimplemented(where + "." + key + " = " + At(scheme, key).dump() + " is not supported (" + want +
                                 ": static fp8 scales per tensor only)");
  };
  if (At(scheme, "num_bits") != 8) return bad("num_bits", "8");
  if (At(scheme, "type") != "float") return bad("type", "\"float\"");
  if (At(scheme, "strategy") != "tensor") return bad("strategy", "\"tensor\"");
  if (At(scheme, "dynamic") != false) return bad("dynamic", "false");
  return Status::Ok();
}

StatusOr<CheckpointQuantization> ParseQuantizationConfig(const nlohmann::json& qc, const std::string& source) {
  const std::string where = source + ": quantization_config";
  if (!qc.is_object()) return Status::InvalidArgument(where + " is not an object");
  const auto& method = At(qc, "quant_method");
  if (method == "gptq") return ParseGptq(qc, where);
  if (method == "awq") return ParseAwq(qc, where);
  if (method == "fp8") return ParseFp8(qc, where);
  if (method != "compressed-tensors") {
    return Status::Unimplemented(where + ".quant_method " + method.dump() + " is not supported yet (" + kSupported +
                                 ")");
  }
  const auto& format = At(qc, "format");
  if (format != "int-quantized" && format != "pack-quantized" && format != "float-quantized") {
    return Status::Unimplemented(where + ".format " + format.dump() +
                                 " is not supported yet (int-quantized W8A8 int8, pack-quantized W4A16 or "
                                 "float-quantized FP8 only; " + kSupported + ")");
  }
  LLMSERVE_RETURN_IF_ERROR(CheckKvCacheScheme(At(qc, "kv_cache_scheme"), where + ".kv_cache_scheme"));
  const auto& groups = At(qc, "config_groups");
  if (!groups.is_object() || groups.empty()) return Status::InvalidArgument(where + ".config_groups is missing");
  if (format == "pack-quantized") return ParseWna16(groups, where);
  if (format == "float-quantized") return ParseCompressedFp8(groups, where);
  for (auto it = groups.begin(); it != groups.end(); ++it) {
    const std::string group = where + ".config_groups." + it.key();
    LLMSERVE_RETURN_IF_ERROR(CheckArgs(At(it.value(), "weights"), group + ".weights", {"channel", "tensor"}, false));
    LLMSERVE_RETURN_IF_ERROR(
        CheckArgs(At(it.value(), "input_activations"), group + ".input_activations", {"token"}, true));
    if (!At(it.value(), "output_activations").is_null()) {
      return Status::Unimplemented(group + ".output_activations is not supported (null only)");
    }
  }
  CheckpointQuantization q;
  q.method = Quantization::kCompressedTensorsInt8;
  return q;
}

Status ValidateQuantizationFlag(const std::string& flag) {
  if (IsNone(flag) || flag == "compressed-tensors" || flag == "int8" || flag == "gguf" || flag == "gptq" ||
      flag == "gptq_marlin" || flag == "awq" || flag == "awq_marlin" || flag == "fp8")
    return Status::Ok();
  if (std::find(kNotYet.begin(), kNotYet.end(), flag) != kNotYet.end()) {
    return Status::Unimplemented("--quantization " + flag + " is not supported yet (" + kSupported + ")");
  }
  return Status::InvalidArgument("--quantization " + flag + " is not a quantization method (" + kSupported + ")");
}

StatusOr<Quantization> ResolveQuantization(const std::string& flag, Quantization checkpoint) {
  LLMSERVE_RETURN_IF_ERROR(ValidateQuantizationFlag(flag));
  if (IsNone(flag)) return checkpoint;
  // gptq_marlin and awq_marlin are vLLM's names for the checkpoints its
  // Marlin kernels run.
  const Quantization wanted = flag == "int8"                              ? Quantization::kInt8AtLoad
                              : flag == "gguf"                            ? Quantization::kGguf
                              : flag == "gptq" || flag == "gptq_marlin" ? Quantization::kGptq
                              : flag == "awq" || flag == "awq_marlin"   ? Quantization::kAwq
                              : flag == "fp8"                             ? Quantization::kFp8
                                                                          : Quantization::kCompressedTensorsInt8;
  if (wanted == Quantization::kInt8AtLoad) {
    if (checkpoint == Quantization::kNone) return wanted;
    return Status::InvalidArgument(std::string("--quantization int8 quantizes a float checkpoint at load, but this "
                                               "model is already quantized (") +
                                   QuantizationName(checkpoint) + ")");
  }
  if (wanted == Quantization::kCompressedTensorsInt8 &&
      (checkpoint == Quantization::kCompressedTensorsWna16 || checkpoint == Quantization::kCompressedTensorsFp8))
    return checkpoint;  // --quantization compressed-tensors names every format
  if (wanted != checkpoint) {
    return Status::InvalidArgument("--quantization " + flag + " does not match the model, which is " +
                                   (checkpoint == Quantization::kNone ? std::string("not quantized")
                                                                      : std::string(QuantizationName(checkpoint))));
  }
  return wanted;
}

}  // namespace llmserve::worker
