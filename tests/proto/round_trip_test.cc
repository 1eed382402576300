// Every data-plane message survives encode -> decode unchanged, with default
// and non-default field values; the encoding follows vLLM's conventions.
#include <gtest/gtest.h>

#include <cmath>

#include "proto/messages.h"

namespace llmserve::proto {
namespace {

template <typename T>
T MsgpackRoundTrip(const T& value) {
  std::string bytes = Encode(value);
  T decoded;
  Status status = Decode(bytes, &decoded);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return decoded;
}

SamplingParams EverySamplingField() {
  SamplingParams s;
  s.n = 3;
  s.presence_penalty = 0.5;
  s.frequency_penalty = -0.25;
  s.repetition_penalty = 1.1;
  s.temperature = 0.7;
  s.top_p = 0.9;
  s.top_k = 40;
  s.min_p = 0.05;
  s.seed = -12345;
  s.stop = {"\n\n", "END", "ünïcode"};
  s.stop_token_ids = {151645, 2};
  s.ignore_eos = true;
  s.max_tokens = std::nullopt;
  s.min_tokens = 4;
  s.logprobs = 5;
  s.prompt_logprobs = 1;
  s.detokenize = false;
  s.skip_special_tokens = false;
  s.include_stop_str_in_output = true;
  s.output_kind = OutputKind::kDelta;
  s.logit_bias = {{10, -100.0}, {42, 2.5}};
  s.allowed_token_ids = {1, 2, 3};
  s.all_stop_token_ids = {151645};
  return s;
}

TEST(MsgpackRoundTrip, SamplingParamsDefaultsEncodeAsEmptyMap) {
  EXPECT_EQ(Encode(SamplingParams()), std::string("\x80", 1));  // fixmap, 0 entries
  EXPECT_EQ(MsgpackRoundTrip(SamplingParams()), SamplingParams());
}

TEST(MsgpackRoundTrip, SamplingParamsAllFields) {
  SamplingParams s = EverySamplingField();
  EXPECT_EQ(MsgpackRoundTrip(s), s);
}

TEST(MsgpackRoundTrip, EngineCoreRequest) {
  EngineCoreRequest r;
  r.request_id = "cmpl-abc-0";
  r.prompt_token_ids = {785, 6722, 315, 9625, 374};
  r.sampling_params = EverySamplingField();
  r.arrival_time = 1763769600.25;
  EXPECT_EQ(MsgpackRoundTrip(r), r);
  r.lora_name = "adapter";
  r.cache_salt = "tenant-7";
  r.data_parallel_rank = 3;
  r.prompt_is_token_ids = true;
  r.client_index = 2;
  r.current_wave = 9;
  r.priority = -1;
  EXPECT_EQ(MsgpackRoundTrip(r), r);
}

TEST(MsgpackRoundTrip, EngineCoreRequestOmitsTrailingDefaultsLikeMsgspec) {
  EngineCoreRequest r;
  r.request_id = "x";
  r.arrival_time = 1.0;
  // request_id, prompt_token_ids, mm_features, sampling_params, pooling_params,
  // arrival_time: 6 fields; everything after is default and omitted.
  std::string bytes = Encode(r);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x96);  // fixarray of 6
  r.priority = 5;  // field 14 set: all 14 positions present
  bytes = Encode(r);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), 0x9e);  // fixarray of 14
}

TEST(MsgpackRoundTrip, UtilityAndWaveAndAbort) {
  UtilityRequest u{1, 77, "reset_prefix_cache", {"a", "b"}};
  EXPECT_EQ(MsgpackRoundTrip(u), u);
  StartDpWave w{12, 3};
  EXPECT_EQ(MsgpackRoundTrip(w), w);
  std::vector<std::string> abort_ids = {"r1", "r2"};
  EXPECT_EQ(MsgpackRoundTrip(abort_ids), abort_ids);
  RequestType t;
  uint8_t add = 0;
  ASSERT_TRUE(ParseRequestType(&add, 1, &t).ok());
  EXPECT_EQ(t, RequestType::kAdd);
  uint8_t internal = 4;
  EXPECT_FALSE(ParseRequestType(&internal, 1, &t).ok());  // engine-internal, never on the wire
}

