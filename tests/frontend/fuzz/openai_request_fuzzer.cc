// libFuzzer target over the OpenAI request parsers: the first byte picks the
// endpoint (completions, chat completions with tools and constraints,
// tokenize, detokenize, scale_elastic_ep, responses, embeddings, pooling), the rest is the request body. Any
// bytes must parse or give an error, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "frontend/openai/chat_request.h"
#include "frontend/openai/completion_request.h"
#include "frontend/openai/elastic_routes.h"
#include "frontend/openai/embedding_request.h"
#include "frontend/openai/responses_request.h"
#include "frontend/openai/tokenize_request.h"

namespace openai = llmserve::frontend::openai;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  const openai::ParseOptions options;
  switch (data[0] % 8) {
    case 0: {
      openai::CompletionRequest r;
      (void)openai::ParseCompletionRequest(body, options, &r);
      break;
    }
    case 1: {
      openai::ChatCompletionRequest r;
      (void)openai::ParseChatCompletionRequest(body, options, &r);
      break;
    }
    case 2: {
      openai::TokenizeRequest r;
      (void)openai::ParseTokenizeRequest(body, &r);
      break;
    }
    case 3: {
      openai::DetokenizeRequest r;
      (void)openai::ParseDetokenizeRequest(body, &r);
      break;
    }
    case 4: {
      llmserve::proto::ScaleRequest r;
      (void)openai::ParseScaleRequest(body, &r);
      break;
    }
    case 5: {
      openai::ResponsesRequest r;
      (void)openai::ParseResponsesRequest(body, options, &r);
      break;
    }
    default: {
      openai::EmbeddingRequest r;
      (void)openai::ParseEmbeddingRequest(body, data[0] % 8 == 7, &r);
    }
  }
  return 0;
}
