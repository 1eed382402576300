#include "deploy/config_file.h"

#include <yaml.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

namespace llmserve::deploy {

namespace {

// Owns a libyaml parser and the document it loaded, so every return frees them.
class YamlDocument {
 public:
  YamlDocument() { parser_ok_ = yaml_parser_initialize(&parser_) != 0; }
  ~YamlDocument() {
    if (loaded_) yaml_document_delete(&document_);
    if (parser_ok_) yaml_parser_delete(&parser_);
  }
  YamlDocument(const YamlDocument&) = delete;
  YamlDocument& operator=(const YamlDocument&) = delete;

  // Parses the first document of `text`; an error says where the YAML is malformed.
  Status Load(const std::string& text, const std::string& source) {
    if (!parser_ok_) return Status::Internal("cannot initialise the YAML parser");
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    if (!yaml_parser_load(&parser_, &document_)) {
      std::string message = source + ":" + std::to_string(parser_.problem_mark.line + 1) + ": invalid YAML: " +
                            (parser_.problem ? parser_.problem : "unknown error");
      if (parser_.context) message += std::string(" (") + parser_.context + ")";
      return Status::InvalidArgument(message);
    }
    loaded_ = true;
    return Status::Ok();
  }
  yaml_node_t* Root() { return yaml_document_get_root_node(&document_); }
  yaml_node_t* Node(int index) { return yaml_document_get_node(&document_, index); }

