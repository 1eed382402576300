#include "deploy/bench/structured_corpus.h"

namespace llmserve::deploy::bench {
namespace {

// Each schema is what a tool call or an extraction step might ask for.
constexpr const char* kSchemas[] = {
    // A user profile: a capitalised name pattern, a bounded age, an enum.
    R"({"type":"object","properties":{
        "name":{"type":"string","pattern":"^[A-Z][a-z]{1,8}$"},
        "age":{"type":"integer","minimum":18,"maximum":99},
        "role":{"type":"string","enum":["admin","editor","viewer"]}},
      "required":["name","age","role"],"additionalProperties":false})",
    // Weather tool arguments.
    R"({"type":"object","properties":{
        "city":{"type":"string","pattern":"^[A-Z][a-z]{2,10}$"},
        "unit":{"type":"string","enum":["celsius","fahrenheit"]},
        "days":{"type":"integer","minimum":1,"maximum":7}},
      "required":["city","unit","days"],"additionalProperties":false})",
    // A calendar event with a date and a short attendee list.
    R"({"type":"object","properties":{
        "title":{"type":"string","maxLength":16},
        "date":{"type":"string","format":"date"},
        "start_hour":{"type":"integer","minimum":0,"maximum":23},
        "attendees":{"type":"array","items":{"type":"string","pattern":"^[A-Z][a-z]{1,8}$"},
                     "minItems":1,"maxItems":3}},
      "required":["title","date","start_hour","attendees"],"additionalProperties":false})",
    // An order with a uuid and up to two line items.
    R"({"type":"object","properties":{
        "order_id":{"type":"string","format":"uuid"},
        "items":{"type":"array","maxItems":2,"items":{"type":"object","properties":{
            "sku":{"type":"string","pattern":"^[A-Z]{3}-[0-9]{4}$"},
            "quantity":{"type":"integer","minimum":1,"maximum":10}},
          "required":["sku","quantity"],"additionalProperties":false}},
        "status":{"type":"string","enum":["pending","shipped","delivered","cancelled"]}},
      "required":["order_id","items","status"],"additionalProperties":false})",
    // A network device: ipv4 format, a port range, a boolean.
    R"({"type":"object","properties":{
        "hostname":{"type":"string","pattern":"^[a-z]{2,8}-[0-9]{2}$"},
        "ip":{"type":"string","format":"ipv4"},
        "port":{"type":"integer","minimum":1,"maximum":65535},
        "protocol":{"type":"string","enum":["tcp","udp"]},
        "enabled":{"type":"boolean"}},
      "required":["hostname","ip","port","protocol","enabled"],"additionalProperties":false})",
    // A sentiment classification with keywords.
    R"({"type":"object","properties":{
        "sentiment":{"type":"string","enum":["positive","negative","neutral","mixed"]},
        "confidence":{"type":"integer","minimum":0,"maximum":100},
        "keywords":{"type":"array","items":{"type":"string","pattern":"^[a-z]{3,10}$"},"maxItems":3}},
      "required":["sentiment","confidence"],"additionalProperties":false})",
    // A contact with a nested postal address.
    R"({"type":"object","properties":{
        "name":{"type":"string","pattern":"^[A-Z][a-z]{1,8} [A-Z][a-z]{1,10}$"},
        "address":{"type":"object","properties":{
            "street":{"type":"string","pattern":"^[0-9]{1,4} [A-Z][a-z]{2,10} (St|Ave|Rd)$"},
            "zip":{"type":"string","pattern":"^[0-9]{5}$"},
            "country":{"type":"string","enum":["US","CA","MX"]}},
          "required":["street","zip","country"],"additionalProperties":false}},
      "required":["name","address"],"additionalProperties":false})",
    // Search tool arguments with a nested filter object.
    R"({"type":"object","properties":{
        "query":{"type":"string","maxLength":24},
        "max_results":{"type":"integer","minimum":1,"maximum":20},
        "filters":{"type":"object","properties":{
            "language":{"type":"string","enum":["en","de","fr","ja"]},
            "after":{"type":"string","format":"date"}},
          "required":["language"],"additionalProperties":false}},
      "required":["query","max_results","filters"],"additionalProperties":false})",
    // A structured log line.
    R"({"type":"object","properties":{
        "level":{"type":"string","enum":["DEBUG","INFO","WARN","ERROR"]},
        "service":{"type":"string","pattern":"^[a-z]{3,8}(-[a-z]{2,6})?$"},
        "status_code":{"type":"integer","minimum":100,"maximum":599},
        "retry":{"type":"boolean"}},
      "required":["level","service","status_code"],"additionalProperties":false})",
    // A short task plan: an array of small objects.
    R"({"type":"object","properties":{
        "priority":{"type":"string","enum":["low","medium","high"]},
        "steps":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{
            "id":{"type":"integer","minimum":1,"maximum":9},
            "action":{"type":"string","enum":["read","write","search","ask","finish"]},
            "done":{"type":"boolean"}},
          "required":["id","action","done"],"additionalProperties":false}}},
      "required":["priority","steps"],"additionalProperties":false})",
};

}  // namespace

