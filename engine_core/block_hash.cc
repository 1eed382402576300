#include "engine_core/block_hash.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <glog/logging.h>

namespace llmserve::engine_core {

static_assert(std::endian::native == std::endian::little,
              "block hashing serialises token ids in host order and assumes little-endian");

StatusOr<HashAlgo> ParseHashAlgo(std::string_view name) {
  if (name == "sha256") return HashAlgo::kSha256;
  if (name == "xxhash") return HashAlgo::kXxHash;
  return Status::InvalidArgument("unknown prefix caching hash algorithm '" + std::string(name) +
                                 "' (expected sha256 or xxhash)");
}

namespace {

// The byte string that is hashed:
//   parent digest (32 bytes) | u32 token count | token ids (i32 each) |
//   u32 LoRA name length | LoRA name | u32 salt length | salt bytes
// Every variable-length field carries its length, so two different
// (parent, tokens, extra keys) triples never serialise to the same bytes.
uint8_t* PutString(uint8_t* p, std::string_view s) {
  const uint32_t len = static_cast<uint32_t>(s.size());
  std::memcpy(p, &len, 4);
  p += 4;
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

void Serialize(const BlockHash& parent, std::span<const int32_t> tokens, std::string_view lora,
               std::string_view salt, std::vector<uint8_t>* out) {
  const size_t size =
      sizeof(parent.words) + 4 + tokens.size_bytes() + 4 + lora.size() + 4 + salt.size();
  out->resize(size);
  uint8_t* p = out->data();
  std::memcpy(p, parent.words.data(), sizeof(parent.words));
  p += sizeof(parent.words);
  const uint32_t n = static_cast<uint32_t>(tokens.size());
  std::memcpy(p, &n, 4);
  p += 4;
  if (!tokens.empty()) std::memcpy(p, tokens.data(), tokens.size_bytes());
  p += tokens.size_bytes();
  p = PutString(p, lora);
  PutString(p, salt);
}

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

// Per-thread state: the serialisation buffer and a reusable digest context,
// so hashing a block allocates nothing after the first call on a thread.
struct ThreadScratch {
  std::vector<uint8_t> bytes;
  std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx{EVP_MD_CTX_new()};
};

ThreadScratch& Scratch() {
  thread_local ThreadScratch scratch;
  return scratch;
}

const EVP_MD* Sha256() {
  static const EVP_MD* md = [] {
    const EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    CHECK(fetched != nullptr) << "OpenSSL has no SHA256 implementation";
    return fetched;
  }();
  return md;
}

BlockHash Digest(HashAlgo algo, const std::vector<uint8_t>& bytes, EVP_MD_CTX* ctx) {
  BlockHash out;
  if (algo == HashAlgo::kXxHash) {
    const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
    out.words[0] = h.low64;
    out.words[1] = h.high64;
    return out;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  CHECK(ctx != nullptr && EVP_DigestInit_ex(ctx, Sha256(), nullptr) == 1 &&
        EVP_DigestUpdate(ctx, bytes.data(), bytes.size()) == 1 &&
        EVP_DigestFinal_ex(ctx, digest, &len) == 1 && len == 32)
      << "SHA-256 failed";
  std::memcpy(out.words.data(), digest, 32);
  return out;
}

}  // namespace

uint64_t ExternalBlockHash(const BlockHash& hash, HashAlgo algo) {
  // SHA-256 digest bytes 24..31 sit in words[3] in memory order (little-endian
  // host), so reading them big-endian is a byte swap. XXH3 stores low64 itself.
  if (algo == HashAlgo::kXxHash) return hash.words[0];
  return __builtin_bswap64(hash.words[3]);
}

BlockHasher::BlockHasher(HashAlgo algo) : algo_(algo) {
  // A fixed, algorithm-specific seed: hashes are reproducible across engine
  // processes (useful for KV events and DP-aware routing).
  static constexpr std::string_view kSeedText = "llmserve prefix cache root";
  std::vector<uint8_t> bytes(kSeedText.begin(), kSeedText.end());
  seed_ = Digest(algo_, bytes, Scratch().ctx.get());
}

BlockHash BlockHasher::Hash(const BlockHash* parent, std::span<const int32_t> tokens,
                            std::string_view lora_name, std::string_view cache_salt) const {
  ThreadScratch& scratch = Scratch();
  Serialize(parent != nullptr ? *parent : seed_, tokens, lora_name, cache_salt, &scratch.bytes);
  return Digest(algo_, scratch.bytes, scratch.ctx.get());
}

}  // namespace llmserve::engine_core
