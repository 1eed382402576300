#include "common/tokenizer/post_processors.h"

#include <nlohmann/json.hpp>

namespace llmserve::common::tokenizer {

using nlohmann::json;

namespace {

class AffixProcessor final : public PostProcessor {
 public:
  AffixProcessor(std::vector<int32_t> prefix, std::vector<int32_t> suffix)
      : prefix_(std::move(prefix)), suffix_(std::move(suffix)) {}
  void Process(std::vector<int32_t>* ids) const override {
    ids->insert(ids->begin(), prefix_.begin(), prefix_.end());
    ids->insert(ids->end(), suffix_.begin(), suffix_.end());
  }

 private:
  std::vector<int32_t> prefix_, suffix_;
};

class NoOpProcessor final : public PostProcessor {
 public:
  void Process(std::vector<int32_t>*) const override {}
};

class SequenceProcessor final : public PostProcessor {
 public:
  explicit SequenceProcessor(std::vector<std::unique_ptr<PostProcessor>> items)
      : items_(std::move(items)) {}
  void Process(std::vector<int32_t>* ids) const override {
    for (const auto& p : items_) p->Process(ids);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> items_;
};

StatusOr<std::unique_ptr<PostProcessor>> MakeTemplate(const json& config, const JsonContext& ctx) {
  auto single = config.find("single");
  if (single == config.end() || !single->is_array()) {
    return ctx.Child("single").Error("TemplateProcessing needs an array \"single\"");
  }
  auto specials = config.find("special_tokens");
  std::vector<int32_t> prefix, suffix;
  bool seen_sequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    const JsonContext c = ctx.Child("single").Child(i);
    const json& item = (*single)[i];
    if (item.is_object() && item.contains("Sequence")) {
      std::string id;
      LLMSERVE_RETURN_IF_ERROR(GetString(item["Sequence"], "id", c.Child("Sequence"), true, &id));
      if (id != "A") return c.Error("a single-sequence template may only use sequence A");
      if (seen_sequence) return c.Error("sequence A appears twice");
      seen_sequence = true;
      continue;
    }
    if (!item.is_object() || !item.contains("SpecialToken")) {
      return c.Error("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
    std::string name;
    LLMSERVE_RETURN_IF_ERROR(GetString(item["SpecialToken"], "id", c.Child("SpecialToken"), true, &name));
    if (specials == config.end() || !specials->is_object() || !specials->contains(name)) {
      return ctx.Child("special_tokens").Error("no entry for special token \"" + name + "\"");
    }
    const json& entry = (*specials)[name];
    const JsonContext ec = ctx.Child("special_tokens").Child(name);
    if (!entry.is_object() || !entry.contains("ids") || !entry["ids"].is_array()) {
      return ec.Error("expected an object with an array \"ids\"");
    }
    for (const auto& v : entry["ids"]) {
      if (!v.is_number_integer()) return ec.Child("ids").Error("expected integer ids");
      (seen_sequence ? suffix : prefix).push_back(v.get<int32_t>());
    }
  }
  if (!seen_sequence) return ctx.Child("single").Error("template has no sequence $A");
  return std::unique_ptr<PostProcessor>(new AffixProcessor(std::move(prefix), std::move(suffix)));
}

}  // namespace

std::unique_ptr<PostProcessor> MakeAffixProcessor(std::vector<int32_t> prefix,
                                                  std::vector<int32_t> suffix) {
  return std::make_unique<AffixProcessor>(std::move(prefix), std::move(suffix));
}

StatusOr<std::unique_ptr<PostProcessor>> MakePostProcessor(const json& config,
                                                           const JsonContext& ctx) {
  if (config.is_null()) return std::unique_ptr<PostProcessor>();
  std::string type;
  LLMSERVE_RETURN_IF_ERROR(GetType(config, ctx, &type));
  if (type == "TemplateProcessing") return MakeTemplate(config, ctx);
  if (type == "ByteLevel") return std::unique_ptr<PostProcessor>(new NoOpProcessor());
  if (type == "Sequence") {
    auto it = config.find("processors");
    if (it == config.end() || !it->is_array()) {
      return ctx.Error("Sequence post-processor needs an array \"processors\"");
    }
    std::vector<std::unique_ptr<PostProcessor>> items;
    for (size_t i = 0; i < it->size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(auto p, MakePostProcessor((*it)[i], ctx.Child("processors").Child(i)));
      if (p) items.push_back(std::move(p));
    }
    return std::unique_ptr<PostProcessor>(new SequenceProcessor(std::move(items)));
  }
  return ctx.Error("unsupported post-processor type \"" + type + "\"");
}

}  // namespace llmserve::common::tokenizer
