// GgufWriter → GgufFile: every metadata type comes back with its type and
// value, every tensor type with its dims, offset and bytes; typed getters
// name the key and both types when asked for the wrong one.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "tests/common/gguf/gguf_test_util.h"
#include "common/gguf/gguf_file.h"
#include "common/gguf/gguf_writer.h"
#include "common/gguf/quantize.h"

namespace llmserve::common::gguf {
namespace {

// One key of every scalar type and an array of every element type.
std::vector<std::pair<std::string, GgufValue>> EveryMetadataType() {
  return {
      {"general.architecture", "llama"},
      {"t.uint8", uint8_t{200}},
      {"t.int8", int8_t{-100}},
      {"t.uint16", uint16_t{60000}},
      {"t.int16", int16_t{-30000}},
      {"t.uint32", uint32_t{4000000000u}},
      {"t.int32", int32_t{-2000000000}},
      {"t.float32", 0.1f},
      {"t.bool", true},
      {"t.string", std::string("héllo, wörld")},
      {"t.uint64", uint64_t{18000000000000000000ull}},
      {"t.int64", int64_t{-9000000000000000000ll}},
      {"t.float64", 1.0 / 3.0},
      {"a.uint8", std::vector<uint8_t>{0, 255}},
      {"a.int8", std::vector<int8_t>{-128, 127}},
      {"a.uint16", std::vector<uint16_t>{1, 65535}},
      {"a.int16", std::vector<int16_t>{-32768, 32767}},
      {"a.uint32", std::vector<uint32_t>{7, 4294967295u}},
      {"a.int32", std::vector<int32_t>{-1, 2147483647}},
      {"a.float32", std::vector<float>{-1.5f, 3e-40f, std::numeric_limits<float>::max()}},
      {"a.bool", std::vector<bool>{true, false, true}},
      {"a.string", std::vector<std::string>{"<s>", "", "Ġthe", "\xe4\xb8\xad"}},
      {"a.uint64", std::vector<uint64_t>{0, std::numeric_limits<uint64_t>::max()}},
      {"a.int64", std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 5}},
      {"a.float64", std::vector<double>{2.5, -1e300}},
      {"a.empty", std::vector<int32_t>{}},
  };
}

void SetEveryMetadataType(GgufWriter& w) {
  for (auto& [key, value] : EveryMetadataType()) w.Set(key, value);
}

TEST(GgufRoundTrip, MetadataOfEveryTypeComesBack) {
  GgufWriter w;
  SetEveryMetadataType(w);
  const std::string bytes = w.Serialize();
  auto file = GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "all.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const GgufMetadata& md = (*file)->metadata();
  EXPECT_EQ((*file)->version(), 3u);
  EXPECT_EQ((*file)->alignment(), 32u);
  EXPECT_EQ(md.size(), 26u);
  EXPECT_EQ(md.entries()[0].first, "general.architecture");  // file order kept
  EXPECT_EQ(md.Get<std::string>("general.architecture").value(), "llama");
  EXPECT_EQ(md.Get<uint8_t>("t.uint8").value(), 200);
  EXPECT_EQ(md.Get<int8_t>("t.int8").value(), -100);
  EXPECT_EQ(md.Get<uint16_t>("t.uint16").value(), 60000);
  EXPECT_EQ(md.Get<int16_t>("t.int16").value(), -30000);
  EXPECT_EQ(md.Get<uint32_t>("t.uint32").value(), 4000000000u);
  EXPECT_EQ(md.Get<int32_t>("t.int32").value(), -2000000000);
  EXPECT_EQ(md.Get<float>("t.float32").value(), 0.1f);
  EXPECT_EQ(md.Get<bool>("t.bool").value(), true);
  EXPECT_EQ(md.Get<std::string>("t.string").value(), "héllo, wörld");
  EXPECT_EQ(md.Get<uint64_t>("t.uint64").value(), 18000000000000000000ull);
  EXPECT_EQ(md.Get<int64_t>("t.int64").value(), -9000000000000000000ll);
  EXPECT_EQ(md.Get<double>("t.float64").value(), 1.0 / 3.0);
  EXPECT_EQ(md.Get<std::vector<bool>>("a.bool").value(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(*md.GetArray<std::string>("a.string").value(),
            (std::vector<std::string>{"<s>", "", "Ġthe", "\xe4\xb8\xad"}));
  EXPECT_EQ(md.GetArray<float>("a.float32").value()->at(1), 3e-40f);  // a subnormal float
  EXPECT_EQ(md.Get<std::vector<uint64_t>>("a.uint64").value()[1], std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(md.Get<std::vector<int64_t>>("a.int64").value()[0], std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(md.Get<std::vector<int32_t>>("a.empty").value().empty());
  // Every value equals what was written, type included.
  EXPECT_EQ(md.entries(), EveryMetadataType());
}

TEST(GgufRoundTrip, TypedGettersNameTheKeyAndTheTypes) {
  GgufWriter w;
  SetEveryMetadataType(w);
  const std::string bytes = w.Serialize();
  auto file = GgufFile::Parse(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "m.gguf");
  ASSERT_TRUE(file.ok());
  const GgufMetadata& md = (*file)->metadata();
  auto wrong = md.Get<uint32_t>("t.uint64");
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wrong.status().message(), "m.gguf: metadata key 't.uint64' is uint64, expected uint32");
  EXPECT_EQ(md.GetArray<std::string>("a.int32").status().message(),
            "m.gguf: metadata key 'a.int32' is array of int32, expected array of string");
  EXPECT_EQ(md.Get<std::string>("a.string").status().message(),
            "m.gguf: metadata key 'a.string' is array of string, expected string");
  auto missing = md.Get<uint32_t>("llama.block_count");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "m.gguf: metadata key 'llama.block_count' is missing");
  EXPECT_EQ(md.GetOr<uint32_t>("llama.block_count", 7).value(), 7u);
  EXPECT_FALSE(md.GetOr<uint32_t>("t.int32", 7).ok());  // present with another type is still an error
  EXPECT_EQ(md.GetInteger("t.uint16").value(), 60000);
  EXPECT_EQ(md.GetInteger("t.int64").value(), -9000000000000000000ll);
  EXPECT_EQ(md.GetInteger("t.uint64").status().message(),
            "m.gguf: metadata key 't.uint64' is uint64, expected an integer up to 2^63-1 (it holds "
            "18000000000000000000)");
  EXPECT_EQ(md.GetInteger("t.float32").status().message(),
            "m.gguf: metadata key 't.float32' is float32, expected an integer");
}

TEST(GgufRoundTrip, TensorsOfEveryTypeAlignedWithTheirBytes) {
  for (uint32_t alignment : {32u, 64u}) {
    GgufWriter w(alignment);
    std::vector<std::vector<uint8_t>> expected;
    for (GgmlType type : testing::DequantizableTypes()) {
      const std::vector<float> x = testing::SampleValues(256, 3, 11);
      ASSERT_TRUE(w.Add(std::string("w.") + GgmlTypeName(type), {256, 3}, type, x).ok());
      expected.emplace_back(RowBytes(type, 256).value() * 3);
      ASSERT_TRUE(QuantizeRow(type, x.data(), x.size(), expected.back().data()).ok());
    }
    ASSERT_TRUE(w.Add("odd.f16", {3}, GgmlType::kF16, {1.0f, 2.0f, 3.0f}).ok());  // 6 bytes: the next is padded
    // 127 · 2^-8: a Q8_0 scale of 2^-8, exact in a half.
    ASSERT_TRUE(w.Add("three.d", {32, 2, 2}, GgmlType::kQ8_0, std::vector<float>(128, 0.49609375f)).ok());
    testing::GgufScratchDir dir;
    ASSERT_TRUE(w.WriteFile(dir / "t.gguf").ok());
    auto file = GgufFile::Open(dir / "t.gguf");
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    EXPECT_EQ((*file)->alignment(), alignment);
    EXPECT_EQ((*file)->data_offset() % alignment, 0u);
    ASSERT_EQ((*file)->tensors().size(), expected.size() + 2);
    for (size_t i = 0; i < expected.size(); ++i) {
      const GgufTensorInfo& t = (*file)->tensors()[i];
      SCOPED_TRACE(t.name);
      EXPECT_EQ(t.type, testing::DequantizableTypes()[i]);
      EXPECT_EQ(t.dims, (std::vector<uint64_t>{256, 3}));
      EXPECT_EQ(t.num_rows(), 3u);
      EXPECT_EQ(t.offset % alignment, 0u);
      ASSERT_EQ(t.num_bytes, expected[i].size());
      EXPECT_EQ(std::memcmp(t.data, expected[i].data(), t.num_bytes), 0);
    }
    const GgufTensorInfo* three = (*file)->FindTensor("three.d");
    ASSERT_NE(three, nullptr);
    EXPECT_EQ(three->ShapeString(), "[32, 2, 2]");
    EXPECT_EQ(three->num_rows(), 4u);
    std::vector<float> row(32);
    ASSERT_TRUE(DequantizeRows(*three, 3, 1, row.data()).ok());
    EXPECT_EQ(row, std::vector<float>(32, 0.49609375f));
    EXPECT_EQ(DequantizeRows(*three, 3, 2, row.data()).message(),
              "tensor 'three.d' has 4 rows; asked for 2 from row 3");
    EXPECT_EQ(DequantizeTensor(*(*file)->FindTensor("odd.f16")).value(), (std::vector<float>{1.0f, 2.0f, 3.0f}));
    EXPECT_EQ((*file)->FindTensor("absent"), nullptr);
  }
}

TEST(GgufRoundTrip, WriterRefusesInconsistentTensors) {
  GgufWriter w;
  EXPECT_EQ(w.Add("a", {33}, GgmlType::kQ4_0, std::vector<float>(33)).message(),
            "tensor 'a': a row of 33 values is not a whole number of Q4_0 blocks of 32");
  EXPECT_EQ(w.Add("a", {32}, GgmlType::kQ4_0, std::vector<float>(31)).message(),
            "tensor 'a': 31 values, expected 32");
  ASSERT_TRUE(w.Add("a", {32}, GgmlType::kQ4_0, std::vector<float>(32)).ok());
  EXPECT_EQ(w.Add("a", {32}, GgmlType::kQ4_0, std::vector<float>(32)).message(), "tensor 'a' is already in the file");
  EXPECT_EQ(w.AddRaw("b", {32}, GgmlType::kQ8_0, std::vector<uint8_t>(33)).message(),
            "tensor 'b': 33 bytes, expected 34");
}

}  // namespace
}  // namespace llmserve::common::gguf