const std::vector<nlohmann::ordered_json>& BuiltinJsonSchemas() {
  static const std::vector<nlohmann::ordered_json> schemas = [] {
    std::vector<nlohmann::ordered_json> out;
    for (const char* text : kSchemas) out.push_back(nlohmann::ordered_json::parse(text));
    return out;
  }();
  return schemas;
}

const std::vector<std::string>& BuiltinRegexes() {
  static const std::vector<std::string> regexes = {
      R"([A-Z][a-z]{1,8} [A-Z][a-z]{1,10})",                            // a person's name
      R"(\d{3}-\d{3}-\d{4})",                                             // a phone number
      R"([a-z]{2,8}\.[a-z]{2,8}@[a-z]{3,8}\.(com|org|net))",              // an e-mail address
      R"((19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]))",          // an ISO date
      R"(((25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(25[0-5]|2[0-4]\d|1?\d?\d))",  // an IPv4 address
      R"((GET|POST|PUT|DELETE) /[a-z]{1,8}(/[a-z0-9]{1,8}){0,2})",       // an HTTP request line
      R"(#[0-9a-f]{6})",                                                  // a colour
      R"(v(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2}))",       // a semantic version
  };
  return regexes;
}

const std::vector<std::vector<std::string>>& BuiltinChoices() {
  static const std::vector<std::vector<std::string>> choices = {
      {"positive", "negative", "neutral"},
      {"yes", "no"},
      {"billing", "technical support", "sales", "account", "other"},
      {"low", "medium", "high", "critical"},
      {"Python", "Java", "C++", "Rust", "Go", "JavaScript"},
      {"approve", "reject", "escalate"},
  };
  return choices;
}

const std::vector<std::string>& BuiltinGrammars() {
  static const std::vector<std::string> grammars = {
      // Arithmetic over small integers with one level of parentheses.
      R"g(root ::= expr
expr ::= term (("+" | "-") term){0,3}
term ::= num | "(" num (("*" | "/") num){1,2} ")"
num ::= [1-9] [0-9]{0,2})g",
      // A tiny SQL SELECT.
      R"g(root ::= "SELECT " cols " FROM " ident (" WHERE " ident " = " value)? ";"
cols ::= "*" | ident (", " ident){0,2}
ident ::= [a-z] [a-z_]{1,9}
value ::= [0-9]{1,4} | "'" [a-z]{1,8} "'")g",
      // key=value settings, one per line.
      R"g(root ::= line{1,4}
line ::= key "=" val "\n"
key ::= [a-z]{2,8}
val ::= "true" | "false" | [0-9]{1,3})g",
      // A shell command with flags.
      R"g(root ::= cmd (" " flag){0,3} (" " path)?
cmd ::= "ls" | "cat" | "grep" | "find"
flag ::= "-" [a-z]
path ::= "/" [a-z]{1,8} ("/" [a-z]{1,8}){0,2})g",
      // A verdict with a short reason.
      R"g(root ::= verdict ": " reason "."
verdict ::= "PASS" | "FAIL" | "SKIP"
reason ::= word (" " word){0,5}
word ::= [a-z]{2,9})g",
  };
  return grammars;
}

}  // namespace llmserve::deploy::bench