TEST(MsgpackRoundTrip, EngineCoreOutputs) {
  EngineCoreOutput a;
  a.request_id = "r1";
  a.new_token_ids = {1, 2};
  a.new_logprobs = Logprobs{{{1, 5, 6}, {2, 7, 8}}, {{-0.1f, -2.f, -3.f}, {-0.2f, -1.f, -4.f}}, {1, 1}};
  a.events = {{1, 10.5}, {2, 10.75}};
  a.num_cached_tokens = 32;
  EngineCoreOutput b;
  b.request_id = "r2";
  b.new_token_ids = {151645};
  b.finish_reason = FinishReason::kStop;
  b.stop_token_id = 151645;
  EngineCoreOutput c;
  c.request_id = "r3";
  c.finish_reason = FinishReason::kStop;
  c.stop_string = "END";
  EngineCoreOutput d;
  d.request_id = "r4";
  d.finish_reason = FinishReason::kAbort;
  d.error_code = StatusCode::kResourceExhausted;
  d.error_message = "waiting queue is full (256 requests)";
  EngineCoreOutputs outs;
  outs.engine_index = 2;
  outs.outputs = {a, b, c, d};
  outs.scheduler_stats = SchedulerStats{3, 4, 500, 0.25, 100, 64, 1, 77, 2, {256, 17}, std::nullopt};
  outs.timestamp = 12345.5;
  outs.utility_output = UtilityOutput{9, std::nullopt, "{\"ok\":true}"};
  outs.finished_requests = std::vector<std::string>{"r2", "r3"};
  outs.wave_complete = 4;
  outs.start_wave = 5;
  EXPECT_EQ(MsgpackRoundTrip(outs), outs);
  EXPECT_EQ(MsgpackRoundTrip(EngineCoreOutputs()), EngineCoreOutputs());
  EXPECT_STREQ(FinishReasonName(FinishReason::kLength), "length");
}

TEST(MsgpackRoundTrip, SchedulerOutputDiff) {
  SchedulerOutput so;
  NewRequestData n;
  n.req_id = "new";
  n.prompt_token_ids = {5, 6, 7};
  n.sampling_params.temperature = 0.0;
  n.block_ids = {{3, 4}};
  n.num_computed_tokens = 16;
  so.scheduled_new_reqs = {n};
  so.scheduled_cached_reqs.req_ids = {"old", "back"};
  so.scheduled_cached_reqs.resumed_req_ids = {"back"};
  so.scheduled_cached_reqs.all_token_ids = {{"back", {1, 2, 3, 4}}};
  so.scheduled_cached_reqs.new_block_ids = {std::nullopt, std::vector<std::vector<int32_t>>{{9}}};
  so.scheduled_cached_reqs.num_computed_tokens = {40, 0};
  so.scheduled_cached_reqs.num_output_tokens = {3, 1};
  so.num_scheduled_tokens = {{"new", 3}, {"old", 1}, {"back", 4}};
  so.total_num_scheduled_tokens = 8;
  so.num_common_prefix_blocks = {0};
  so.finished_req_ids = {"done"};
  so.preempted_req_ids = {"victim"};
  EXPECT_EQ(MsgpackRoundTrip(so), so);
}

TEST(MsgpackRoundTrip, ModelRunnerOutput) {
  ModelRunnerOutput m;
  m.req_ids = {"a", "b"};
  m.sampled_token_ids = {{11}, {}};
  m.logprobs = {Logprobs{{{11, 3}}, {{-0.5f, -1.5f}}, {1}}, std::nullopt};
  m.num_nans_in_logits = 0;
  EXPECT_EQ(MsgpackRoundTrip(m), m);
  ModelRunnerOutput failed;
  failed.error = "worker 1: out of memory";
  EXPECT_EQ(MsgpackRoundTrip(failed), failed);
}

TEST(MsgpackRoundTrip, FloatsTravelAsFloatsAndKeepTheirSign) {
  // msgpack-c alone would write integral floats as integers (0.0 as 0x00).
  EXPECT_EQ(Encode(0.0), std::string("\xcb\0\0\0\0\0\0\0\0", 9));
  EXPECT_EQ(Encode(-2.0f), std::string("\xca\xc0\0\0\0", 5));
  double negative_zero = 1.0;
  ASSERT_TRUE(Decode(Encode(-0.0), &negative_zero).ok());
  EXPECT_TRUE(std::signbit(negative_zero));
}

TEST(Decode, RejectsWrongTypesWithTheFieldName) {
  // EngineCoreRequest whose prompt_token_ids is a string.
  wire::Buffer buffer;
  wire::Packer p(buffer);
  p.pack_array(2);
  p.pack(std::string("id"));
  p.pack(std::string("not ids"));
  EngineCoreRequest r;
  Status s = Decode(buffer.data(), buffer.size(), &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("prompt_token_ids"), std::string::npos) << s.message();
}

TEST(Decode, RejectsInconsistentSchedulerOutput) {
  SchedulerOutput so;
  so.num_scheduled_tokens = {{"a", 3}};
  so.total_num_scheduled_tokens = 4;
  std::string bytes = Encode(so);
  SchedulerOutput back;
  Status s = Decode(bytes, &back);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("total_num_scheduled_tokens"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::proto
