// KV event batches in vLLM's msgpack layout: golden bytes written by Python's
// msgpack from the layout msgspec gives vLLM's structs, round trips, and
// decoding payloads of both vLLM 0.11 (no lora_name) and main (extra fields).
#include "proto/kv_events.h"

#include <gtest/gtest.h>

#include <msgpack.hpp>

#include <string>
#include <variant>

namespace llmserve::proto {
namespace kv_events_test {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

KVEventBatch Sample() {
  BlockStored first;
  first.block_hashes = {1, ~uint64_t{0}};
  first.token_ids = {1, 2, 3, 4, 5, 6, 7, 8};
  first.block_size = 4;
  BlockStored second;
  second.block_hashes = {7};
  second.parent_block_hash = 1;
  second.token_ids = {9, 10, 11, 12};
  second.block_size = 4;
  second.lora_name = "ad1";
  return KVEventBatch{1700000000.5, {first, second, BlockRemoved{{42}}, AllBlocksCleared{}}, 3};
}

// python3: msgpack.packb([1700000000.5, [["BlockStored", [1, 2**64-1], None,
//   [1..8], 4, None, "GPU", None], ["BlockStored", [7], 1, [9, 10, 11, 12], 4,
//   None, "GPU", "ad1"], ["BlockRemoved", [42], "GPU"], ["AllBlocksCleared"]], 3])
constexpr char kGoldenHex[] =
    "93cb41d954fc402000009498ab426c6f636b53746f7265649201cfffffffffffffffffc098010203040506070804c0a347"
    "5055c098ab426c6f636b53746f72656491070194090a0b0c04c0a3475055a361643193ac426c6f636b52656d6f76656491"
    "2aa347505591b0416c6c426c6f636b73436c656172656403";

TEST(KVEvents, EncodesVllmLayoutBytes) { EXPECT_EQ(EncodeKVEventBatch(Sample()), FromHex(kGoldenHex)); }

TEST(KVEvents, RoundTrips) {
  auto decoded = DecodeKVEventBatch(EncodeKVEventBatch(Sample()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, Sample());
}

TEST(KVEvents, DecodesOlderAndNewerLayouts) {
  // 0.11: BlockStored without lora_name, BlockRemoved without group_idx, dp rank nil.
  // 0.11: BlockStored without lora_name, dp rank nil.
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> p(buf);
  p.pack_array(3);
  p.pack(2.0);
  p.pack_array(2);
  p.pack_array(7);
  p.pack(std::string("BlockStored"));
  p.pack_array(1); p.pack(5);
  p.pack_nil();
  p.pack_array(2); p.pack(1); p.pack(2);
  p.pack(2);
  p.pack(9);
  p.pack(std::string("GPU"));
  // main: BlockRemoved with group_idx, and an unknown trailing field.
  p.pack_array(4);
  p.pack(std::string("BlockRemoved"));
  p.pack_array(1); p.pack(5);
  p.pack(std::string("GPU"));
  p.pack(0);
  p.pack_nil();
  auto decoded = DecodeKVEventBatch(std::string_view(buf.data(), buf.size()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(decoded->ts, 2.0);
  EXPECT_FALSE(decoded->data_parallel_rank.has_value());
  ASSERT_EQ(decoded->events.size(), 2u);
  const auto& s = std::get<BlockStored>(decoded->events[0]);
  EXPECT_EQ(s.lora_id, std::optional<int64_t>(9));
  EXPECT_FALSE(s.lora_name.has_value());
  EXPECT_EQ(std::get<BlockRemoved>(decoded->events[1]).block_hashes, std::vector<uint64_t>{5});
}

TEST(KVEvents, RejectsUnknownEventsAndWrongTypes) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> p(buf);
  p.pack_array(3);
  p.pack(1.0);
  p.pack_array(1);
  p.pack_array(1);
  p.pack(std::string("BlockMoved"));
  p.pack_nil();
  auto unknown = DecodeKVEventBatch(std::string_view(buf.data(), buf.size()));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("BlockMoved"), std::string::npos);
  EXPECT_FALSE(DecodeKVEventBatch("\x93\xa1x\x90\xc0").ok()) << "ts must be a number";
  EXPECT_FALSE(DecodeKVEventBatch("").ok());
}

}  // namespace kv_events_test
}  // namespace llmserve::proto
