// Our reader and dequantisers against scripts/gguf_reference.py, an
// independent numpy implementation of the GGUF format and the block formats:
// for every type, both quantised sample data and random blocks (every bit
// pattern of the quants, random finite scales) must dequantise to the same
// float32 bits; every metadata value must read the same, type included.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/common/gguf/gguf_test_util.h"
#include "common/gguf/gguf_file.h"
#include "common/gguf/gguf_writer.h"

namespace llmserve::common::gguf {
namespace {

// Runs the reference on `path`: its metadata JSON, and OUT_DIR/<i>.f32 per tensor.
nlohmann::json RunReference(const std::string& path, const std::string& out_dir) {
  const std::string json_path = out_dir + ".json";
  const std::string cmd = std::string("/usr/bin/python3 ") + LLMSERVE_GGUF_REFERENCE + " " + path +
                          " --dump-metadata --dump-all " + out_dir + " > " + json_path;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(json_path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

std::vector<float> ReadFloats(const std::string& path, size_t count) {
  std::vector<float> out(count);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(count * sizeof(float)));
  EXPECT_TRUE(in.good() && in.peek() == EOF) << path << " is not " << count << " floats";
  return out;
}

// Index and values of the first element whose bits differ, or "" when none.
std::string FirstBitDifference(const std::vector<float>& ours, const std::vector<float>& ref) {
  for (size_t i = 0; i < ours.size() && i < ref.size(); ++i) {
    if (std::memcmp(&ours[i], &ref[i], sizeof(float)) != 0) {
      std::ostringstream s;
      s.precision(9);
      s << "element " << i << ": ours " << ours[i] << ", reference " << ref[i];
      return s.str();
    }
  }
  return ours.size() == ref.size() ? "" : "sizes differ";
}

TEST(GgufReference, DequantisationIsBitExactForEveryType) {
  if (!testing::HaveNumpyForGguf()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  GgufWriter w;
  uint32_t seed = 1;
  for (GgmlType type : testing::DequantizableTypes()) {
    const std::string name = GgmlTypeName(type);
    ASSERT_TRUE(w.Add("quantised." + name, {512, 4}, type, testing::SampleValues(512, 4, seed++)).ok());
    const uint64_t blocks = 3 * 1024 / TypeInfo(type).block_size;  // 3 rows of 1024
    ASSERT_TRUE(w.AddRaw("random." + name, {1024, 3}, type, testing::RandomBlocks(type, blocks, seed++)).ok());
  }
  testing::GgufScratchDir dir;
  ASSERT_TRUE(w.WriteFile(dir / "types.gguf").ok());
  const nlohmann::json ref = RunReference(dir / "types.gguf", dir / "out");
  ASSERT_TRUE(ref.is_object()) << "the reference printed no JSON";
  auto file = GgufFile::Open(dir / "types.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(ref["data_offset"].get<uint64_t>(), (*file)->data_offset());
  const auto& tensors = (*file)->tensors();
  ASSERT_EQ(ref["tensors"].size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    SCOPED_TRACE(tensors[i].name);
    EXPECT_EQ(ref["tensors"][i]["name"], tensors[i].name);
    EXPECT_EQ(ref["tensors"][i]["type"], GgmlTypeName(tensors[i].type));
    EXPECT_EQ(ref["tensors"][i]["dims"].get<std::vector<uint64_t>>(), tensors[i].dims);
    EXPECT_EQ(ref["tensors"][i]["offset"].get<uint64_t>(), tensors[i].offset);
    auto ours = DequantizeTensor(tensors[i]);
    ASSERT_TRUE(ours.ok()) << ours.status().ToString();
    const std::vector<float> theirs = ReadFloats(dir / ("out/" + std::to_string(i) + ".f32"), tensors[i].num_elements);
    EXPECT_EQ(FirstBitDifference(*ours, theirs), "");
  }
}

// The reference's typed JSON value of one metadata entry, as a GgufValue.
GgufValue FromReferenceJson(const nlohmann::json& e) {
  const std::string type = e["type"] == "array" ? e["element_type"].get<std::string>() : e["type"].get<std::string>();
  const bool array = e["type"] == "array";
  auto as = [&](auto tag) -> GgufValue {
    using T = decltype(tag);
    if (array) return e["value"].get<std::vector<T>>();
    return e["value"].get<T>();
  };
  if (type == "uint8") return as(uint8_t{});
  if (type == "int8") return as(int8_t{});
  if (type == "uint16") return as(uint16_t{});
  if (type == "int16") return as(int16_t{});
  if (type == "uint32") return as(uint32_t{});
  if (type == "int32") return as(int32_t{});
  if (type == "float32") return as(float{});
  if (type == "bool") return as(bool{});
  if (type == "string") return as(std::string{});
  if (type == "uint64") return as(uint64_t{});
  if (type == "int64") return as(int64_t{});
  if (type == "float64") return as(double{});
  ADD_FAILURE() << "unknown type " << type;
  return GgufValue();
}

TEST(GgufReference, MetadataReadsTheSameAsTheReference) {
  if (!testing::HaveNumpyForGguf()) GTEST_SKIP() << "/usr/bin/python3 with numpy is not available";
  GgufWriter w(64);
  w.Set("general.name", "tiny \"model\"");
  w.Set("llama.block_count", uint32_t{2});
  w.Set("llama.rope.freq_base", 1e6f);
  w.Set("llama.attention.layer_norm_rms_epsilon", 1e-6f);
  w.Set("tokenizer.ggml.tokens", std::vector<std::string>{"<unk>", "<s>", "▁the", "\n", "{\"a\": 1}"});
  w.Set("tokenizer.ggml.scores", std::vector<float>{0.0f, -1.25f, -3.1415927f, 1e-30f, -0.0f});
  w.Set("tokenizer.ggml.token_type", std::vector<int32_t>{2, 3, 1, 6, 1});
  w.Set("tokenizer.ggml.add_bos_token", false);
  w.Set("x.u8s", std::vector<uint8_t>{1, 2});
  w.Set("x.i8s", std::vector<int8_t>{-1});
  w.Set("x.u16", uint16_t{65535});
  w.Set("x.i16s", std::vector<int16_t>{-2, 3});
  w.Set("x.u64s", std::vector<uint64_t>{1ull << 63});
  w.Set("x.i64", int64_t{-1});
  w.Set("x.f64s", std::vector<double>{0.1, 1e-310});
  w.Set("x.bools", std::vector<bool>{false, true});
  w.Set("x.u32s", std::vector<uint32_t>{});
  testing::GgufScratchDir dir;
  ASSERT_TRUE(w.WriteFile(dir / "md.gguf").ok());
  const nlohmann::json ref = RunReference(dir / "md.gguf", dir / "out");
  ASSERT_TRUE(ref.is_object()) << "the reference printed no JSON";
  auto file = GgufFile::Open(dir / "md.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(ref["version"], 3);
  EXPECT_EQ(ref["alignment"], 64);
  const auto& entries = (*file)->metadata().entries();
  ASSERT_EQ(ref["metadata"].size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json& e = ref["metadata"][i];
    EXPECT_EQ(e["key"], entries[i].first);
    EXPECT_EQ(FromReferenceJson(e), entries[i].second) << entries[i].first << ": reference " << e.dump();
  }
}

}  // namespace
}  // namespace llmserve::common::gguf
