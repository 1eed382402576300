// Decoders given truncated, oversized, bit-flipped or random bytes return an
// error (or a valid value) and never crash or allocate without bound. Under the
// sanitizer build this also proves memory safety for the same inputs.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "proto/messages.h"
#include "tests/proto/decode_all.h"

namespace llmserve::proto {
namespace {

std::vector<std::string> ValidSamples() {
  EngineCoreRequest r;
  r.request_id = "req-1";
  r.prompt_token_ids = {1, 2, 3, 4, 5, 6, 7, 8};
  r.sampling_params.stop = {"x", "yy"};
  r.sampling_params.logit_bias = {{1, 2.0}};
  r.priority = 3;
  EngineCoreOutputs outs;
  EngineCoreOutput o;
  o.request_id = "req-1";
  o.new_token_ids = {9};
  o.finish_reason = FinishReason::kLength;
  o.new_logprobs = Logprobs{{{9, 1}}, {{-0.1f, -2.f}}, {1}};
  outs.outputs = {o, o};
  outs.scheduler_stats = SchedulerStats{};
  SchedulerOutput so;
  NewRequestData n;
  n.req_id = "n";
  n.prompt_token_ids = {1, 2};
  n.block_ids = {{1}};
  so.scheduled_new_reqs = {n};
  so.num_scheduled_tokens = {{"n", 2}};
  so.total_num_scheduled_tokens = 2;
  ModelRunnerOutput m;
  m.req_ids = {"n"};
  m.sampled_token_ids = {{3}};
  return {Encode(r), Encode(outs), Encode(so), Encode(m), Encode(UtilityRequest{0, 1, "stats", {}})};
}

TEST(MalformedInput, EveryTruncationOfValidMessagesIsRejectedCleanly) {
  for (const std::string& valid : ValidSamples()) {
    for (size_t len = 0; len < valid.size(); ++len) {
      testing::DecodeAll(reinterpret_cast<const uint8_t*>(valid.data()), len);
      // A strict prefix of one msgpack value is never a complete value.
      EngineCoreOutputs outs;
      EXPECT_FALSE(Decode(valid.data(), len, &outs).ok()) << "len " << len;
    }
  }
}

TEST(MalformedInput, OversizedContainerHeadersAllocateNothing) {
  // array32 / map32 / str32 / bin32 headers claiming ~4 billion entries or bytes.
  for (uint8_t tag : {0xdd, 0xdf, 0xdb, 0xc6, 0xc9}) {
    std::string bytes(1, static_cast<char>(tag));
    bytes += std::string("\xff\xff\xff\xf0", 4);
    bytes += "tiny";
    EXPECT_EQ(testing::DecodeAll(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
    EngineCoreRequest r;
    Status s = Decode(bytes, &r);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  }
  // Deep nesting is refused, not recursed into.
  std::string deep(10000, '\x91');
  deep += '\xc0';
  EngineCoreOutputs outs;
  EXPECT_FALSE(Decode(deep, &outs).ok());
}

TEST(MalformedInput, TrailingBytesAreRejected) {
  std::string bytes = Encode(SamplingParams()) + "x";
  SamplingParams s;
  EXPECT_FALSE(Decode(bytes, &s).ok());
}

// 120 000 cases: random bytes, random msgpack-ish bytes, and bit-flipped,
// spliced and resized variants of valid messages.
TEST(MalformedInput, RandomizedHundredThousandCases) {
  std::mt19937_64 rng(20261122);
  const std::vector<std::string> valid = ValidSamples();
  std::uniform_int_distribution<int> byte(0, 255);
  int accepted = 0;
  const int kCases = 120000;
  for (int i = 0; i < kCases; ++i) {
    std::string input;
    switch (i % 4) {
      case 0: {  // pure noise
        input.resize(rng() % 64);
        for (char& c : input) c = static_cast<char>(byte(rng));
        break;
      }
      case 1: {  // bit flips in a valid message
        input = valid[rng() % valid.size()];
        int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) input[rng() % input.size()] ^= static_cast<char>(1u << (rng() % 8));
        break;
      }
      case 2: {  // byte replacement with msgpack type tags
        static const uint8_t kTags[] = {0xc0, 0xc2, 0xc3, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd9, 0xda, 0xdb,
                                        0xdc, 0xdd, 0xde, 0xdf, 0x90, 0x9f, 0x80, 0x8f, 0xa0, 0xbf, 0xca, 0xcb};
        input = valid[rng() % valid.size()];
        input[rng() % input.size()] = static_cast<char>(kTags[rng() % sizeof(kTags)]);
        break;
      }
      case 3: {  // splice two messages at random points, or resize
        const std::string& a = valid[rng() % valid.size()];
        const std::string& b = valid[rng() % valid.size()];
        input = a.substr(0, rng() % (a.size() + 1)) + b.substr(rng() % (b.size() + 1));
        break;
      }
    }
    accepted += testing::DecodeAll(reinterpret_cast<const uint8_t*>(input.data()), input.size());
  }
  // Most inputs are garbage, but protobuf and a few msgpack decoders accept some.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, kCases * 13);
}

}  // namespace
}  // namespace llmserve::proto
