#pragma once
// Helpers for the GGUF tests: deterministic sample values, the list of types
// llmserve dequantizes, a scratch directory, and byte patching of a
// serialized file (for building corrupt files).

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/float16.h"
#include "common/gguf/ggml_type.h"

namespace llmserve::common::gguf::testing {

using base::StoreU16;

// Every type llmserve dequantizes and quantizes.
inline std::vector<GgmlType> DequantizableTypes() {
  return {GgmlType::kF32,  GgmlType::kF16,  GgmlType::kBF16, GgmlType::kQ8_0, GgmlType::kQ4_0, GgmlType::kQ4_1,
          GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};
}

// `rows` rows of `row_length` values (row_length a multiple of 256) that
// exercise the quantisers' corners: row 0 normal-ish values, row 1 special
// 32-value blocks (zeros, a constant, all negative, all positive, tiny values
// whose scales are half subnormals, large values, one outlier), further rows
// uniform in [-1, 1] with an occasional spike.
inline std::vector<float> SampleValues(uint64_t row_length, uint64_t rows, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> v(row_length * rows);
  for (uint64_t i = 0; i < row_length; ++i) v[i] = normal(rng);
  for (uint64_t i = 0; rows > 1 && i < row_length; ++i) {
    const uint64_t block = (i / 32) % 8;
    const float u = uniform(rng);
    const float special[8] = {0.0f, 0.375f, -std::fabs(u) - 0.1f, std::fabs(u) + 0.1f, u * 3e-6f, u * 900.0f,
                              i % 32 == 7 ? 40.0f : u * 0.01f, u};
    v[row_length + i] = special[block];
  }
  for (uint64_t i = 2 * row_length; i < v.size(); ++i) v[i] = uniform(rng) * (i % 97 == 0 ? 8.0f : 1.0f);
  return v;
}

// Random bytes in `type`'s layout, `blocks` blocks, with every half or
// bfloat16 field replaced by a random finite value (NaN payloads are not
// part of what the formats define), so all bit patterns of the quants occur.
inline std::vector<uint8_t> RandomBlocks(GgmlType type, uint64_t blocks, uint32_t seed) {
  const GgmlTypeInfo& info = TypeInfo(type);
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(blocks * info.block_bytes);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  std::vector<size_t> half_fields;  // byte offsets of 16-bit float fields within a block
  switch (type) {
    case GgmlType::kF16: case GgmlType::kBF16: case GgmlType::kQ4_0: case GgmlType::kQ5_0: case GgmlType::kQ8_0:
      half_fields = {0};
      break;
    case GgmlType::kQ4_1: case GgmlType::kQ5_1: case GgmlType::kQ4_K: case GgmlType::kQ5_K:
      half_fields = {0, 2};
      break;
    case GgmlType::kQ6_K: half_fields = {208}; break;
    default: break;
  }
  for (uint64_t b = 0; b < blocks; ++b) {
    uint8_t* block = bytes.data() + b * info.block_bytes;
    for (size_t at : half_fields) {
      // Exponent field below all-ones: finite (subnormals and zero included).
      uint16_t v = static_cast<uint16_t>(rng());
      if (type == GgmlType::kBF16 && ((v >> 7) & 0xff) == 0xff) v ^= 0x0080;
      if (type != GgmlType::kBF16 && ((v >> 10) & 0x1f) == 0x1f) v ^= 0x0400;
      StoreU16(block + at, v);
    }
    if (type == GgmlType::kF32) {
      float f = static_cast<float>(static_cast<int32_t>(rng())) * 1e-6f;
      std::memcpy(block, &f, 4);
    }
  }
  return bytes;
}

// A fresh directory under $TMPDIR, removed when this goes out of scope.
class GgufScratchDir {
 public:
  GgufScratchDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "llmserve_gguf_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~GgufScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// True when /usr/bin/python3 can import numpy (scripts/gguf_reference.py needs it).
inline bool HaveNumpyForGguf() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1") == 0;
  return ok;
}

// The offset just past the first GGUF string (u64 length + bytes) equal to
// `text` in `bytes`: where a key's value type or a tensor info's n_dims is.
inline size_t AfterString(const std::string& bytes, const std::string& text) {
  std::string needle(8, '\0');
  const uint64_t n = text.size();
  std::memcpy(needle.data(), &n, 8);
  needle += text;
  const size_t at = bytes.find(needle);
  EXPECT_NE(at, std::string::npos) << "no string '" << text << "' in the file";
  return at == std::string::npos ? 0 : at + needle.size();
}

// Overwrites the bytes at `at` with `value` (little-endian).
template <typename T>
void Patch(std::string& bytes, size_t at, T value) {
  ASSERT_LE(at + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

}  // namespace llmserve::common::gguf::testing
