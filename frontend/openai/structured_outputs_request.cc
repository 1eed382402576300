#include "frontend/openai/structured_outputs_request.h"

#include <algorithm>

#include "engine_core/structured_output/constraint.h"

namespace llmserve::frontend::openai {
namespace {

using proto::StructuredOutputsParams;

using Ordered = nlohmann::ordered_json;

// A JSON schema given as a string (JSON text) or as an object. `v` keeps the
// client's key order: properties are generated in the order they are declared.
MaybeError ReadSchema(const Ordered& v, const std::string& name, std::optional<std::string>* out) {
  if (v.is_string()) {
    *out = v.get<std::string>();
  } else if (v.is_object() || v.is_boolean()) {
    *out = v.dump();
  } else {
    return BadRequest("'" + name + "' must be a JSON schema (an object or a string), got " + JsonTypeName(v), name);
  }
  return std::nullopt;
}

MaybeError ReadText(const Ordered& v, const std::string& name, std::optional<std::string>* out) {
  if (!v.is_string()) return BadRequest("'" + name + "' must be a string, got " + JsonTypeName(v), name);
  *out = v.get<std::string>();
  return std::nullopt;
}

MaybeError ReadChoice(const Ordered& v, const std::string& name, std::optional<std::vector<std::string>>* out) {
  if (!v.is_array() || v.empty()) return BadRequest("'" + name + "' must be a non-empty array of strings", name);
  out->emplace();
  for (const auto& c : v) {
    if (!c.is_string()) return BadRequest("'" + name + "' must hold strings only, got " + JsonTypeName(c), name);
    (*out)->push_back(c.get<std::string>());
  }
  return std::nullopt;
}

MaybeError ReadFlag(const Ordered& v, const std::string& name, bool* out) {
  if (!v.is_boolean()) return BadRequest("'" + name + "' must be a boolean, got " + JsonTypeName(v), name);
  *out = v.get<bool>();
  return std::nullopt;
}

// The `structured_outputs` object.
MaybeError ReadStructuredOutputsObject(const Ordered& v, StructuredOutputsParams* p) {
  if (!v.is_object()) return BadRequest("'structured_outputs' must be an object, got " + JsonTypeName(v), "structured_outputs");
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& key = it.key();
    const std::string name = "structured_outputs." + key;
    const Ordered& value = *it;
    if (value.is_null()) continue;
    MaybeError e;
    if (key == "json") e = ReadSchema(value, name, &p->json);
    else if (key == "regex") e = ReadText(value, name, &p->regex);
    else if (key == "choice") e = ReadChoice(value, name, &p->choice);
    else if (key == "grammar") e = ReadText(value, name, &p->grammar);
    else if (key == "json_object") e = ReadFlag(value, name, &p->json_object);
    else if (key == "disable_any_whitespace") e = ReadFlag(value, name, &p->disable_any_whitespace);
    else if (key == "disable_additional_properties") e = ReadFlag(value, name, &p->disable_additional_properties);
    else if (key == "whitespace_pattern") e = ReadText(value, name, &p->whitespace_pattern);
    else if (key == "disable_fallback" || key == "_backend" || key == "_backend_was_auto") continue;  // backend choice: one here
    else if (key == "structural_tag") e = BadRequest("'structural_tag' constraints are not supported by this server", name);
    else e = BadRequest("unknown field '" + name + "'", name);
    if (e) return e;
  }
  return std::nullopt;
}

// The field `name` of the body, or null when absent or null.
const Ordered* Field(const Ordered& body, const char* name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

// The legacy guided_* fields (only without structured_outputs).
MaybeError ReadGuidedFields(const Ordered& body, StructuredOutputsParams* p, std::string* source) {
  MaybeError e;
  if (const Ordered* v = Field(body, "guided_json")) e = ReadSchema(*v, *source = "guided_json", &p->json);
  if (const Ordered* v = Field(body, "guided_regex"); !e && v) e = ReadText(*v, *source = "guided_regex", &p->regex);
  if (const Ordered* v = Field(body, "guided_choice"); !e && v) e = ReadChoice(*v, *source = "guided_choice", &p->choice);
  if (const Ordered* v = Field(body, "guided_grammar"); !e && v) e = ReadText(*v, *source = "guided_grammar", &p->grammar);
  if (const Ordered* v = Field(body, "guided_whitespace_pattern"); !e && v)
    e = ReadText(*v, "guided_whitespace_pattern", &p->whitespace_pattern);
  return e;
}

// `response_format`, merged into `p`.
MaybeError ReadResponseFormat(const Ordered& v, StructuredOutputsParams* p) {
  const char* kName = "response_format";
  if (!v.is_object() || !v.contains("type") || !v["type"].is_string()) {
    return BadRequest("'response_format' must be an object with a string 'type'", kName);
  }
  const std::string type = v["type"].get<std::string>();
  if (type == "text") return std::nullopt;
  if (type == "json_object") {
    p->json_object = true;
    return std::nullopt;
  }
  if (type == "json_schema") {
    auto js = v.find("json_schema");
    if (js == v.end() || !js->is_object()) {
      return BadRequest("response_format of type json_schema needs a 'json_schema' object", kName);
    }
    auto schema = js->find("schema");
    if (schema == js->end() || schema->is_null()) {
      return BadRequest("response_format.json_schema needs a 'schema'", kName);
    }
    return ReadSchema(*schema, "response_format.json_schema.schema", &p->json);
  }
  if (type == "structural_tag") return BadRequest("response_format 'structural_tag' is not supported by this server", kName);
  return BadRequest("response_format type must be one of text, json_object, json_schema; got '" + type + "'", kName);
}

}  // namespace

MaybeError ReadStructuredOutputs(FieldReader& reader, std::string_view body, const StructuredOutputsConfig& config,
                                 std::optional<StructuredOutputsParams>* out) {
  static const char* kFields[] = {"structured_outputs", "response_format", "structural_tag", "guided_json",
                                  "guided_regex", "guided_choice", "guided_grammar", "guided_whitespace_pattern",
                                  "guided_decoding_backend"};
  bool any = false;
  for (const char* name : kFields) {
    reader.Known(name);
    any = any || reader.Get(name) != nullptr;
  }
  if (!any) return std::nullopt;
  if (reader.Get("structural_tag")) {
    return BadRequest("'structural_tag' constraints are not supported by this server", "structural_tag");
  }
  // Read again keeping key order (the reader's JSON sorts object keys).
  const Ordered ordered = Ordered::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!ordered.is_object()) return BadRequest("the request body is not a JSON object");
  StructuredOutputsParams p;
  std::string source = "structured_outputs";
  if (const Ordered* v = Field(ordered, "structured_outputs")) {
    LLMSERVE_API_TRY(ReadStructuredOutputsObject(*v, &p));
    StructuredOutputsParams legacy;
    std::string ignored;
    LLMSERVE_API_TRY(ReadGuidedFields(ordered, &legacy, &ignored));
    if (legacy != StructuredOutputsParams{}) {
      return BadRequest("give either 'structured_outputs' or the legacy guided_* fields, not both", "structured_outputs");
    }
  } else {
    LLMSERVE_API_TRY(ReadGuidedFields(ordered, &p, &source));
  }
  if (const Ordered* v = Field(ordered, "response_format")) {
    StructuredOutputsParams before = p;
    LLMSERVE_API_TRY(ReadResponseFormat(*v, &p));
    if (p != before) source = "response_format";
  }
  if (p == StructuredOutputsParams{}) return std::nullopt;
  p.disable_any_whitespace |= config.disable_any_whitespace;
  p.disable_additional_properties |= config.disable_additional_properties;
  auto grammar = engine_core::structured_output::GrammarForConstraint(p);
  if (!grammar.ok()) return BadRequest(grammar.status().message(), source);
  *out = std::move(p);
  return std::nullopt;
}

