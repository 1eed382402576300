#pragma once
// Beam search as vLLM runs it above the engine (vllm/beam_search.py and the
// online `beam_search` its OpenAI server calls for `use_beam_search`), without
// any I/O: the caller sends each live beam to the engine as a one-token
// request asking for 2 × beam_width logprobs, feeds the rows back to Step(),
// and at the end reads Best().
//
// One step: every (beam, candidate token) pair becomes a candidate with the
// beam's cumulative logprob plus the token's. A candidate that is the EOS
// token (unless ignore_eos) ends its beam: it joins the ended beams whatever
// its rank. The beam_width best of the others (by cumulative logprob) are the
// next live beams. The search runs max_tokens steps (there is no early stop:
// live beams are always refilled) or until no candidate is left.
//
// The end: ended and live beams together, sorted by vLLM's score, the
// cumulative logprob over len(prompt + output)^length_penalty, where a last
// token equal to EOS is not counted; the best beam_width are the answer.
//
// Ties are broken deterministically: candidates by beam order, then by their
// position in the engine's row; final beams ended first, in the order they
// ended, then live ones in rank order (a stable sort, as Python's sorted()).

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace llmserve::frontend::serving {

struct BeamSearchParams {
  int32_t beam_width = 1;                // the request's n
  int32_t max_tokens = 1;                // steps at most
  bool ignore_eos = false;               // EOS is a token like any other
  double length_penalty = 1.0;
  bool include_stop_str_in_output = false;  // an ended beam keeps its EOS token
  std::optional<int32_t> eos_token_id;   // the tokenizer's EOS; unset: no beam ends early
};

// A beam's candidate next token: (token id, logprob).
using BeamCandidate = std::pair<int32_t, double>;

struct Beam {
  std::vector<int32_t> tokens;  // prompt + output (+ the EOS that ended it, when kept)
  double cum_logprob = 0.0;
  bool ended_by_eos = false;    // finish_reason "stop" (else "length")
  // Each step's candidate row it grew from (repeats dropped), for logprobs;
  // an EOS-ended beam has the row of its EOS too.
  std::vector<std::vector<BeamCandidate>> rows;
};

// vLLM's get_beam_search_score: cum_logprob / seq_len^length_penalty, with
// seq_len = tokens.size() less one when the last token is `eos_token_id`.
double BeamSearchScore(const std::vector<int32_t>& tokens, double cum_logprob,
                       std::optional<int32_t> eos_token_id, double length_penalty);

class BeamSearch {
 public:
  BeamSearch(BeamSearchParams params, std::vector<int32_t> prompt);

  const BeamSearchParams& params() const { return params_; }
  size_t prompt_len() const { return prompt_len_; }
  int32_t steps() const { return steps_; }

  // The beams to send to the engine this step.
  const std::vector<Beam>& live() const { return live_; }

  // True once max_tokens steps ran or no beam is left to extend.
  bool done() const { return steps_ >= params_.max_tokens || live_.empty(); }

  // Advances one step. `candidates[i]` are live()[i]'s next tokens in the
  // engine's order; a token id repeated in a row counts once (its first entry).
  void Step(const std::vector<std::vector<BeamCandidate>>& candidates);

  // The best beam_width of the ended and live beams, best first.
  std::vector<Beam> Best() const;

  // A beam's output token ids (token_ids in the response; usage counts them).
  std::vector<int32_t> OutputTokens(const Beam& beam) const;

  // The ids its text is decoded from: the output less a last EOS (unless ignore_eos).
  std::vector<int32_t> TextTokens(const Beam& beam) const;

 private:
  BeamSearchParams params_;
  size_t prompt_len_ = 0;
  int32_t steps_ = 0;
  std::vector<Beam> live_;
  std::vector<Beam> ended_;
};

}  // namespace llmserve::frontend::serving
