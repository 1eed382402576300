// JSON Schema front end, part 1: dispatch on type, objects, arrays,
// combinators and $ref.

#include "engine_core/structured_output/json_schema.h"

#include <set>

#include "engine_core/structured_output/json_schema_internal.h"

namespace llmserve::engine_core::structured_output {
namespace {

const std::set<std::string>& Annotations() {
  static const std::set<std::string> k = {"title",    "description", "default",  "examples", "$schema", "$id",
                                          "$comment", "deprecated",  "readOnly", "writeOnly", "$defs",  "definitions"};
  return k;
}

const std::set<std::string>& Supported() {
  static const std::set<std::string> k = {
      "type",     "properties", "required",  "additionalProperties", "items",     "prefixItems",
      "minItems", "maxItems",   "enum",      "const",                "anyOf",     "oneOf",
      "allOf",    "$ref",       "pattern",   "format",               "minLength", "maxLength",
      "minimum",  "maximum",    "exclusiveMinimum", "exclusiveMaximum"};
  return k;
}

std::string Escape(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

}  // namespace

JsonSchemaCompiler::JsonSchemaCompiler(const nlohmann::ordered_json& root, const JsonSchemaOptions& options)
    : root_(root), options_(options) {}

StatusOr<std::shared_ptr<const Grammar>> JsonSchemaCompiler::Build() {
  int32_t root = b_.AddRule("root");
  LLMSERVE_ASSIGN_OR_RETURN(Expr e, Value(root_, "#"));
  b_.Define(root, std::move(e));
  return b_.Build(root);
}

StatusOr<std::shared_ptr<const Grammar>> JsonSchemaCompiler::BuildAnyObject() {
  int32_t root = b_.AddRule("root");
  b_.Define(root, AnyObject());
  return b_.Build(root);
}

Status JsonSchemaCompiler::CheckKeywords(const json& s, const std::string& path) const {
  for (auto it = s.begin(); it != s.end(); ++it) {
    if (!Supported().count(it.key()) && !Annotations().count(it.key())) {
      return Status::InvalidArgument(path + ": keyword '" + it.key() + "' is not supported");
    }
  }
  return Status::Ok();
}

StatusOr<Expr> JsonSchemaCompiler::Value(const json& s, const std::string& path) {
  if (s.is_boolean()) {
    if (s.get<bool>()) return AnyValue();
    return Status::InvalidArgument(path + ": schema false admits no value");
  }
  if (!s.is_object()) return Status::InvalidArgument(path + ": a schema must be an object or a boolean");
  if (++depth_ > 64) return Status::InvalidArgument(path + ": schema nested too deeply");
  struct Guard {
    int* d;
    ~Guard() { --*d; }
  } guard{&depth_};
  LLMSERVE_RETURN_IF_ERROR(CheckKeywords(s, path));
  if (s.contains("allOf")) {
    LLMSERVE_ASSIGN_OR_RETURN(json merged, MergeAllOf(s, path));
    return Value(merged, path);
  }
  if (s.contains("$ref")) {
    if (s.size() > 1) {
      for (auto it = s.begin(); it != s.end(); ++it) {
        if (it.key() != "$ref" && !Annotations().count(it.key())) {
          return Status::InvalidArgument(path + ": keyword '" + it.key() + "' next to $ref is not supported");
        }
      }
    }
    if (!s["$ref"].is_string()) return Status::InvalidArgument(path + "/$ref: must be a string");
    return Ref(s["$ref"].get<std::string>(), path);
  }
  if (s.contains("anyOf")) return AnyOf(s, "anyOf", path);
  if (s.contains("oneOf")) return AnyOf(s, "oneOf", path);
  if (s.contains("const")) return Literal(s["const"]);
  if (s.contains("enum")) {
    if (!s["enum"].is_array() || s["enum"].empty()) return Status::InvalidArgument(path + "/enum: must be a non-empty array");
    std::vector<Expr> alts;
    for (const json& v : s["enum"]) alts.push_back(Literal(v));
    return AltExpr(std::move(alts));
  }
  std::vector<std::string> types;
  if (s.contains("type")) {
    const json& t = s["type"];
    if (t.is_string()) types.push_back(t.get<std::string>());
    else if (t.is_array() && !t.empty()) {
      for (const json& x : t) {
        if (!x.is_string()) return Status::InvalidArgument(path + "/type: must be a string or a list of strings");
        types.push_back(x.get<std::string>());
      }
    } else {
      return Status::InvalidArgument(path + "/type: must be a string or a non-empty list of strings");
    }
  } else if (s.contains("properties") || s.contains("additionalProperties") || s.contains("required")) {
    types.push_back("object");
  } else if (s.contains("items") || s.contains("prefixItems") || s.contains("minItems") || s.contains("maxItems")) {
    types.push_back("array");
  } else if (s.contains("pattern") || s.contains("format") || s.contains("minLength") || s.contains("maxLength")) {
    types.push_back("string");
  } else if (s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") ||
             s.contains("exclusiveMaximum")) {
    return Status::InvalidArgument(path + ": numeric bounds need \"type\": \"integer\"");
  } else {
    return AnyValue();
  }
  std::vector<Expr> alts;
  for (const std::string& t : types) {
    LLMSERVE_ASSIGN_OR_RETURN(Expr e, ValueOfType(t, s, path));
    alts.push_back(std::move(e));
  }
  return AltExpr(std::move(alts));
}

StatusOr<Expr> JsonSchemaCompiler::ValueOfType(const std::string& type, const json& s, const std::string& path) {
  if (type == "null") return LiteralExpr("null");
  if (type == "boolean") return AltExpr({LiteralExpr("true"), LiteralExpr("false")});
  if (type == "integer") return Integer(s, path);
  if (type == "number") return Number(s, path);
  if (type == "string") return String(s, path);
  if (type == "object") return Object(s, path);
  if (type == "array") return Array(s, path);
  return Status::InvalidArgument(path + "/type: unknown type '" + type + "'");
}

StatusOr<Expr> JsonSchemaCompiler::Ref(const std::string& ref, const std::string& path) {
  auto it = ref_rules_.find(ref);
  if (it != ref_rules_.end()) return RefExpr(it->second);
  if (ref.empty() || ref[0] != '#') {
    return Status::InvalidArgument(path + "/$ref: only local references (#...) are supported, not '" + ref + "'");
  }
  const json* target = nullptr;
  try {
    target = &root_.at(json::json_pointer(ref.substr(1)));
  } catch (const json::exception&) {
    return Status::InvalidArgument(path + "/$ref: '" + ref + "' does not resolve");
  }
  int32_t rule = b_.AddRule("ref:" + ref);
  ref_rules_[ref] = rule;  // before compiling the target, so recursion finds it
  int saved = depth_;
  depth_ = 0;
  auto body = Value(*target, ref);
  depth_ = saved;
  if (!body.ok()) return body.status();
  b_.Define(rule, std::move(body).value());
  return RefExpr(rule);
}

StatusOr<Expr> JsonSchemaCompiler::AnyOf(const json& s, const char* key, const std::string& path) {
  const json& list = s[key];
  if (!list.is_array() || list.empty()) return Status::InvalidArgument(path + "/" + key + ": must be a non-empty array");
  json rest = s;
  rest.erase(key);
  bool has_rest = false;
  for (auto it = rest.begin(); it != rest.end(); ++it) has_rest |= !Annotations().count(it.key());
  std::vector<Expr> alts;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string p = path + "/" + key + "/" + std::to_string(i);
    if (!has_rest) {
      LLMSERVE_ASSIGN_OR_RETURN(Expr e, Value(list[i], p));
      alts.push_back(std::move(e));
      continue;
    }
    json combined = {{"allOf", json::array({rest, list[i]})}};
    LLMSERVE_ASSIGN_OR_RETURN(Expr e, Value(combined, p));
    alts.push_back(std::move(e));
  }
  return AltExpr(std::move(alts));
}

StatusOr<nlohmann::ordered_json> JsonSchemaCompiler::MergeAllOf(const json& s, const std::string& path) {
  json merged = s;
  merged.erase("allOf");
  const json& parts = s["allOf"];
  if (!parts.is_array() || parts.empty()) return Status::InvalidArgument(path + "/allOf: must be a non-empty array");
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string p = path + "/allOf/" + std::to_string(i);
    json part = parts[i];
    for (int hops = 0; part.is_object() && part.contains("$ref") && hops < 16; ++hops) {
      std::string ref = part["$ref"].is_string() ? part["$ref"].get<std::string>() : "";
      if (ref.empty() || ref[0] != '#') return Status::InvalidArgument(p + "/$ref: only local references are supported");
      try {
        part = root_.at(json::json_pointer(ref.substr(1)));
      } catch (const json::exception&) {
        return Status::InvalidArgument(p + "/$ref: '" + ref + "' does not resolve");
      }
    }
    if (part.is_boolean() && part.get<bool>()) continue;
    if (!part.is_object()) return Status::InvalidArgument(p + ": cannot merge this schema");
    if (part.contains("allOf")) {
      LLMSERVE_ASSIGN_OR_RETURN(part, MergeAllOf(part, p));
    }
    for (auto it = part.begin(); it != part.end(); ++it) {
      const std::string& k = it.key();
      if (Annotations().count(k)) continue;
      if (!merged.contains(k)) {
        merged[k] = it.value();
      } else if (k == "properties") {
        for (auto prop = it.value().begin(); prop != it.value().end(); ++prop) {
          if (!merged[k].contains(prop.key())) merged[k][prop.key()] = prop.value();
          else merged[k][prop.key()] = {{"allOf", json::array({merged[k][prop.key()], prop.value()})}};
        }
      } else if (k == "required") {
        for (const json& r : it.value())
          if (std::find(merged[k].begin(), merged[k].end(), r) == merged[k].end()) merged[k].push_back(r);
      } else if (merged[k] != it.value()) {
        return Status::InvalidArgument(p + ": allOf parts with different '" + k + "' are not supported");
      }
    }
  }
  return merged;
}

