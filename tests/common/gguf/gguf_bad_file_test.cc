// Corrupt GGUF files: each gives an error naming the problem (and the key
// or tensor), never a crash or a read out of bounds. The files are a valid
// writer's output with bytes patched, truncated or flipped.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/common/gguf/gguf_test_util.h"
#include "common/gguf/gguf_file.h"
#include "common/gguf/gguf_writer.h"

namespace llmserve::common::gguf {
namespace {

using testing::AfterString;
using testing::Patch;

// A small valid file: a few metadata keys, a Q4_0 weight and an F32 norm.
std::string ValidFile() {
  GgufWriter w;
  w.Set("general.architecture", "llama");
  w.Set("general.name", "bad-file-test");
  w.Set("llama.block_count", uint32_t{1});
  w.Set("tokenizer.ggml.tokens", std::vector<std::string>{"a", "b", "c"});
  w.Set("flag", true);
  EXPECT_TRUE(w.Add("blk.0.weight", {64, 2}, GgmlType::kQ4_0, testing::SampleValues(64, 2, 3)).ok());
  EXPECT_TRUE(w.Add("norm", {8}, GgmlType::kF32, std::vector<float>(8, 1.0f)).ok());
  return w.Serialize();
}

Status ParseBytes(const std::string& bytes) {
  auto file = GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "bad.gguf");
  return file.ok() ? Status::Ok() : file.status();
}

// The error for `bytes` contains `text` (and the file name).
void ExpectError(const std::string& bytes, StatusCode code, const std::string& text) {
  const Status s = ParseBytes(bytes);
  ASSERT_FALSE(s.ok()) << "parsed, expected an error containing: " << text;
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(text), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("bad.gguf: ", 0), 0u) << s.message();
}

TEST(GgufBadFile, ValidFileParses) { EXPECT_TRUE(ParseBytes(ValidFile()).ok()); }

TEST(GgufBadFile, HeaderProblems) {
  std::string f = ValidFile();
  f[0] = 'X';
  ExpectError(f, StatusCode::kDataLoss, "not a GGUF file: it starts with 'XGUF', not 'GGUF'");
  ExpectError("\x7f" "ELF", StatusCode::kDataLoss, "it starts with '\\x7fELF'");
  ExpectError("GG", StatusCode::kDataLoss, "truncated: the magic needs 4 bytes at offset 0, the file has 2 left");
  ExpectError(ValidFile().substr(0, 10), StatusCode::kDataLoss,
              "truncated: the tensor count needs 8 bytes at offset 8");
  f = ValidFile();
  Patch<uint32_t>(f, 4, 1);
  ExpectError(f, StatusCode::kUnimplemented, "GGUF version 1 is not supported (only 2 and 3)");
  Patch<uint32_t>(f, 4, 4);
  ExpectError(f, StatusCode::kUnimplemented, "GGUF version 4 is not supported");
  Patch<uint32_t>(f, 4, 0x03000000);
  ExpectError(f, StatusCode::kUnimplemented, "big-endian GGUF files are not supported");
  Patch<uint32_t>(f, 4, 2);  // version 2 reads the same as 3
  EXPECT_TRUE(ParseBytes(f).ok());
}

TEST(GgufBadFile, AbsurdCountsAndLengths) {
  std::string f = ValidFile();
  Patch<uint64_t>(f, 8, uint64_t{1} << 60);
  ExpectError(f, StatusCode::kDataLoss, "tensor count 1152921504606846976 cannot fit in the");
  f = ValidFile();
  Patch<uint64_t>(f, 16, uint64_t{1} << 40);
  ExpectError(f, StatusCode::kDataLoss, "metadata count 1099511627776 cannot fit in the");
  f = ValidFile();
  Patch<uint64_t>(f, 24, uint64_t{1} << 62);  // the first key's length
  ExpectError(f, StatusCode::kDataLoss, "metadata entry 0: truncated: a metadata key needs 4611686018427387904 bytes");
  f = ValidFile();
  Patch<uint64_t>(f, AfterString(f, "tokenizer.ggml.tokens") + 8, uint64_t{1} << 61);  // the array's length
  ExpectError(f, StatusCode::kDataLoss, "metadata key 'tokenizer.ggml.tokens': an array of 2305843009213693952 string "
                                        "cannot fit in the");
  f = ValidFile();
  Patch<uint64_t>(f, AfterString(f, "tokenizer.ggml.tokens") + 16, uint64_t{1} << 50);  // the first token's length
  ExpectError(f, StatusCode::kDataLoss,
              "metadata key 'tokenizer.ggml.tokens': element 0: truncated: a string value needs");
  f = ValidFile();
  Patch<uint64_t>(f, AfterString(f, "general.name") + 4, uint64_t{1} << 50);
  ExpectError(f, StatusCode::kDataLoss,
              "metadata key 'general.name': truncated: a string value needs 1125899906842624");
}

