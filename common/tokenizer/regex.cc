#include "common/tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/utf8.h"

namespace llmserve::common::tokenizer {
namespace {

// Per-thread match state: PCRE2 match data and a JIT stack large enough for
// long whitespace runs. One per thread keeps const matching lock-free.
struct ThreadMatchState {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  ThreadMatchState() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~ThreadMatchState() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

ThreadMatchState& State() {
  thread_local ThreadMatchState state;
  return state;
}

}  // namespace

std::string AdaptOnigurumaPattern(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[i + 1];
      ++i;
      if (e == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (e == 'S' && !in_class) {
        out += "[^\\s\\x{85}]";
      } else {
        out += '\\';
        out += e;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const size_t end = p.find(":]", i + 2);
      if (end != std::string_view::npos) {
        out.append(p.substr(i, end + 2 - i));
        i = end + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

StatusOr<std::unique_ptr<Regex>> Regex::Compile(std::string_view pattern, bool literal) {
  if (literal) {
    if (pattern.empty()) return Status::InvalidArgument("empty string pattern");
    return std::unique_ptr<Regex>(new Regex(nullptr, std::string(pattern)));
  }
  std::string adapted = AdaptOnigurumaPattern(pattern);
  int error = 0;
  PCRE2_SIZE offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_UCP;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(adapted.data()), adapted.size(),
                                   options, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR buffer[256];
    pcre2_get_error_message(error, buffer, sizeof(buffer));
    return Status::InvalidArgument("invalid regular expression \"" + std::string(pattern) +
                                   "\": " + reinterpret_cast<const char*>(buffer) +
                                   " at offset " + std::to_string(offset));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter on failure
  return std::unique_ptr<Regex>(new Regex(code, ""));
}

Regex::~Regex() {
  if (code_ != nullptr) pcre2_code_free(static_cast<pcre2_code*>(code_));
}

void Regex::FindAll(std::string_view text,
                    std::vector<std::pair<size_t, size_t>>* matches) const {
  if (code_ == nullptr) {
    for (size_t pos = text.find(literal_); pos != std::string_view::npos;
         pos = text.find(literal_, pos + literal_.size())) {
      matches->emplace_back(pos, pos + literal_.size());
    }
    return;
  }
  auto* code = static_cast<pcre2_code*>(code_);
  ThreadMatchState& st = State();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    int rc = pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, st.data,
                         st.context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT) {
      rc = pcre2_match(code, subject, text.size(), start, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                       st.data, st.context);
    }
    if (rc < 0) break;  // no match (or a resource limit: treat the rest as unmatched)
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
    const size_t s = ov[0], e = ov[1];
    if (e > s) {
      matches->emplace_back(s, e);
      start = e;
    } else {  // empty match: step over one character
      if (s >= text.size()) break;
      start = s + base::Utf8SequenceLength(static_cast<unsigned char>(text[s]));
    }
  }
}

std::string Regex::ReplaceAll(std::string_view text, std::string_view replacement) const {
  std::vector<std::pair<size_t, size_t>> matches;
  FindAll(text, &matches);
  if (matches.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t prev = 0;
  for (auto [s, e] : matches) {
    out.append(text.substr(prev, s - prev));
    out.append(replacement);
    prev = e;
  }
  out.append(text.substr(prev));
  return out;
}

}  // namespace llmserve::common::tokenizer
