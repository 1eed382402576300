// The scheduler with structured outputs: requests wait for their grammar,
// constrained requests that sample get a bitmask row, sampled tokens advance
// the grammar, and failures finish the request with an error output.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine_core/structured_output_manager.h"
#include "scheduler_test_util.h"

namespace llmserve::engine_core {
namespace {

using testing::ById;
using testing::MakeRequest;
using testing::MakeScheduler;

constexpr int32_t kEos = 300;
constexpr int32_t kThinkEnd = 301;  // "</think>"
constexpr int32_t kVocab = 320;     // 256 single bytes, "no", "yes", ..., EOS at 300

StatusOr<GrammarVocabulary> ByteVocabulary() {
  std::vector<std::string> bytes(kVocab);
  for (int i = 0; i < 256; ++i) bytes[static_cast<size_t>(i)] = std::string(1, static_cast<char>(i));
  bytes[256] = "no";
  bytes[257] = "yes";
  bytes[kThinkEnd] = "</think>";
  GrammarVocabulary v;
  v.reasoning_end_id = kThinkEnd;
  LLMSERVE_ASSIGN_OR_RETURN(v.vocab, structured_output::Vocabulary::Create(std::move(bytes), {kEos}, {kThinkEnd}));
  return v;
}

proto::EngineCoreRequest Constrained(const std::string& id, proto::StructuredOutputsParams params,
                                     int32_t prompt_len = 3) {
  proto::EngineCoreRequest r = MakeRequest(id, prompt_len, /*max_tokens=*/32);
  r.sampling_params.structured_outputs = std::move(params);
  r.sampling_params.all_stop_token_ids = {kEos};
  return r;
}

proto::StructuredOutputsParams Choice(std::vector<std::string> choices) {
  proto::StructuredOutputsParams p;
  p.choice = std::move(choices);
  return p;
}

bool Allowed(const proto::SchedulerOutput& so, const std::string& id, int32_t token) {
  const int32_t row = so.structured_output_request_ids.at(id);
  const size_t width = so.grammar_bitmask.words.size() / so.structured_output_request_ids.size();
  const auto word = static_cast<uint32_t>(so.grammar_bitmask.words[row * width + static_cast<size_t>(token) / 32]);
  return (word >> (token % 32)) & 1u;
}

class StructuredOutputScheduler : public ::testing::Test {
 protected:
  void SetUp() override {
    SchedulerConfig sc;
    sc.max_model_len = 64;
    sc.max_num_batched_tokens = 64;
    scheduler_ = MakeScheduler(sc, 64);
    scheduler_->SetStructuredOutputManager(&manager_);
  }

  // Waits until the compile thread has finished `n` compilations (the next
  // Schedule() then admits their requests).
  void AwaitGrammars(int64_t n = 1) {
    while (manager_.num_compiled() < n) manager_.WaitForCompiled(std::chrono::milliseconds(100));
  }

  // One step in which every sampling request picks `pick(allowed row)`.
  std::vector<ClientOutputs> StepPicking(const std::function<int32_t(const proto::SchedulerOutput&, const Request&)>& pick,
                                         proto::SchedulerOutput* copy = nullptr) {
    const proto::SchedulerOutput& so = scheduler_->Schedule();
    if (copy != nullptr) *copy = so;
    return scheduler_->UpdateFromOutput(
        so, testing::ReplyFor(*scheduler_, so, [&](const Request& r) { return pick(so, r); }));
  }

  StructuredOutputManager manager_{ByteVocabulary};
  std::unique_ptr<Scheduler> scheduler_;
};

// The lowest allowed token of the request's row.
int32_t LowestAllowed(const proto::SchedulerOutput& so, const Request& r) {
  for (int32_t t = 0; t < kVocab; ++t) {
    if (Allowed(so, r.request_id, t)) return t;
  }
  return -1;
}

TEST_F(StructuredOutputScheduler, WaitsForItsGrammarThenFollowsIt) {
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("c", Choice({"yes", "no"}))).ok());
  EXPECT_EQ(scheduler_->FindRequest("c")->status, RequestStatus::kWaitingForStructuredOutputGrammar);
  AwaitGrammars();
  std::vector<int32_t> tokens;
  for (int step = 0; step < 10 && scheduler_->HasRequests(); ++step) {
    proto::SchedulerOutput so;
    auto outs = ById(StepPicking(LowestAllowed, &so));
    ASSERT_EQ(so.structured_output_request_ids.count("c"), 1u);
    for (int32_t t : outs["c"].new_token_ids) tokens.push_back(t);
    if (outs["c"].finish_reason) {
      EXPECT_EQ(*outs["c"].finish_reason, proto::FinishReason::kStop);
    }
  }
  // 'n' < 'y' < "no" < "yes": the lowest path spells n, o, then EOS.
  EXPECT_EQ(tokens, (std::vector<int32_t>{'n', 'o', kEos}));
  EXPECT_FALSE(scheduler_->HasRequests());
}

