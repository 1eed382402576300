// Every data-plane message encodes to exactly the bytes an independent encoder
// (python3-msgpack, scripts/make_wire_fixtures.py) writes for the same
// instance, and decoding those bytes gives the instance back. The fixtures are
// checked against the script's current output by the ctest entry
// proto.wire_fixtures_current.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "proto/messages.h"

namespace llmserve::proto {
namespace {

const std::filesystem::path kFixtureDir = LLMSERVE_WIRE_FIXTURES;

// The fixture's hex digits with the line breaks removed.
std::string ReadFixtureHex(const std::string& name) {
  std::ifstream in(kFixtureDir / (name + ".hex"));
  EXPECT_TRUE(in.good()) << "missing fixture " << name << ".hex";
  std::string hex, line;
  while (std::getline(in, line)) hex += line;
  return hex;
}

std::string ToHex(std::string_view bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex += kDigits[c >> 4];
    hex += kDigits[c & 15];
  }
  return hex;
}

std::string FromHex(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return bytes;
}

template <typename T>
void ExpectGolden(const std::string& name, const T& value) {
  const std::string want = ReadFixtureHex(name);
  EXPECT_EQ(ToHex(Encode(value)), want) << "C++ encoding differs from " << name << ".hex";
  T decoded;
  Status status = Decode(FromHex(want), &decoded);
  ASSERT_TRUE(status.ok()) << name << ": " << status.ToString();
  EXPECT_TRUE(decoded == value) << name << ".hex decodes to a different value";
}

// ---- the instances of scripts/make_wire_fixtures.py, built in C++ -------------------

Logprobs TwoRowLogprobs() {
  return Logprobs{{{1, 5, 6}, {2, 7, 8}}, {{-0.5f, -2.f, -3.75f}, {-0.125f, -1.f, -4.5f}}, {1, 2}};
}

SamplingParams FullSamplingParams() {
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
  s.logit_bias = {{42, 2.5}, {10, -100.0}};
  s.allowed_token_ids = {1, 2, 3};
  s.all_stop_token_ids = {151645};
  return s;
}

EngineCoreRequest Request(std::string id, std::vector<int32_t> prompt, double arrival) {
  EngineCoreRequest r;
  r.request_id = std::move(id);
  r.prompt_token_ids = std::move(prompt);
  r.arrival_time = arrival;
  return r;
}

EngineCoreRequest CacheSaltRequest() {
  EngineCoreRequest r = Request("y", {1, 2}, 2.5);
  r.sampling_params.top_k = 5;
  r.cache_salt = "tenant-7";
  return r;
}

EngineCoreRequest PoolingRequest() {
  EngineCoreRequest r = Request("embd-1-0", {3, 4, 5}, 3.5);
  r.sampling_params.max_tokens = 1;
  r.pooling_params = PoolingParams{.dimensions = 8, .normalize = false};
  return r;
}

EngineCoreRequest FullRequest() {
  EngineCoreRequest r = Request("cmpl-abc-0", {785, 6722, 315, 9625, 374}, 1763769600.25);
  r.sampling_params.temperature = 0.0;
  r.sampling_params.max_tokens = 64;
  r.sampling_params.stop = {"END"};
  r.lora_name = "adapter";
  r.cache_salt = "tenant-7";
  r.data_parallel_rank = 3;
  r.prompt_is_token_ids = true;
  r.client_index = 2;
  r.current_wave = 9;
  r.priority = -1;
  r.reasoning_ended = false;
  return r;
}

EngineCoreOutput OutputWithTokens() {
  EngineCoreOutput o;
  o.request_id = "r1";
  o.new_token_ids = {1, 2};
  o.new_logprobs = TwoRowLogprobs();
  o.events = {{1, 10.5}, {2, 10.75}};
  o.num_cached_tokens = 32;
  return o;
}

EngineCoreOutput OutputStopToken() {
  EngineCoreOutput o;
  o.request_id = "r2";
  o.new_token_ids = {151645};
  o.finish_reason = FinishReason::kStop;
  o.stop_token_id = 151645;
  return o;
}

// Prompt tokens 4 (rank 1) and 6 (rank 2), each with its top 2.
Logprobs PromptLogprobsTwoRows() {
  return Logprobs{{{4, 4, 8}, {6, 2, 6}}, {{-1.25f, -1.25f, -2.5f}, {-0.75f, -0.5f, -0.75f}}, {1, 2}};
}

EngineCoreOutput OutputPromptLogprobs() {
  EngineCoreOutput o;
  o.request_id = "r5";
  o.new_token_ids = {9};
  o.new_prompt_logprobs = PromptLogprobsTwoRows();
  return o;
}

EngineCoreOutput OutputPooling() {
  EngineCoreOutput o;
  o.request_id = "embd-1-0";
  o.pooling_output = std::vector<float>{0.5f, -1.25f, 3.0f};
  o.finish_reason = FinishReason::kStop;
  return o;
}

EngineCoreOutput OutputStopString() {
  EngineCoreOutput o;
  o.request_id = "r3";
  o.finish_reason = FinishReason::kStop;
  o.stop_string = "END";
  return o;
}

EngineCoreOutput OutputError() {
  EngineCoreOutput o;
  o.request_id = "r4";
  o.finish_reason = FinishReason::kAbort;
  o.error_code = StatusCode::kResourceExhausted;
  o.error_message = "waiting queue is full (256 requests)";
  return o;
}

// {"do_remote_decode": false, "do_remote_prefill": true, "remote_block_ids": [4, 5]}
EncodedValue KVTransferParams() {
  wire::Buffer buffer;
  wire::Packer p(buffer);
  p.pack_map(3);
  p.pack(std::string("do_remote_decode"));
  p.pack(false);
  p.pack(std::string("do_remote_prefill"));
  p.pack(true);
  p.pack(std::string("remote_block_ids"));
  p.pack(std::vector<int32_t>{4, 5});
  return EncodedValue{std::string(buffer.data(), buffer.size())};
}

SamplingParams KVTransferSamplingParams() {
  wire::Buffer buffer;
  wire::Packer p(buffer);
  p.pack_map(1);
  p.pack(std::string("kv_transfer_params"));
  SamplingParams s;
  s.extra_args.msgpack = std::string(buffer.data(), buffer.size()) + KVTransferParams().msgpack;
  return s;
}

EngineCoreOutput OutputKVTransferParams() {
  EngineCoreOutput o;
  o.request_id = "p1";
  o.new_token_ids = {8};
  o.finish_reason = FinishReason::kLength;
  o.kv_transfer_params = KVTransferParams();
  return o;
}

SchedulerStats Stats() { return SchedulerStats{3, 4, 500, 0.25, 100, 64, 1, 77, 2, {256, 17}, std::nullopt}; }

SchedulerStats SpecDecodingStatsOnly() {
  SchedulerStats s;
  s.num_running_reqs = 1;
  s.step_counter = 9;
  s.spec_decoding_stats = SpecDecodingStats{4, 3, 10, 6, {3, 2, 1}};
  return s;
}

EngineCoreOutputs WaveComplete() {
  EngineCoreOutputs outs;
  outs.wave_complete = 4;
  return outs;
}

EngineCoreOutputs FullOutputs() {
  EngineCoreOutputs outs;
  outs.engine_index = 2;
  outs.outputs = {OutputWithTokens(), OutputStopToken()};
  outs.scheduler_stats = Stats();
  outs.timestamp = 12345.5;
  outs.utility_output = UtilityOutput{9, std::nullopt, "{\"ok\":true}"};
  outs.finished_requests = std::vector<std::string>{"r2", "r3"};
  outs.wave_complete = 4;
  outs.start_wave = 5;
  return outs;
}

NewRequestData NewRequest() {
  NewRequestData n;
  n.req_id = "new";
  n.prompt_token_ids = {5, 6, 7};
  n.sampling_params.temperature = 0.0;
  n.block_ids = {{3, 4}};
  n.num_computed_tokens = 16;
  return n;
}

CachedRequestData CachedRequests() {
  CachedRequestData c;
  c.req_ids = {"old", "back"};
  c.resumed_req_ids = {"back"};
  c.all_token_ids = {{"back", {1, 2, 3, 4}}};
  c.new_block_ids = {std::nullopt, std::vector<std::vector<int32_t>>{{9}}};
  c.num_computed_tokens = {40, 0};
  c.num_output_tokens = {3, 1};
  return c;
}

SamplingParams JsonSchemaSamplingParams() {
  SamplingParams s;
  s.structured_outputs.emplace();
  s.structured_outputs->json = R"({"type":"object"})";
  s.structured_outputs->disable_any_whitespace = true;
  return s;
}

SamplingParams ChoiceSamplingParams() {
  SamplingParams s;
  s.temperature = 0.0;
  s.structured_outputs.emplace();
  s.structured_outputs->choice = std::vector<std::string>{"yes", "no"};
  return s;
}

SchedulerOutput Step() {
  SchedulerOutput so;
  so.scheduled_new_reqs = {NewRequest()};
  so.scheduled_cached_reqs = CachedRequests();
  so.num_scheduled_tokens = {{"new", 3}, {"old", 1}, {"back", 4}};
  so.total_num_scheduled_tokens = 8;
  so.scheduled_spec_decode_tokens = {{"old", {17}}};
  so.num_common_prefix_blocks = {0};
  so.finished_req_ids = {"done"};
  so.preempted_req_ids = {"victim"};
  so.structured_output_request_ids = {{"new", 0}};
  so.grammar_bitmask.words = {-1, 5};
  // {"requests": [["new", true]]}: a connector's metadata, passed through as it is.
  wire::Buffer buffer;
  wire::Packer p(buffer);
  p.pack_map(1);
  p.pack(std::string("requests"));
  p.pack_array(1);
  p.pack_array(2);
  p.pack(std::string("new"));
  p.pack(true);
  so.kv_connector_metadata.msgpack.assign(buffer.data(), buffer.size());
  return so;
}

ModelRunnerOutput RunnerOutput() {
  ModelRunnerOutput m;
  m.req_ids = {"a", "b"};
  m.sampled_token_ids = {{11}, {}};
  m.logprobs = {Logprobs{{{11, 3}}, {{-0.5f, -1.5f}}, {1}}, std::nullopt};
  m.prompt_logprobs = {{"a", PromptLogprobsTwoRows()}};
  return m;
}

ModelRunnerOutput RunnerKVConnectorOutput() {
  ModelRunnerOutput m;
  m.req_ids = {"a"};
  m.sampled_token_ids = {{11}};
  m.logprobs = {std::nullopt};
  m.kv_connector_output = KVConnectorOutput{{"done"}, {}, {3, 4}};
  return m;
}

ModelRunnerOutput RunnerError() {
  ModelRunnerOutput m;
  m.error = "worker 1: out of memory";
  return m;
}

// ---- one parameterised test per fixture ----------------------------------------------

struct Golden {
  std::string name;
  std::function<void(const std::string&)> check;
};

template <typename T>
Golden Case(std::string name, T value) {
  return {std::move(name), [value](const std::string& n) { ExpectGolden(n, value); }};
}

const std::vector<Golden>& Cases() {
  static const std::vector<Golden> cases = {
      Case("sampling_params_default", SamplingParams()),
      Case("sampling_params_full", FullSamplingParams()),
      Case("sampling_params_json_schema", JsonSchemaSamplingParams()),
      Case("sampling_params_choice", ChoiceSamplingParams()),
      Case("sampling_params_kv_transfer", KVTransferSamplingParams()),
      Case("engine_core_request_minimal", Request("x", {1}, 1.0)),
      Case("engine_core_request_cache_salt", CacheSaltRequest()),
      Case("engine_core_request_pooling", PoolingRequest()),
      Case("engine_core_request_full", FullRequest()),
      Case("utility_request", UtilityRequest{1, int64_t{1} << 33, "reset_prefix_cache", {"a", "b"}}),
      Case("start_dp_wave", StartDpWave{12, -1}),
      Case("abort_request_ids", std::vector<std::string>{"r1", "cmpl-0123456789abcdef0123456789abcdef"}),
      Case("logprobs", TwoRowLogprobs()),
      Case("engine_core_event", EngineCoreEvent{2, 10.75}),
      Case("engine_core_output_tokens", OutputWithTokens()),
      Case("engine_core_output_stop_token", OutputStopToken()),
      Case("engine_core_output_stop_string", OutputStopString()),
      Case("engine_core_output_prompt_logprobs", OutputPromptLogprobs()),
      Case("engine_core_output_pooling", OutputPooling()),
      Case("engine_core_output_error", OutputError()),
      Case("engine_core_output_kv_transfer_params", OutputKVTransferParams()),
      Case("scheduler_stats", Stats()),
      Case("scheduler_stats_spec_decoding", SpecDecodingStatsOnly()),
      Case("utility_output", UtilityOutput{9, std::nullopt, "{\"ok\":true}"}),
      Case("engine_core_outputs_empty", EngineCoreOutputs()),
      Case("engine_core_outputs_wave_complete", WaveComplete()),
      Case("engine_core_outputs_full", FullOutputs()),
      Case("new_request_data", NewRequest()),
      Case("cached_request_data", CachedRequests()),
      Case("scheduler_output", Step()),
      Case("model_runner_output", RunnerOutput()),
      Case("model_runner_output_error", RunnerError()),
      Case("model_runner_output_kv_connector", RunnerKVConnectorOutput()),
  };
  return cases;
}

// Names the case in gtest's output (and so in the ctest entry's name).
void PrintTo(const Golden& golden, std::ostream* os) { *os << golden.name; }

class GoldenBytes : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenBytes, EncodesToTheFixtureAndDecodesBack) { GetParam().check(GetParam().name); }

INSTANTIATE_TEST_SUITE_P(Wire, GoldenBytes, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Golden>& info) { return info.param.name; });

TEST(GoldenBytesFixtures, EveryFixtureFileHasACase) {
  std::set<std::string> files, cases;
  for (const auto& entry : std::filesystem::directory_iterator(kFixtureDir))
    if (entry.path().extension() == ".hex") files.insert(entry.path().stem().string());
  for (const Golden& g : Cases()) cases.insert(g.name);
  EXPECT_EQ(files, cases);
}

}  // namespace
}  // namespace llmserve::proto