StatusOr<Expr> JsonSchemaCompiler::Object(const json& s, const std::string& path) {
  struct Prop {
    Expr kv;
    bool required;
  };
  std::vector<Prop> props;
  std::set<std::string> required;
  if (s.contains("required")) {
    if (!s["required"].is_array()) return Status::InvalidArgument(path + "/required: must be an array");
    for (const json& r : s["required"]) {
      if (!r.is_string()) return Status::InvalidArgument(path + "/required: must list strings");
      required.insert(r.get<std::string>());
    }
  }
  std::set<std::string> defined;
  if (s.contains("properties")) {
    const json& ps = s["properties"];
    if (!ps.is_object()) return Status::InvalidArgument(path + "/properties: must be an object");
    for (auto it = ps.begin(); it != ps.end(); ++it) {
      LLMSERVE_ASSIGN_OR_RETURN(Expr v, Value(it.value(), path + "/properties/" + Escape(it.key())));
      props.push_back({SeqExpr({Literal(json(it.key())), KeySep(), std::move(v)}), required.count(it.key()) > 0});
      defined.insert(it.key());
    }
  }
  for (const std::string& r : required) {
    if (!defined.count(r)) return Status::InvalidArgument(path + "/required: '" + r + "' is not in properties");
  }
  std::optional<Expr> extra;  // one additional key-value pair
  if (s.contains("additionalProperties") && !(s["additionalProperties"].is_boolean() && !s["additionalProperties"].get<bool>())) {
    LLMSERVE_ASSIGN_OR_RETURN(Expr v, Value(s["additionalProperties"], path + "/additionalProperties"));
    extra = SeqExpr({LiteralExpr("\""), StringBody(0, -1), KeySep(), std::move(v)});
  }
  // first[i]: properties i.. when none was written yet; more[i]: after one was.
  Expr first = extra ? OptExpr(SeqExpr({*extra, StarExpr(SeqExpr({ItemSep(), *extra}))})) : EmptyExpr();
  Expr more = extra ? StarExpr(SeqExpr({ItemSep(), *extra})) : EmptyExpr();
  for (size_t i = props.size(); i-- > 0;) {
    Expr with = SeqExpr({props[i].kv, more});
    if (props[i].required) {
      first = with;
      more = SeqExpr({ItemSep(), props[i].kv, more});
    } else {
      first = AltExpr({with, first});
      more = SeqExpr({OptExpr(SeqExpr({ItemSep(), props[i].kv})), more});
    }
  }
  return SeqExpr({LiteralExpr("{"), Ws(), first, Ws(), LiteralExpr("}")});
}