TEST(GgufBadFile, MetadataProblems) {
  std::string f = ValidFile();
  Patch<uint32_t>(f, AfterString(f, "llama.block_count"), 13);
  ExpectError(f, StatusCode::kDataLoss, "metadata key 'llama.block_count': undefined value type 13");
  f = ValidFile();
  Patch<uint32_t>(f, AfterString(f, "tokenizer.ggml.tokens") + 4, 9);
  ExpectError(f, StatusCode::kUnimplemented,
              "metadata key 'tokenizer.ggml.tokens': an array of arrays (not supported)");
  f = ValidFile();
  Patch<uint32_t>(f, AfterString(f, "tokenizer.ggml.tokens") + 4, 77);
  ExpectError(f, StatusCode::kDataLoss, "an array of undefined value type 77");
  f = ValidFile();
  Patch<uint8_t>(f, AfterString(f, "flag") + 4, 2);
  ExpectError(f, StatusCode::kDataLoss, "metadata key 'flag': a bool value is 2, not 0 or 1");
  GgufWriter w;
  w.Set("k.one", uint32_t{1});
  w.Set("k.two", uint32_t{2});
  std::string dup = w.Serialize();
  dup.replace(AfterString(dup, "k.two") - 3, 3, "one");
  ExpectError(dup, StatusCode::kDataLoss, "metadata key 'k.one' appears twice");
}

TEST(GgufBadFile, AlignmentProblems) {
  GgufWriter w;
  w.Set("general.alignment", uint32_t{48});
  ExpectError(w.Serialize(), StatusCode::kDataLoss, "general.alignment is 48, not a power of two");
  w.Set("general.alignment", uint64_t{64});
  ExpectError(w.Serialize(), StatusCode::kDataLoss, "general.alignment is uint64, expected uint32");
  w.Set("general.alignment", uint32_t{0});
  ExpectError(w.Serialize(), StatusCode::kDataLoss, "general.alignment is 0, not a power of two");
}

TEST(GgufBadFile, TensorInfoProblems) {
  std::string f = ValidFile();
  const size_t info = AfterString(f, "blk.0.weight");  // n_dims u32, dims u64 × 2, type u32, offset u64
  Patch<uint32_t>(f, info + 4 + 16, 99);
  ExpectError(f, StatusCode::kDataLoss, "tensor 'blk.0.weight' has unknown ggml type 99");
  f = ValidFile();
  Patch<uint32_t>(f, info, 5);
  ExpectError(f, StatusCode::kDataLoss, "tensor 'blk.0.weight' has 5 dimensions (GGUF allows 1 to 4)");
  f = ValidFile();
  Patch<uint64_t>(f, info + 4, uint64_t{1} << 40);
  Patch<uint64_t>(f, info + 12, uint64_t{1} << 40);
  ExpectError(f, StatusCode::kDataLoss,
              "tensor 'blk.0.weight' has dimensions [1099511627776, 1099511627776] whose product overflows 63 bits");
  f = ValidFile();
  Patch<uint64_t>(f, info + 4, 48);
  ExpectError(f, StatusCode::kDataLoss,
              "tensor 'blk.0.weight' is Q4_0 with rows of 48 values, not a multiple of the block size 32");
  f = ValidFile();
  Patch<uint64_t>(f, info + 4 + 16 + 4, 33);
  ExpectError(f, StatusCode::kDataLoss, "tensor 'blk.0.weight' offset 33 is not a multiple of the alignment 32");
  f = ValidFile();
  Patch<uint64_t>(f, info + 4 + 16 + 4, 1 << 20);
  ExpectError(f, StatusCode::kDataLoss, "tensor 'blk.0.weight' data [1048576, +72) runs past the end of the file");
  f = ValidFile();
  Patch<uint64_t>(f, info + 4, uint64_t{1} << 26);  // 2^26 × 2 Q4_0 values: 72 MiB the file does not have
  ExpectError(f, StatusCode::kDataLoss, "tensor 'blk.0.weight' data [0, +75497472) runs past the end of the file");
  GgufWriter w;
  ASSERT_TRUE(w.Add("t.a", {4}, GgmlType::kF32, std::vector<float>(4)).ok());
  ASSERT_TRUE(w.Add("t.b", {4}, GgmlType::kF32, std::vector<float>(4)).ok());
  std::string dup = w.Serialize();
  dup.replace(AfterString(dup, "t.b") - 1, 1, "a");
  ExpectError(dup, StatusCode::kDataLoss, "tensor 't.a' appears twice");
}

