#include "deploy/bench/stream_accumulator.h"

#include <nlohmann/json.hpp>

namespace llmserve::deploy::bench {

void StreamAccumulator::OnEvent(std::string_view data, double now_s) {
  if (data == "[DONE]") return;
  const nlohmann::json chunk = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!chunk.is_object()) {
    if (error_.empty()) error_ = "malformed stream chunk: " + std::string(data.substr(0, 200));
    return;
  }
  if (auto e = chunk.find("error"); e != chunk.end() && !e->is_null()) {
    if (error_.empty()) error_ = "server error in stream: " + e->dump();
    return;
  }
  const auto choices = chunk.find("choices");
  if (choices != chunk.end() && choices->is_array() && !choices->empty()) {
    const nlohmann::json& c = (*choices)[0];
    if (auto fr = c.find("finish_reason"); fr != c.end() && fr->is_string()) {
      out_->finish_reason = fr->get<std::string>();
    }
    std::string text;
    bool token = true;
    if (api_ == ApiKind::kCompletions) {
      if (auto t = c.find("text"); t != c.end() && t->is_string()) text = t->get<std::string>();
    } else {
      token = false;
      if (auto d = c.find("delta"); d != c.end() && d->is_object()) {
        for (const char* key : {"content", "reasoning_content", "reasoning"}) {
          auto t = d->find(key);
          if (t != d->end() && t->is_string() && !t->get_ref<const std::string&>().empty()) {
            text += t->get<std::string>();
            token = true;
          }
        }
      }
    }
    if (token) {
      if (!first_token_seen_) {
        first_token_seen_ = true;
        out_->ttft = now_s - start_s_;
      } else {
        out_->itl.push_back(now_s - last_token_s_);
      }
      last_token_s_ = now_s;
      out_->generated_text += text;
    }
  }
  if (auto u = chunk.find("usage"); u != chunk.end() && u->is_object()) {
    if (auto ct = u->find("completion_tokens"); ct != u->end() && ct->is_number_integer()) {
      out_->output_tokens = ct->get<int64_t>();
      out_->usage_reported = true;
    }
    if (auto pt = u->find("prompt_tokens"); pt != u->end() && pt->is_number_integer()) {
      out_->prompt_len = pt->get<int64_t>();
    }
  }
}

void StreamAccumulator::Finish() {
  if (!error_.empty()) {
    out_->success = false;
    out_->error = error_;
  } else if (!first_token_seen_) {
    out_->success = false;
    out_->error = "the stream ended without a token chunk";
  } else {
    out_->success = true;
  }
  out_->latency = first_token_seen_ ? last_token_s_ - start_s_ : 0;
}

}  // namespace llmserve::deploy::bench