MaybeError ConstrainToJsonSchema(const std::string& schema, const StructuredOutputsConfig& config,
                                 const std::string& param, std::optional<StructuredOutputsParams>* out) {
  StructuredOutputsParams p;
  p.json = schema;
  p.disable_any_whitespace = config.disable_any_whitespace;
  p.disable_additional_properties = config.disable_additional_properties;
  auto grammar = engine_core::structured_output::GrammarForConstraint(p);
  if (!grammar.ok()) return BadRequest(grammar.status().message(), param);
  *out = std::move(p);
  return std::nullopt;
}

StatusOr<StructuredOutputsConfig> ParseStructuredOutputsConfig(const std::string& text) {
  StructuredOutputsConfig config;
  if (text.empty()) return config;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::InvalidArgument("--structured-outputs-config must be a JSON object");
  static const char* kBackends[] = {"auto", "xgrammar", "guidance", "outlines", "lm-format-enforcer"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    if (key == "backend") {
      const bool known = it->is_string() && std::find(std::begin(kBackends), std::end(kBackends),
                                                      it->get<std::string>()) != std::end(kBackends);
      if (!known)
        return Status::InvalidArgument(
            "--structured-outputs-config: backend must be one of auto, xgrammar, guidance, outlines, "
            "lm-format-enforcer (all served by the built-in grammar engine)");
    } else if (key == "disable_any_whitespace" || key == "disable_additional_properties" || key == "disable_fallback") {
      if (!it->is_boolean())
        return Status::InvalidArgument("--structured-outputs-config: " + key + " must be a boolean");
      if (key == "disable_any_whitespace") config.disable_any_whitespace = it->get<bool>();
      if (key == "disable_additional_properties") config.disable_additional_properties = it->get<bool>();
    } else {
      return Status::InvalidArgument("--structured-outputs-config: unknown key '" + key + "'");
    }
  }
  return config;
}

}  // namespace llmserve::frontend::openai
