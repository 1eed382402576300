#include "common/tokenizer/json_context.h"

#include <nlohmann/json.hpp>

namespace llmserve::common::tokenizer {

using nlohmann::json;

JsonContext JsonContext::Child(std::string_view key) const {
  return {file, path + "/" + std::string(key)};
}

JsonContext JsonContext::Child(size_t index) const {
  return {file, path + "/" + std::to_string(index)};
}

Status JsonContext::Error(std::string_view message) const {
  return Status::InvalidArgument(file + ": at " + (path.empty() ? "/" : path) + ": " +
                                 std::string(message));
}

std::string JsonTypeName(const json& j) { return j.type_name(); }

namespace {
// Finds obj[key]; returns nullptr when absent or null. Errors if obj is no object.
Status Find(const json& obj, const char* key, const JsonContext& ctx, bool required,
            const json** found) {
  *found = nullptr;
  if (!obj.is_object()) return ctx.Error("expected an object, found " + JsonTypeName(obj));
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return ctx.Error(std::string("missing required field \"") + key + "\"");
    return Status::Ok();
  }
  *found = &*it;
  return Status::Ok();
}
}  // namespace

Status GetString(const json& obj, const char* key, const JsonContext& ctx, bool required,
                 std::string* out) {
  const json* v;
  LLMSERVE_RETURN_IF_ERROR(Find(obj, key, ctx, required, &v));
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) {
    return ctx.Child(key).Error("expected a string, found " + JsonTypeName(*v));
  }
  *out = v->get_ref<const std::string&>();
  return Status::Ok();
}

Status GetBool(const json& obj, const char* key, const JsonContext& ctx, bool required,
               bool* out) {
  const json* v;
  LLMSERVE_RETURN_IF_ERROR(Find(obj, key, ctx, required, &v));
  if (v == nullptr) return Status::Ok();
  if (!v->is_boolean()) {
    return ctx.Child(key).Error("expected a boolean, found " + JsonTypeName(*v));
  }
  *out = v->get<bool>();
  return Status::Ok();
}

Status GetInt(const json& obj, const char* key, const JsonContext& ctx, bool required,
              long long* out) {
  const json* v;
  LLMSERVE_RETURN_IF_ERROR(Find(obj, key, ctx, required, &v));
  if (v == nullptr) return Status::Ok();
  if (!v->is_number_integer()) {
    return ctx.Child(key).Error("expected an integer, found " + JsonTypeName(*v));
  }
  *out = v->get<long long>();
  return Status::Ok();
}

Status GetType(const json& obj, const JsonContext& ctx, std::string* type) {
  if (!obj.is_object()) return ctx.Error("expected a component object, found " + JsonTypeName(obj));
  return GetString(obj, "type", ctx, /*required=*/true, type);
}

}  // namespace llmserve::common::tokenizer