TEST_F(StructuredOutputScheduler, MaskAllowsExactlyTheGrammarsNextTokens) {
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("c", Choice({"yes", "no"}))).ok());
  AwaitGrammars();
  proto::SchedulerOutput so;
  StepPicking([](const proto::SchedulerOutput&, const Request&) { return 257; }, &so);  // "yes"
  for (int32_t t = 0; t < kVocab; ++t) {
    const bool want = t == 'y' || t == 'n' || t == 256 || t == 257;
    EXPECT_EQ(Allowed(so, "c", t), want) << "token " << t;
  }
  StepPicking([](const proto::SchedulerOutput&, const Request&) { return kEos; }, &so);
  EXPECT_TRUE(Allowed(so, "c", kEos));
  EXPECT_FALSE(Allowed(so, "c", 'y'));
}

TEST_F(StructuredOutputScheduler, PartialPrefillChunksGetNoRow) {
  SchedulerConfig sc;
  sc.max_model_len = 64;
  sc.max_num_batched_tokens = 8;
  scheduler_ = MakeScheduler(sc, 64);
  scheduler_->SetStructuredOutputManager(&manager_);
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("c", Choice({"no"}), /*prompt_len=*/20)).ok());
  AwaitGrammars();
  proto::SchedulerOutput so;
  StepPicking(LowestAllowed, &so);  // tokens 0..8
  EXPECT_TRUE(so.structured_output_request_ids.empty());
  EXPECT_TRUE(so.grammar_bitmask.words.empty());
  StepPicking(LowestAllowed, &so);  // 8..16
  EXPECT_TRUE(so.structured_output_request_ids.empty());
  auto outs = ById(StepPicking(LowestAllowed, &so));  // 16..20: samples
  EXPECT_EQ(so.structured_output_request_ids.size(), 1u);
  EXPECT_EQ(outs["c"].new_token_ids, (std::vector<int32_t>{'n'}));
}

TEST_F(StructuredOutputScheduler, ATokenTheGrammarForbidsFinishesWithAnError) {
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("c", Choice({"yes"}))).ok());
  AwaitGrammars();
  auto outs = ById(StepPicking([](const proto::SchedulerOutput&, const Request&) { return int32_t{'x'}; }));
  ASSERT_TRUE(outs["c"].finish_reason.has_value());
  EXPECT_EQ(*outs["c"].finish_reason, proto::FinishReason::kError);
  EXPECT_FALSE(scheduler_->HasRequests());
}