// A known type llmserve cannot dequantize opens (its sizes are known) and
// fails clearly when dequantized.
TEST(GgufBadFile, UnsupportedTypeNamesTheTensor) {
  GgufWriter w;
  ASSERT_TRUE(w.AddRaw("blk.3.ffn_down.weight", {256, 2}, GgmlType::kQ2_K, std::vector<uint8_t>(2 * 84)).ok());
  const std::string f = w.Serialize();
  auto file = GgufFile::Parse(reinterpret_cast<const uint8_t*>(f.data()), f.size(), "q2.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto values = DequantizeTensor((*file)->tensors()[0]);
  EXPECT_EQ(values.status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(values.status().message(),
            "tensor 'blk.3.ffn_down.weight' has type Q2_K, which llmserve cannot dequantize (supported: F32, F16, "
            "Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K, BF16)");
}

TEST(GgufBadFile, TruncationAnywhereIsAnError) {
  const std::string f = ValidFile();
  auto file = GgufFile::Parse(reinterpret_cast<const uint8_t*>(f.data()), f.size(), "bad.gguf");
  ASSERT_TRUE(file.ok());
  uint64_t needed = (*file)->data_offset();  // the file may lose its last tensor's padding, nothing more
  for (const GgufTensorInfo& t : (*file)->tensors()) {
    needed = std::max(needed, (*file)->data_offset() + t.offset + t.num_bytes);
  }
  for (size_t n = 0; n < needed; ++n) {
    ASSERT_FALSE(ParseBytes(f.substr(0, n)).ok()) << "a file cut to " << n << " bytes parsed";
  }
  ExpectError(f.substr(0, AfterString(f, "general.name") + 14), StatusCode::kDataLoss,
              "metadata key 'general.name': truncated: a string value needs 13 bytes");
  ExpectError(f.substr(0, AfterString(f, "norm") + 2), StatusCode::kDataLoss,
              "tensor 'norm' truncated: the number of dimensions needs 4 bytes");
  ExpectError(f.substr(0, needed - 1), StatusCode::kDataLoss, "tensor 'norm' data [96, +32) runs past the end");
}

// Random byte changes: whatever Parse accepts must dequantize without
// reading outside the file (the sanitizer build checks the reads).
TEST(GgufBadFile, RandomCorruptionNeverCrashes) {
  const std::string valid = ValidFile();
  std::mt19937 rng(2024);
  int parsed = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string f = valid;
    for (int k = 1 + static_cast<int>(rng() % 4); k > 0; --k) f[rng() % f.size()] = static_cast<char>(rng());
    if (trial % 5 == 0) f.resize(rng() % f.size());
    auto file = GgufFile::Parse(reinterpret_cast<const uint8_t*>(f.data()), f.size(), "fuzz.gguf");
    if (!file.ok()) continue;
    ++parsed;
    for (const GgufTensorInfo& t : (*file)->tensors()) {
      if (t.num_elements <= 4096) (void)DequantizeTensor(t);
    }
  }
  EXPECT_GT(parsed, 0);  // some changes (inside tensor data) leave a valid file
}

}  // namespace
}  // namespace llmserve::common::gguf