 private:
  yaml_parser_t parser_;
  yaml_document_t document_;
  bool parser_ok_ = false;
  bool loaded_ = false;
};

size_t Line(const yaml_node_t* node) { return node->start_mark.line + 1; }

std::string ScalarText(const yaml_node_t* node) {
  return std::string(reinterpret_cast<const char*>(node->data.scalar.value), node->data.scalar.length);
}

// The YAML 1.1 type of a scalar, as PyYAML's safe_load resolves it; quoted scalars are strings.
enum class ScalarType { kString, kTrue, kFalse, kNull, kInt, kFloat };

ScalarType TypeOf(const yaml_node_t* node) {
  if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return ScalarType::kString;
  static const std::regex kTrue("yes|Yes|YES|true|True|TRUE|on|On|ON");
  static const std::regex kFalse("no|No|NO|false|False|FALSE|off|Off|OFF");
  static const std::regex kNull("|~|null|Null|NULL");
  static const std::regex kInt("[-+]?(0|[1-9][0-9_]*)");
  static const std::regex kFloat("[-+]?([0-9][0-9_]*)?\\.[0-9_]*([eE][-+][0-9]+)?");
  const std::string text = ScalarText(node);
  if (std::regex_match(text, kTrue)) return ScalarType::kTrue;
  if (std::regex_match(text, kFalse)) return ScalarType::kFalse;
  if (std::regex_match(text, kNull)) return ScalarType::kNull;
  if (std::regex_match(text, kInt)) return ScalarType::kInt;
  if (text != "." && std::regex_match(text, kFloat)) return ScalarType::kFloat;
  return ScalarType::kString;
}

// A scalar as a command-line value: numbers lose YAML's digit separators ("1_000" -> "1000").
std::string ArgumentText(const yaml_node_t* node) {
  std::string text = ScalarText(node);
  const ScalarType type = TypeOf(node);
  if (type == ScalarType::kInt || type == ScalarType::kFloat) std::erase(text, '_');
  return text;
}

// A number scalar as JSON; one beyond int64 / double range stays a string rather than throwing.
nlohmann::json NumberJson(const yaml_node_t* node) {
  const std::string text = ArgumentText(node);
  try {
    if (TypeOf(node) == ScalarType::kInt) return nlohmann::json(std::stoll(text));
    return nlohmann::json(std::stod(text));
  } catch (const std::exception&) {
    return nlohmann::json(text);
  }
}

StatusOr<nlohmann::json> ToJson(YamlDocument& doc, const yaml_node_t* node, const std::string& where, int depth) {
  if (depth > 64) return Status::InvalidArgument(where + ": nested too deeply");
  switch (node->type) {
    case YAML_SCALAR_NODE:
      switch (TypeOf(node)) {
        case ScalarType::kTrue: return nlohmann::json(true);
        case ScalarType::kFalse: return nlohmann::json(false);
        case ScalarType::kNull: return nlohmann::json(nullptr);
        case ScalarType::kInt:
        case ScalarType::kFloat: return NumberJson(node);
        case ScalarType::kString: return nlohmann::json(ScalarText(node));
      }
      break;
    case YAML_SEQUENCE_NODE: {
      nlohmann::json array = nlohmann::json::array();
      for (auto* item = node->data.sequence.items.start; item < node->data.sequence.items.top; ++item) {
        LLMSERVE_ASSIGN_OR_RETURN(nlohmann::json value, ToJson(doc, doc.Node(*item), where, depth + 1));
        array.push_back(std::move(value));
      }
      return array;
    }
    case YAML_MAPPING_NODE: {
      nlohmann::json object = nlohmann::json::object();
      for (auto* pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; ++pair) {
        const yaml_node_t* key = doc.Node(pair->key);
        if (key->type != YAML_SCALAR_NODE)
          return Status::InvalidArgument(where + ": a mapping key must be a plain value");
        LLMSERVE_ASSIGN_OR_RETURN(object[ScalarText(key)], ToJson(doc, doc.Node(pair->value), where, depth + 1));
      }
      return object;
    }
    default:
      break;
  }
  return Status::InvalidArgument(where + ": empty value");
}

// Appends the arguments for `name: <list>`.
Status AppendList(YamlDocument& doc, const std::string& name, const yaml_node_t* list, const std::string& where,
                  ListStyle style, std::vector<std::string>* args) {
  std::vector<std::string> items;
  for (auto* item = list->data.sequence.items.start; item < list->data.sequence.items.top; ++item) {
    const yaml_node_t* node = doc.Node(*item);
    if (node->type != YAML_SCALAR_NODE)
      return Status::InvalidArgument(where + ": the items of '" + name + "' must be plain values");
    items.push_back(ArgumentText(node));
  }
  if (items.empty()) return Status::InvalidArgument(where + ": '" + name + "' is an empty list");
  switch (style) {
    case ListStyle::kSeparateValues:
      args->push_back("--" + name);
      args->insert(args->end(), items.begin(), items.end());
      return Status::Ok();
    case ListStyle::kSingleValue:
      if (items.size() != 1)
        return Status::InvalidArgument(where + ": '" + name + "' is a list of " + std::to_string(items.size()) +
                                       ", but llmserve's --" + name + " takes one value");
      args->push_back("--" + name + "=" + items[0]);
      return Status::Ok();
    case ListStyle::kCommaJoined: {
      std::string joined;
      for (const auto& v : items) joined += (joined.empty() ? "" : ",") + v;
      args->push_back("--" + name + "=" + joined);
      return Status::Ok();
    }
  }
  return Status::Ok();
}

// Appends the arguments for one `name: value` entry of the top-level mapping.
Status AppendEntry(YamlDocument& doc, const std::string& name, const yaml_node_t* value, const std::string& where,
                   const ListStyleOf& list_style, std::vector<std::string>* args) {
  if (value->type == YAML_SEQUENCE_NODE) {
    std::string dashed = name;
    std::replace(dashed.begin(), dashed.end(), '_', '-');
    return AppendList(doc, name, value, where, list_style(dashed), args);
  }
  if (value->type == YAML_MAPPING_NODE) {
    LLMSERVE_ASSIGN_OR_RETURN(nlohmann::json json, ToJson(doc, value, where, 0));
    args->push_back("--" + name + "=" + json.dump());
    return Status::Ok();
  }
  switch (TypeOf(value)) {
    case ScalarType::kTrue: args->push_back("--" + name); break;
    case ScalarType::kFalse:
    case ScalarType::kNull: break;
    default: args->push_back("--" + name + "=" + ArgumentText(value)); break;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ConfigFileArgs> ConfigArgsFromYaml(const std::string& text, const std::string& source,
                                            const ListStyleOf& list_style) {
  YamlDocument doc;
  LLMSERVE_RETURN_IF_ERROR(doc.Load(text, source));
  ConfigFileArgs out;
  const yaml_node_t* root = doc.Root();
  if (root == nullptr) return out;  // an empty file sets nothing
  if (root->type != YAML_MAPPING_NODE)
    return Status::InvalidArgument(source + ":" + std::to_string(Line(root)) +
                                   ": the top level must be a mapping of flag names to values, "
                                   "e.g. `max-model-len: 4096`");
  for (auto* pair = root->data.mapping.pairs.start; pair < root->data.mapping.pairs.top; ++pair) {
    const yaml_node_t* key = doc.Node(pair->key);
    const yaml_node_t* value = doc.Node(pair->value);
    const std::string where = source + ":" + std::to_string(Line(key));
    if (key->type != YAML_SCALAR_NODE) return Status::InvalidArgument(where + ": a key must be a flag name");
    std::string name = ScalarText(key);
    name.erase(0, name.find_first_not_of('-'));  // "--port:" means "port:"
    if (name.empty()) return Status::InvalidArgument(where + ": a key must be a flag name");
    if (name == "model") {
      if (value->type != YAML_SCALAR_NODE || TypeOf(value) == ScalarType::kNull)
        return Status::InvalidArgument(where + ": 'model' must name a model directory or Hugging Face id");
      out.model = ScalarText(value);
      continue;
    }
    if (name == "config") return Status::InvalidArgument(where + ": a config file cannot name another config file");
    LLMSERVE_RETURN_IF_ERROR(AppendEntry(doc, name, value, where, list_style, &out.args));
  }
  return out;
}

StatusOr<ConfigFileArgs> ReadConfigFile(const std::string& path, const ListStyleOf& list_style) {
  if (!path.ends_with(".yaml") && !path.ends_with(".yml"))
    return Status::InvalidArgument("--config " + path + ": the config file must be YAML (.yaml or .yml)");
  std::ifstream file(path, std::ios::binary);
  if (!file) return Status::InvalidArgument("--config " + path + ": cannot read the file");
  std::stringstream text;
  text << file.rdbuf();
  return ConfigArgsFromYaml(text.str(), path, list_style);
}

}  // namespace llmserve::deploy
