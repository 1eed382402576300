#include "engine_core/structured_output_vocabulary.h"

#include <algorithm>

#include "common/tokenizer/tokenizer.h"

namespace llmserve::engine_core {

StatusOr<GrammarVocabulary> LoadGrammarVocabulary(const std::string& model_dir, int32_t model_vocab_size) {
  LLMSERVE_ASSIGN_OR_RETURN(std::unique_ptr<common::tokenizer::Tokenizer> tok,
                            common::tokenizer::Tokenizer::FromDirectory(model_dir));
  const int32_t size = std::max(tok->vocab_size(), model_vocab_size);
  std::vector<std::string> bytes(static_cast<size_t>(size));
  std::vector<int32_t> special;
  for (int32_t id = 0; id < tok->vocab_size(); ++id) {
    bytes[static_cast<size_t>(id)] = tok->TokenBytes(id).value_or("");
    if (tok->IsSpecial(id)) special.push_back(id);
  }
  std::vector<int32_t> eos = tok->eos_token_ids();
  std::erase_if(special, [&](int32_t id) { return std::find(eos.begin(), eos.end(), id) != eos.end(); });
  if (eos.empty()) return Status::InvalidArgument("the tokenizer in " + model_dir + " names no EOS token");
  GrammarVocabulary out;
  out.reasoning_end_id = tok->TokenToId("</think>").value_or(-1);
  LLMSERVE_ASSIGN_OR_RETURN(out.vocab,
                            structured_output::Vocabulary::Create(std::move(bytes), std::move(eos), std::move(special)));
  return out;
}

}  // namespace llmserve::engine_core
