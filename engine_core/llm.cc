#include "engine_core/llm.h"

#include <map>

#include "base/wall_clock.h"

namespace llmserve::engine_core {

StatusOr<std::unique_ptr<LLM>> LLM::Create(const proto::EngineConfig& config) {
  std::unique_ptr<LLM> llm(new LLM());
  LLMSERVE_ASSIGN_OR_RETURN(llm->tokenizer_, common::tokenizer::Tokenizer::FromDirectory(
                                                   config.model().tokenizer().empty() ? config.model().model_dir()
                                                                                      : config.model().tokenizer()));
  LLMSERVE_ASSIGN_OR_RETURN(llm->engine_, BuildEngineCore(config, 0));
  return llm;
}

StatusOr<std::vector<LLMOutput>> LLM::Generate(const std::vector<LLMPrompt>& prompts,
                                               const proto::SamplingParams& sampling,
                                               const std::function<void(size_t, size_t)>& progress) {
  std::vector<LLMOutput> outputs(prompts.size());
  std::map<std::string, size_t> index_of;
  const auto now = base::EpochSeconds();
  for (size_t i = 0; i < prompts.size(); ++i) {
    LLMOutput& out = outputs[i];
    out.prompt = prompts[i].text;
    out.prompt_token_ids = prompts[i].token_ids.empty() ? tokenizer_->Encode(prompts[i].text, true) : prompts[i].token_ids;
    if (out.prompt_token_ids.empty()) return Status::InvalidArgument("prompt " + std::to_string(i) + " is empty");
    proto::EngineCoreRequest r;
    r.request_id = "gen-" + std::to_string(next_id_++);
    r.prompt_token_ids = out.prompt_token_ids;
    r.sampling_params = prompts[i].sampling.value_or(sampling);
    if (r.sampling_params.all_stop_token_ids.empty() && !r.sampling_params.ignore_eos)
      r.sampling_params.all_stop_token_ids = tokenizer_->eos_token_ids();
    for (int32_t id : r.sampling_params.stop_token_ids) r.sampling_params.all_stop_token_ids.push_back(id);
    r.arrival_time = now;
    index_of[r.request_id] = i;
    Status s = engine_.core->AddRequest(std::move(r));
    if (!s.ok()) return s.WithContext("prompt " + std::to_string(i));
  }
  size_t done = 0;
  while (engine_.core->HasRequests()) {
    LLMSERVE_ASSIGN_OR_RETURN(auto step, engine_.core->Step());
    for (auto& client : step) {
      if (client.outputs.scheduler_stats) num_preemptions_ += client.outputs.scheduler_stats->num_preemptions;
      for (auto& o : client.outputs.outputs) {
        auto it = index_of.find(o.request_id);
        if (it == index_of.end()) continue;
        LLMOutput& out = outputs[it->second];
        out.token_ids.insert(out.token_ids.end(), o.new_token_ids.begin(), o.new_token_ids.end());
        if (o.finish_reason) {
          out.finish_reason = proto::FinishReasonName(*o.finish_reason);
          if (progress) progress(++done, prompts.size());
        }
      }
    }
  }
  for (auto& out : outputs) out.text = tokenizer_->Decode(out.token_ids, true);
  return outputs;
}

}  // namespace llmserve::engine_core
