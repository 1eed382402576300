#pragma once
// Incremental readers of JSON tool calls: CallObjectScanner reads one
// {"name": ..., "arguments": ...} object, CallListScanner a run of them
// (`[obj, obj]` or `obj; obj`). Both take bytes as they arrive, so streaming
// and whole-text extraction share one reader and cannot disagree.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/tool_parsers/json_canon.h"

namespace llmserve::frontend::tool_parsers {

class CallObjectScanner {
 public:
  // `arg_keys`: the keys that hold the arguments (the first one met is used).
  explicit CallObjectScanner(std::vector<std::string_view> arg_keys);

  // Consumes bytes up to the object's closing brace; returns how many it used.
  size_t Feed(std::string_view bytes);
  // The closing brace was read.
  bool done() const { return state_ == State::kDone; }
  // Not JSON, or a name that is not a string.
  bool failed() const { return state_ == State::kError; }
  // The function name, once its string is complete.
  const std::optional<std::string>& name() const { return name_; }
  // The canonical text of the arguments value read so far ("" before its key).
  std::string_view arguments() const { return args_.out(); }
  // The object is complete and has a name and arguments.
  bool valid_call() const { return done() && name_ && args_.done(); }

 private:
  enum class State { kOpen, kKeyOrClose, kKey, kInKey, kColon, kValue, kInValue, kCommaOrClose, kDone, kError };
  enum class Slot { kOther, kName, kArgs };

  void StartKey();
  void EndKey();
  void EndValue();

  std::vector<std::string_view> arg_keys_;
  State state_ = State::kOpen;
  Slot slot_ = Slot::kOther;
  JsonValueStream key_;
  JsonValueStream value_;  // a value we read but do not keep (or the name)
  JsonValueStream args_;
  bool name_started_ = false;
  bool args_started_ = false;
  std::optional<std::string> name_;
};

enum class ListForm {
  kArray,       // [ {call}, {call} ]            (mistral)
  kSemicolons,  // {call}; {call}                (llama3_json)
};

class CallListScanner {
 public:
  CallListScanner(ListForm form, std::vector<std::string_view> arg_keys);

  // Consumes bytes; what follows the end of the list is ignored.
  void Feed(std::string_view bytes);
  // The calls begun so far, in order.
  const std::vector<CallObjectScanner>& calls() const { return calls_; }
  // The text is not a list of call objects.
  bool failed() const { return state_ == State::kError; }
  // What was read is a usable list: at least one call, every call complete
  // and valid, and not stopped inside an object (an unclosed list is fine).
  bool Complete() const;

 private:
  enum class State { kStart, kObjOrClose, kObj, kInObj, kAfterObj, kEnded, kError };

  void Step(std::string_view bytes, size_t* i);

  ListForm form_;
  std::vector<std::string_view> arg_keys_;
  State state_ = State::kStart;
  std::vector<CallObjectScanner> calls_;
};

}  // namespace llmserve::frontend::tool_parsers
