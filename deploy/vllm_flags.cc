#include "deploy/vllm_flags.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace llmserve::deploy {

namespace {

// One flag argument taken apart: "--max_loras=4" -> {"max-loras", "4"}.
struct FlagArg {
  std::string name;                  // long name, dashed, aliases resolved, no leading dashes
  std::optional<std::string> value;  // the part after '=' (or glued to -O, as in -O3)
};

// Arguments argparse would not take as a flag: positionals and negative numbers.
bool IsFlagLike(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-') return false;
  return !(std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

const VllmFlagAlias* FindAlias(const std::string& spelling, bool short_form) {
  for (const auto& a : VllmFlagAliases())
    if (a.short_form == short_form && a.spelling == spelling) return &a;
  return nullptr;
}

// Takes `arg` apart; nullopt when it is not a long flag or a known short alias
// (such arguments are passed on untouched).
std::optional<FlagArg> ParseFlag(const std::string& arg) {
  if (!IsFlagLike(arg) || arg == "--") return std::nullopt;
  const bool long_form = arg[1] == '-';
  std::string body = arg.substr(long_form ? 2 : 1);
  FlagArg flag;
  if (const size_t eq = body.find('='); eq != std::string::npos) {
    flag.value = body.substr(eq + 1);
    body.resize(eq);
  }
  if (!long_form && body.size() > 1 && body[0] == 'O') {
    // vLLM's -O3 / -O.level: the compilation config with the value glued on.
    flag.value = body.substr(1) + (flag.value ? "=" + *flag.value : "");
    body.assign(1, 'O');  // not `= "O"`: GCC 12 warns falsely (-Wrestrict) there when inlined
  }
  std::replace(body.begin(), body.end(), '_', '-');
  if (const VllmFlagAlias* alias = FindAlias(body, !long_form)) {
    flag.name = alias->canonical;
  } else if (long_form) {
    flag.name = body;
  } else {
    return std::nullopt;
  }
  return flag;
}

template <typename Row>
const Row* FindRow(std::span<const Row> table, const std::string& name) {
  for (const auto& row : table)
    if (row.name == name) return &row;
  return nullptr;
}

// Whether every value is in `harmless` (comma-separated).
bool AllHarmless(std::string_view harmless, const std::vector<std::string>& values) {
  if (harmless.empty() || values.empty()) return false;
  return std::all_of(values.begin(), values.end(), [&](const std::string& v) {
    for (size_t start = 0; start <= harmless.size();) {
      size_t end = harmless.find(',', start);
      if (end == std::string_view::npos) end = harmless.size();
      if (harmless.substr(start, end - start) == v) return true;
      start = end + 1;
    }
    return false;
  });
}

std::string Join(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : " ") + v;
  return out;
}

// Takes the values of a flag of `arity` that follow args[*i] (or the inline
// one), advancing *i past them; an error when a required value is missing.
Status TakeValues(const std::vector<std::string>& args, size_t* i, VllmArity arity, const FlagArg& flag,
                  const std::string& shown, std::vector<std::string>* values) {
  if (flag.value) {
    values->push_back(*flag.value);
    return Status::Ok();
  }
  auto next_is_value = [&] { return *i + 1 < args.size() && args[*i + 1] != "--" && !IsFlagLike(args[*i + 1]); };
  switch (arity) {
    case VllmArity::kNone:
    case VllmArity::kBool:
      return Status::Ok();
    case VllmArity::kOptional:
      if (next_is_value()) values->push_back(args[++*i]);
      return Status::Ok();
    case VllmArity::kOne:
      if (!next_is_value()) return Status::InvalidArgument(shown + " needs a value");
      values->push_back(args[++*i]);
      return Status::Ok();
    case VllmArity::kList:
      while (next_is_value()) values->push_back(args[++*i]);
      if (values->empty()) return Status::InvalidArgument(shown + " needs at least one value");
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

std::string DescribeRejected(const RejectedVllmFlag& flag) {
  std::string accepted;
  for (char c : flag.harmless) accepted += c == ',' ? std::string(", ") : std::string(1, c);
  return std::string(flag.feature) + (accepted.empty() ? "" : " (accepted: " + accepted + ")");
}

StatusOr<std::vector<std::string>> FilterVllmFlags(const std::vector<std::string>& args, const IsOurFlag& is_ours,
                                                   std::set<std::string>* warned,
                                                   std::vector<std::string>* warnings) {
  std::vector<std::string> out;
  auto warn = [&](const std::string& shown, std::string_view reason) {
    if (warned->insert(shown).second)
      warnings->push_back(shown + " has no effect on llmserve: " + std::string(reason));
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    std::optional<FlagArg> flag = ParseFlag(args[i]);
    if (!flag || is_ours(flag->name)) {
      out.push_back(flag ? "--" + flag->name + (flag->value ? "=" + *flag->value : "") : args[i]);
      continue;
    }
    // "--compilation-config.level 3" sets one key of a JSON-valued flag.
    std::string base = flag->name.substr(0, flag->name.find('.'));
    const auto* no_effect = FindRow(NoEffectVllmFlags(), base);
    const auto* rejected = FindRow(RejectedVllmFlags(), base);
    bool negated = false;
    if (!no_effect && !rejected && base.starts_with("no-")) {
      // Only on/off flags have a --no- form.
      const auto* off = FindRow(NoEffectVllmFlags(), base.substr(3));
      const auto* off_rejected = FindRow(RejectedVllmFlags(), base.substr(3));
      if (off && off->arity == VllmArity::kBool) no_effect = off;
      if (off_rejected && off_rejected->arity == VllmArity::kBool) rejected = off_rejected;
      negated = no_effect || rejected;
    }
    if (!no_effect && !rejected) {
      out.push_back(args[i]);  // unknown: gflags reports it
      continue;
    }
    const std::string shown = "--" + flag->name;
    std::vector<std::string> values;
    LLMSERVE_RETURN_IF_ERROR(
        TakeValues(args, &i, no_effect ? no_effect->arity : rejected->arity, *flag, shown, &values));
    if (no_effect) {
      warn(negated ? shown : "--" + base, no_effect->reason);
    } else if (negated || AllHarmless(rejected->harmless, values)) {
      warn(shown + (values.empty() ? "" : " " + Join(values)), "llmserve does that anyway");
    } else {
      return Status::InvalidArgument(shown + (values.empty() ? "" : " " + Join(values)) +
                                     " is not supported by llmserve yet: " + DescribeRejected(*rejected) +
                                     "; see docs/vllm-serve-flags.md");
    }
  }
  return out;
}

}  // namespace llmserve::deploy