TEST_F(StructuredOutputScheduler, AGrammarThatDoesNotCompileIsAnErrorOutput) {
  proto::StructuredOutputsParams bad;
  bad.regex = "(unclosed";
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("bad", bad)).ok());
  ASSERT_TRUE(scheduler_->AddRequest(MakeRequest("plain", 3, 2)).ok());
  std::map<std::string, proto::EngineCoreOutput> seen;
  for (int step = 0; step < 50 && scheduler_->HasRequests(); ++step) {
    for (auto& [id, out] : ById(StepPicking([](const proto::SchedulerOutput&, const Request&) { return 7; })))
      if (out.finish_reason) seen[id] = out;
    if (scheduler_->HasGrammarsCompiling()) manager_.WaitForCompiled(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(seen.count("bad"), 1u);
  EXPECT_EQ(*seen["bad"].finish_reason, proto::FinishReason::kError);
  EXPECT_NE(seen["bad"].error_message.value_or("").find("invalid regex"), std::string::npos);
  ASSERT_EQ(seen.count("plain"), 1u);  // the other request was not held up
  EXPECT_EQ(*seen["plain"].finish_reason, proto::FinishReason::kLength);
}

TEST_F(StructuredOutputScheduler, AReasoningRequestIsFreeUntilTheEndOfReasoning) {
  proto::EngineCoreRequest req = Constrained("c", Choice({"yes"}));
  req.reasoning_ended = false;
  ASSERT_TRUE(scheduler_->AddRequest(req).ok());
  AwaitGrammars();
  proto::SchedulerOutput so;
  auto pick = [](int32_t t) { return [t](const proto::SchedulerOutput&, const Request&) { return t; }; };
  auto outs = ById(StepPicking(pick('x'), &so));  // reasoning: anything goes
  EXPECT_TRUE(so.structured_output_request_ids.empty());
  EXPECT_FALSE(outs["c"].finish_reason.has_value());
  StepPicking(pick(kThinkEnd), &so);  // ends reasoning; itself unconstrained
  EXPECT_TRUE(so.structured_output_request_ids.empty());
  outs = ById(StepPicking(pick(257), &so));  // now the grammar holds
  ASSERT_EQ(so.structured_output_request_ids.count("c"), 1u);
  EXPECT_TRUE(Allowed(so, "c", 'y'));
  EXPECT_FALSE(Allowed(so, "c", 'x'));
  EXPECT_FALSE(outs["c"].finish_reason.has_value());
  outs = ById(StepPicking(pick(kEos), &so));
  EXPECT_EQ(outs["c"].finish_reason, proto::FinishReason::kStop);
}

TEST_F(StructuredOutputScheduler, EqualConstraintsCompileOnce) {
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("a", Choice({"yes", "no"}))).ok());
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("b", Choice({"yes", "no"}))).ok());
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("c", Choice({"no"}))).ok());
  AwaitGrammars(2);
  EXPECT_EQ(manager_.num_cache_hits(), 1);
}

TEST_F(StructuredOutputScheduler, AbortWhileCompilingReleasesTheRequest) {
  ASSERT_TRUE(scheduler_->AddRequest(Constrained("c", Choice({"yes"}))).ok());
  const std::vector<std::string> ids = {"c"};
  scheduler_->FinishRequests(ids, RequestStatus::kFinishedAborted);
  EXPECT_FALSE(scheduler_->HasGrammarsCompiling());
  EXPECT_FALSE(scheduler_->HasRequests());
}

// A request preempted mid-output is recomputed from its prompt and output
// tokens; its grammar keeps its state (nothing to roll back) and the request
// goes on where it stopped.
TEST_F(StructuredOutputScheduler, PreemptedRequestsResumeTheirGrammar) {
  SchedulerConfig sc;
  sc.max_model_len = 64;
  sc.max_num_batched_tokens = 64;
  scheduler_ = MakeScheduler(sc, 17);  // 16 usable blocks of 4: three requests need 30
  scheduler_->SetStructuredOutputManager(&manager_);
  proto::StructuredOutputsParams p;
  p.regex = "abcdefghijklmnopqrst";
  for (const char* id : {"a", "b", "c"}) ASSERT_TRUE(scheduler_->AddRequest(Constrained(id, p, 18)).ok());
  AwaitGrammars();
  std::map<std::string, std::string> text;
  int preemptions = 0;
  for (int step = 0; step < 200 && scheduler_->HasRequests(); ++step) {
    proto::SchedulerOutput so;
    for (auto& [id, out] : ById(StepPicking(LowestAllowed, &so))) {
      for (int32_t t : out.new_token_ids) text[id] += t == kEos ? std::string("<eos>") : std::string(1, static_cast<char>(t));
      if (out.finish_reason) {
        EXPECT_EQ(*out.finish_reason, proto::FinishReason::kStop) << id;
      }
    }
    preemptions += static_cast<int>(so.preempted_req_ids.size());
  }
  EXPECT_GT(preemptions, 0);
  for (const char* id : {"a", "b", "c"}) EXPECT_EQ(text[id], "abcdefghijklmnopqrst<eos>") << id;
}

TEST(StructuredOutputSchedulerWithoutManager, RefusesConstrainedRequests) {
  SchedulerConfig sc;
  sc.max_model_len = 64;
  auto s = MakeScheduler(sc, 64);
  Status st = s->AddRequest(Constrained("c", Choice({"yes"})));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(s->HasRequests());
}

}  // namespace
}  // namespace llmserve::engine_core
