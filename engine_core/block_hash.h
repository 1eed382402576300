#pragma once
// Block hashes for prefix caching: H(parent hash, token ids of one full block,
// extra keys). Equal hashes mean "these KV entries are interchangeable", so the
// hash covers everything that changes a block's KV: the whole prefix (through
// the parent chain), the LoRA adapter and, on the first block, the cache salt.

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/status_or.h"

namespace llmserve::engine_core {

// Which hash function prefix caching uses (`--prefix-caching-hash-algo`).
enum class HashAlgo : uint8_t {
  kSha256,  // OpenSSL SHA-256 over our byte encoding (default, collision-safe)
  kXxHash,  // xxHash XXH3 128-bit: faster, non-cryptographic
};

// Parses "sha256" or "xxhash"; anything else is InvalidArgument.
StatusOr<HashAlgo> ParseHashAlgo(std::string_view name);

// A block hash: 256 bits for SHA-256; XXH3 fills the first 128 and leaves the
// rest zero. Plain value type, cheap to copy and compare.
struct BlockHash {
  std::array<uint64_t, 4> words{};  // digest bytes, little-endian words

  friend bool operator==(const BlockHash&, const BlockHash&) = default;
};

// The hash external consumers see (KV events), vLLM's default int form: the
// low 64 bits of the digest read as a big-endian integer, i.e. its last 8
// bytes. The digest is SHA-256's 32 bytes, or XXH3-128's canonical 16 bytes
// (high half first), whose last 8 bytes are the low half.
uint64_t ExternalBlockHash(const BlockHash& hash, HashAlgo algo);

// Computes block hashes. Thread-safe (per-thread scratch), so the engine's
// input thread can hash new prompts while the main loop hashes decode blocks.
class BlockHasher final {
 public:
  explicit BlockHasher(HashAlgo algo);

  // The hash of one full block. `parent` is nullptr for a request's first
  // block (the chain then starts from a fixed seed hash). `cache_salt` must be
  // empty except for the first block; an empty `lora_name` means "no adapter".
  BlockHash Hash(const BlockHash* parent, std::span<const int32_t> tokens,
                 std::string_view lora_name, std::string_view cache_salt) const;

  // The algorithm this hasher uses.
  HashAlgo algo() const { return algo_; }

 private:
  HashAlgo algo_;
  BlockHash seed_;  // stands in for the parent of every first block
};

}  // namespace llmserve::engine_core
