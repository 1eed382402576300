#pragma once
// Decoders (tokenizer.json "decoder"): turn the token strings of a sequence of
// ids back into text, with the semantics of Hugging Face tokenizers (Rust).
// Supported types: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace,
// Sequence.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/tokenizer/json_context.h"
#include "base/status_or.h"

namespace llmserve::common::tokenizer {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites the token strings in place (a decoder may merge them); the
  // decoded text is their concatenation.
  virtual void DecodeChain(std::vector<std::string>* tokens) const = 0;
  // Rewrites one token into the raw bytes it stands for in the middle of a
  // sequence: only the per-token parts of decoding (byte-level mapping, "▁" to
  // space, "<0xAB>" to a byte), no UTF-8 repair and no start-of-text stripping.
  virtual void TokenBytes(std::string* /*token*/) const {}
};

// Builds the decoder described by `config`; JSON null gives nullptr.
StatusOr<std::unique_ptr<Decoder>> MakeDecoder(const nlohmann::json& config, const JsonContext& ctx);

}  // namespace llmserve::common::tokenizer
