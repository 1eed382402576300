// libFuzzer target over a real tokenizer (the demo model's Qwen3 tokenizer in
// assets/demo-tokenizer, or the directory in $LLMSERVE_FUZZ_TOKENIZER):
// encode of arbitrary bytes, decode, and the incremental detokenizer over
// the ids, with and without a stop string. Byte 0 holds the options; the
// rest is the text, or (bit 4) 3-byte token ids, out-of-vocabulary ones
// included. Asserts: ids are in the vocabulary; decode is valid UTF-8;
// decode(encode(text)) is text for valid NFC text without added-token
// markup, and a fixed point otherwise; for byte-level tokenizers the tokens'
// bytes concatenate to the decode; every detokenizer delta is valid UTF-8
// and the deltas concatenate to its output, which without a stop string is
// the full decode and with one ends where the stop string first appears.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <utf8proc.h>

#include "base/utf8.h"
#include "common/tokenizer/incremental_detokenizer.h"
#include "common/tokenizer/tokenizer.h"
#include "tests/fuzz_require.h"

namespace llmserve::common::tokenizer::fuzz {

using llmserve::testing::FuzzRequire;

struct Loaded {
  std::unique_ptr<Tokenizer> tokenizer;
  bool byte_level = false;  // the demo tokenizer: byte-level BPE, NFC normalizer
};

const Loaded& TheTokenizer() {
  static const Loaded* loaded = [] {
    const char* env = std::getenv("LLMSERVE_FUZZ_TOKENIZER");
    const std::string dir = env != nullptr ? env : LLMSERVE_DEMO_TOKENIZER_DIR;
    auto t = Tokenizer::FromDirectory(dir);
    if (!t.ok()) {
      std::fprintf(stderr, "tokenizer_fuzzer: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    auto* l = new Loaded();
    l->tokenizer = std::move(*t);
    l->byte_level = env == nullptr;
    return l;
  }();
  return *loaded;
}

bool IsNfc(const std::string& s) {
  utf8proc_uint8_t* nfc = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(s.c_str()));
  if (nfc == nullptr) return false;
  const bool same = s == reinterpret_cast<const char*>(nfc);
  std::free(nfc);
  return same;
}

void CheckRoundTrip(const Loaded& l, const std::string& text, const std::vector<int32_t>& ids) {
  const Tokenizer& t = *l.tokenizer;
  const std::string decoded = t.Decode(ids, /*skip_special_tokens=*/false);
  FuzzRequire(base::IsValidUtf8(decoded), "decode is not valid UTF-8");
  if (l.byte_level) {
    std::string joined;
    for (int32_t id : ids) joined += *t.TokenBytes(id);
    FuzzRequire(joined == decoded, "token bytes do not concatenate to the decode");
    if (text.find('<') == std::string::npos && text.find('\0') == std::string::npos && base::IsValidUtf8(text) &&
        IsNfc(text)) {
      FuzzRequire(decoded == text, "decode(encode(text)) != text for valid NFC text");
    }
  }
  FuzzRequire(t.Decode(t.Encode(decoded, false), false) == decoded, "decode(encode(x)) is not a fixed point");
}

void CheckDetokenizer(const Tokenizer& t, const std::vector<int32_t>& ids, bool skip_special, const std::string& stop,
                      bool include_stop) {
  DetokenizerOptions options;
  options.skip_special_tokens = skip_special;
  if (!stop.empty()) options.stop.push_back(stop);
  options.include_stop_str_in_output = include_stop;
  IncrementalDetokenizer detok(t, options);
  std::string streamed;
  size_t pushed = 0;
  for (int32_t id : ids) {
    const DetokenizerUpdate u = detok.Push(id);
    FuzzRequire(base::IsValidUtf8(u.delta), "a delta is not valid UTF-8");
    streamed += u.delta;
    if (u.stopped) break;
    ++pushed;
  }
  const DetokenizerUpdate last = detok.Finish();
  FuzzRequire(base::IsValidUtf8(last.delta), "the last delta is not valid UTF-8");
  streamed += last.delta;
  const std::string& output = detok.output_text();
  FuzzRequire(streamed == output, "the deltas do not concatenate to the output");
  if (!detok.stopped()) {
    FuzzRequire(pushed == ids.size(), "stopped without a stop string");
    FuzzRequire(output == t.Decode(ids, skip_special), "the detokenized output differs from the decode");
    FuzzRequire(stop.empty() || output.find(stop) == std::string::npos, "the output holds the stop string");
  } else if (include_stop) {
    FuzzRequire(output.size() >= stop.size() && output.compare(output.size() - stop.size(), stop.size(), stop) == 0,
                "the output does not end with the stop string");
    FuzzRequire(output.find(stop) == output.size() - stop.size(), "the stop string appears before the stop");
  } else {
    FuzzRequire(output.find(stop) == std::string::npos, "the output holds the stop string");
  }
}

}  // namespace llmserve::common::tokenizer::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = llmserve::common::tokenizer::fuzz;
  if (size < 1) return 0;
  const f::Loaded& l = f::TheTokenizer();
  const auto& t = *l.tokenizer;
  const uint8_t flags = data[0];
  const bool add_special = flags & 1, skip_special = flags & 2, include_stop = flags & 4, use_stop = flags & 8,
             raw_ids = flags & 16;
  const size_t stop_len = 1 + (flags >> 5);  // 1..8 bytes
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<int32_t> ids;
  if (raw_ids) {
    // Ids just past the vocabulary too: a model's vocabulary is often padded.
    const uint32_t range = static_cast<uint32_t>(t.vocab_size()) + 300;
    for (size_t i = 0; i + 3 <= text.size(); i += 3) {
      const uint32_t v = uint32_t{uint8_t(text[i])} | uint32_t{uint8_t(text[i + 1])} << 8 |
                         uint32_t{uint8_t(text[i + 2])} << 16;
      ids.push_back(static_cast<int32_t>(v % range));
    }
    f::FuzzRequire(llmserve::base::IsValidUtf8(t.Decode(ids, skip_special)), "decode of ids is not valid UTF-8");
  } else {
    ids = t.Encode(text, add_special);
    for (int32_t id : ids) f::FuzzRequire(id >= 0 && id < t.vocab_size(), "an encoded id is outside the vocabulary");
    if (!add_special) f::CheckRoundTrip(l, text, ids);
  }
  // The stop string: the text's last bytes, so that it often matches.
  std::string stop;
  // Requests' stop strings are JSON strings, so valid UTF-8.
  if (use_stop && !raw_ids) stop = text.substr(text.size() > stop_len ? text.size() - stop_len : 0);
  if (!llmserve::base::IsValidUtf8(stop)) stop.clear();
  f::CheckDetokenizer(t, ids, skip_special, stop, include_stop);
  return 0;
}
