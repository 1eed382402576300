#pragma once
// The grammar engine's view of a model's vocabulary: each token id's bytes
// from the model's tokenizer, its EOS ids, and the special tokens a grammar
// never allows.

#include <cstdint>
#include <string>

#include "engine_core/structured_output_manager.h"

namespace llmserve::engine_core {

// Loads MODEL_DIR's tokenizer. Ids from the tokenizer's size up to
// `model_vocab_size` (padding rows of the embedding) have no bytes and are
// never allowed; masks have ceil(max(sizes) / 32) words a row. The
// "</think>" token, when the tokenizer has one, ends reasoning.
StatusOr<GrammarVocabulary> LoadGrammarVocabulary(const std::string& model_dir, int32_t model_vocab_size);

}  // namespace llmserve::engine_core