StatusOr<Expr> JsonSchemaCompiler::Array(const json& s, const std::string& path) {
  auto count = [&](const char* key) -> StatusOr<int32_t> {
    if (!s.contains(key)) return -1;
    if (!s[key].is_number_unsigned() || s[key].get<uint64_t>() > 10000) {
      return Status::InvalidArgument(path + "/" + key + ": must be a non-negative integer <= 10000");
    }
    return static_cast<int32_t>(s[key].get<uint64_t>());
  };
  LLMSERVE_ASSIGN_OR_RETURN(int32_t lo, count("minItems"));
  LLMSERVE_ASSIGN_OR_RETURN(int32_t hi, count("maxItems"));
  lo = std::max(lo, 0);
  std::vector<Expr> prefix;
  if (s.contains("prefixItems")) {
    if (!s["prefixItems"].is_array()) return Status::InvalidArgument(path + "/prefixItems: must be an array");
    for (size_t i = 0; i < s["prefixItems"].size(); ++i) {
      LLMSERVE_ASSIGN_OR_RETURN(Expr e, Value(s["prefixItems"][i], path + "/prefixItems/" + std::to_string(i)));
      prefix.push_back(std::move(e));
    }
  }
  std::optional<Expr> item;
  if (s.contains("items") && !(s["items"].is_boolean() && !s["items"].get<bool>())) {
    LLMSERVE_ASSIGN_OR_RETURN(Expr e, Value(s["items"], path + "/items"));
    item = std::move(e);
  } else if (!s.contains("items") && !s.contains("prefixItems")) {
    item = AnyValue();  // an array schema with no item keywords allows any items
  }
  int32_t k = static_cast<int32_t>(prefix.size());
  if (hi >= 0 && hi < lo) return Status::InvalidArgument(path + ": maxItems < minItems");
  if (!item && lo > k) return Status::InvalidArgument(path + ": minItems exceeds the items allowed");
  std::vector<Expr> alts;  // one per count of prefix items, then the open tail
  for (int32_t j = lo; j <= k && (hi < 0 || j <= hi); ++j) {
    if (j == k && item && (hi < 0 || hi > k)) break;  // covered by the tail below
    std::vector<Expr> seq;
    for (int32_t i = 0; i < j; ++i) {
      if (i > 0) seq.push_back(ItemSep());
      seq.push_back(prefix[i]);
    }
    alts.push_back(SeqExpr(std::move(seq)));
  }
  if (item && (hi < 0 || hi > k)) {
    std::vector<Expr> seq;
    for (int32_t i = 0; i < k; ++i) {
      if (i > 0) seq.push_back(ItemSep());
      seq.push_back(prefix[i]);
    }
    int32_t tail_lo = std::max(lo - k, 0), tail_hi = hi < 0 ? -1 : hi - k;
    Expr tail;
    if (k == 0) {  // item (sep item){tail_lo-1, tail_hi-1}, optional when tail_lo == 0
      Expr run = SeqExpr({*item, RepeatExpr(SeqExpr({ItemSep(), *item}), std::max(tail_lo - 1, 0),
                                            tail_hi < 0 ? -1 : tail_hi - 1)});
      tail = tail_lo == 0 ? OptExpr(std::move(run)) : std::move(run);
    } else {
      tail = RepeatExpr(SeqExpr({ItemSep(), *item}), tail_lo, tail_hi);
    }
    seq.push_back(std::move(tail));
    alts.push_back(SeqExpr(std::move(seq)));
  }
  return SeqExpr({LiteralExpr("["), Ws(), AltExpr(std::move(alts)), Ws(), LiteralExpr("]")});
}

StatusOr<std::shared_ptr<const Grammar>> CompileJsonSchema(std::string_view schema, const JsonSchemaOptions& options) {
  nlohmann::ordered_json root = nlohmann::ordered_json::parse(schema, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Status::InvalidArgument("the schema is not valid JSON");
  JsonSchemaCompiler c(root, options);
  return c.Build();
}

StatusOr<std::shared_ptr<const Grammar>> CompileJsonObject(const JsonSchemaOptions& options) {
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  JsonSchemaCompiler c(root, options);
  return c.BuildAnyObject();
}

}  // namespace llmserve::engine_core::structured_output
