#include "frontend/tool_parsers/call_scanner.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "frontend/tool_parsers/json_canon.h"

namespace llmserve::frontend::tool_parsers {
namespace {

// "\"name\"" for key "name": the canonical form of a key string.
std::string Quoted(std::string_view key) {
  std::string quoted(1, '"');
  quoted.append(key);
  quoted.push_back('"');
  return quoted;
}

}  // namespace

CallObjectScanner::CallObjectScanner(std::vector<std::string_view> arg_keys)
    : arg_keys_(std::move(arg_keys)) {}

size_t CallObjectScanner::Feed(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size() && !done() && !failed()) {
    char c = bytes[i];
    switch (state_) {
      case State::kOpen:
        if (c == '{') state_ = State::kKeyOrClose;
        else if (!IsJsonWhitespace(c)) state_ = State::kError;
        ++i;
        break;
      case State::kKeyOrClose:
      case State::kKey:
        if (c == '"') {
          StartKey();  // the key stream reads the quote itself
          break;
        }
        if (c == '}' && state_ == State::kKeyOrClose) state_ = State::kDone;
        else if (!IsJsonWhitespace(c)) state_ = State::kError;
        ++i;
        break;
      case State::kInKey:
        i += key_.Feed(bytes.substr(i));
        if (key_.failed()) state_ = State::kError;
        else if (key_.done()) EndKey();
        break;
      case State::kColon:
        if (c == ':') state_ = State::kValue;
        else if (!IsJsonWhitespace(c)) state_ = State::kError;
        ++i;
        break;
      case State::kValue:
        if (IsJsonWhitespace(c)) ++i;
        else state_ = State::kInValue;
        break;
      case State::kInValue: {
        JsonValueStream& v = slot_ == Slot::kArgs ? args_ : value_;
        i += v.Feed(bytes.substr(i));
        if (v.failed()) state_ = State::kError;
        else if (v.done()) EndValue();
        break;
      }
      case State::kCommaOrClose:
        if (c == ',') state_ = State::kKey;
        else if (c == '}') state_ = State::kDone;
        else if (!IsJsonWhitespace(c)) state_ = State::kError;
        ++i;
        break;
      case State::kDone:
      case State::kError:
        break;
    }
  }
  return i;
}

void CallObjectScanner::StartKey() {
  key_ = JsonValueStream();
  state_ = State::kInKey;
}

void CallObjectScanner::EndKey() {
  slot_ = Slot::kOther;
  if (key_.out() == Quoted("name") && !name_started_) {
    name_started_ = true;
    slot_ = Slot::kName;
  }
  for (std::string_view k : arg_keys_) {
    if (key_.out() == Quoted(k) && !args_started_) {
      args_started_ = true;
      slot_ = Slot::kArgs;
    }
  }
  if (slot_ != Slot::kArgs) value_ = JsonValueStream();
  state_ = State::kColon;
}

void CallObjectScanner::EndValue() {
  state_ = State::kCommaOrClose;
  if (slot_ != Slot::kName) return;
  const std::string& text = value_.out();
  if (text.empty() || text.front() != '"') {
    state_ = State::kError;  // a name must be a string
    return;
  }
  name_ = nlohmann::json::parse(text).get<std::string>();
}

CallListScanner::CallListScanner(ListForm form, std::vector<std::string_view> arg_keys)
    : form_(form), arg_keys_(std::move(arg_keys)) {
  if (form_ == ListForm::kSemicolons) state_ = State::kObj;
}

void CallListScanner::Feed(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size() && state_ != State::kEnded && state_ != State::kError) {
    Step(bytes, &i);
  }
}

void CallListScanner::Step(std::string_view bytes, size_t* i) {
  char c = bytes[*i];
  bool array = form_ == ListForm::kArray;
  switch (state_) {
    case State::kStart:  // arrays only: the opening bracket
      if (c == '[') state_ = State::kObjOrClose;
      else if (!IsJsonWhitespace(c)) state_ = State::kError;
      ++*i;
      return;
    case State::kObjOrClose:
    case State::kObj:
      if (c == '{') {
        calls_.emplace_back(arg_keys_);
        state_ = State::kInObj;
        return;  // the object scanner reads the brace
      }
      if (c == ']' && state_ == State::kObjOrClose) state_ = State::kEnded;
      else if (!IsJsonWhitespace(c)) state_ = State::kError;
      ++*i;
      return;
    case State::kInObj: {
      CallObjectScanner& call = calls_.back();
      *i += call.Feed(bytes.substr(*i));
      if (call.failed()) state_ = State::kError;
      else if (call.done()) state_ = State::kAfterObj;
      return;
    }
    case State::kAfterObj:
      if (IsJsonWhitespace(c)) {
        // between calls
      } else if (c == (array ? ',' : ';')) {
        state_ = State::kObj;
      } else if (array) {
        state_ = c == ']' ? State::kEnded : State::kError;
      } else {
        state_ = State::kEnded;  // text after `obj; obj` is ignored
      }
      ++*i;
      return;
    case State::kEnded:
    case State::kError:
      return;
  }
}

bool CallListScanner::Complete() const {
  if (failed() || calls_.empty() || state_ == State::kInObj) return false;
  for (const CallObjectScanner& call : calls_) {
    if (!call.valid_call()) return false;
  }
  return true;
}

}  // namespace llmserve::frontend::tool_parsers
