#include "engine_core/structured_output/json_schema.h"

#include "tests/engine_core/structured_output/test_util.h"

namespace llmserve::engine_core::structured_output {
namespace {

using testing::Matches;

StatusOr<std::shared_ptr<const Grammar>> Compact(const std::string& schema) {
  JsonSchemaOptions o;
  o.any_whitespace = false;
  return CompileJsonSchema(schema, o);
}

TEST(JsonSchemaTest, ScalarTypesAndTypeLists) {
  auto g = Compact(R"({"type": ["integer", "null", "boolean"]})");
  for (const char* ok : {"0", "-12", "null", "true", "false"}) EXPECT_TRUE(Matches(g, ok)) << ok;
  for (const char* bad : {"01", "-0x", "1.5", "nul", "\"a\""}) EXPECT_FALSE(Matches(g, bad)) << bad;
  auto n = Compact(R"({"type": "number"})");
  for (const char* ok : {"0", "-1.25", "3e10", "2.5E-3"}) EXPECT_TRUE(Matches(n, ok)) << ok;
  for (const char* bad : {".5", "1.", "--1", "1e"}) EXPECT_FALSE(Matches(n, bad)) << bad;
  auto s = Compact(R"({"type": "string"})");
  for (const char* ok : {R"("")", R"("a\"b\\c\n\u00e9\ud7ff")", "\"\xC3\xA9\""}) EXPECT_TRUE(Matches(s, ok)) << ok;
  for (const char* bad : {"\"a", "\"\n\"", R"("\x")", R"("\ud800")", "\"\xC3\""}) EXPECT_FALSE(Matches(s, bad)) << bad;
}

TEST(JsonSchemaTest, ObjectsInSchemaOrderWithRequiredAndOptional) {
  auto g = Compact(R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                       "c": {"type": "boolean"}}, "required": ["b"]})");
  EXPECT_TRUE(Matches(g, R"({"b":"x"})"));
  EXPECT_TRUE(Matches(g, R"({"a":1,"b":"x","c":true})"));
  EXPECT_TRUE(Matches(g, R"({"b":"x","c":false})"));
  EXPECT_FALSE(Matches(g, R"({"a":1})"));
  EXPECT_FALSE(Matches(g, R"({"b":"x","a":1})"));
  EXPECT_FALSE(Matches(g, R"({"b":"x","d":1})"));
  EXPECT_FALSE(Matches(g, R"({,"b":"x"})"));
}

TEST(JsonSchemaTest, AdditionalProperties) {
  auto t = Compact(R"({"properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}})");
  EXPECT_TRUE(Matches(t, R"({"a":1,"x":"y","z":""})"));
  EXPECT_TRUE(Matches(t, R"({"x":"y"})"));
  EXPECT_TRUE(Matches(t, R"({})"));
  EXPECT_FALSE(Matches(t, R"({"x":1})"));
  auto any = Compact(R"({"type": "object", "additionalProperties": true})");
  EXPECT_TRUE(Matches(any, R"({"k":[1,{"z":null}],"m":-2.5})"));
  auto none = Compact(R"({"type": "object", "additionalProperties": false})");
  EXPECT_TRUE(Matches(none, "{}"));
  EXPECT_FALSE(Matches(none, R"({"x":1})"));
}

TEST(JsonSchemaTest, ArraysItemsPrefixItemsAndCounts) {
  auto g = Compact(R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})");
  EXPECT_TRUE(Matches(g, "[1,2]"));
  EXPECT_TRUE(Matches(g, "[1,2,3]"));
  EXPECT_FALSE(Matches(g, "[1]"));
  EXPECT_FALSE(Matches(g, "[1,2,3,4]"));
  auto p = Compact(R"({"type": "array", "prefixItems": [{"type": "string"}, {"type": "null"}],
                       "items": {"type": "boolean"}})");
  EXPECT_TRUE(Matches(p, "[]"));
  EXPECT_TRUE(Matches(p, R"(["a"])"));
  EXPECT_TRUE(Matches(p, R"(["a",null,true,false])"));
  EXPECT_FALSE(Matches(p, R"([null])"));
  auto closed = Compact(R"({"type": "array", "prefixItems": [{"type": "integer"}], "items": false})");
  EXPECT_TRUE(Matches(closed, "[1]"));
  EXPECT_FALSE(Matches(closed, "[1,2]"));
}

TEST(JsonSchemaTest, EnumConstAnyOfAllOf) {
  auto e = Compact(R"({"enum": ["a", 1, null, {"k": [true]}]})");
  for (const char* ok : {R"("a")", "1", "null", R"({"k":[true]})"}) EXPECT_TRUE(Matches(e, ok)) << ok;
  EXPECT_FALSE(Matches(e, R"("b")"));
  auto c = Compact(R"({"const": "fixed"})");
  EXPECT_TRUE(Matches(c, R"("fixed")"));
  EXPECT_FALSE(Matches(c, R"("other")"));
  auto a = Compact(R"({"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]})");
  EXPECT_TRUE(Matches(a, "5"));
  EXPECT_TRUE(Matches(a, R"("x")"));
  EXPECT_FALSE(Matches(a, R"("xy")"));
  auto o = Compact(R"({"oneOf": [{"type": "null"}, {"type": "boolean"}]})");
  EXPECT_TRUE(Matches(o, "null"));
  auto all = Compact(R"({"allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                                   {"properties": {"b": {"type": "integer"}}, "required": ["b"]}]})");
  EXPECT_TRUE(Matches(all, R"({"a":1,"b":2})"));
  EXPECT_FALSE(Matches(all, R"({"a":1})"));
  EXPECT_FALSE(Compact(R"({"allOf": [{"type": "string"}, {"type": "integer"}]})").ok());
}

TEST(JsonSchemaTest, RefsAndRecursion) {
  auto g = Compact(R"({"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
      "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}, "required": ["v", "next"]}},
      "$ref": "#/$defs/node"})");
  EXPECT_TRUE(Matches(g, R"({"v":1,"next":{"v":2,"next":null}})"));
  EXPECT_FALSE(Matches(g, R"({"v":1,"next":{"v":2}})"));
  auto root = Compact(R"({"type": "array", "items": {"$ref": "#"}, "maxItems": 2})");
  EXPECT_TRUE(Matches(root, "[[],[[]]]"));
  EXPECT_FALSE(Compact(R"({"$ref": "#/$defs/missing"})").ok());
  EXPECT_FALSE(Compact(R"({"$ref": "http://x/y"})").ok());
}

TEST(JsonSchemaTest, StringLengthPatternAndFormats) {
  auto len = Compact(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  EXPECT_TRUE(Matches(len, R"("ab")"));
  EXPECT_TRUE(Matches(len, R"("a\nc")"));
  EXPECT_FALSE(Matches(len, R"("a")"));
  EXPECT_FALSE(Matches(len, R"("abcd")"));
  auto pat = Compact(R"({"type": "string", "pattern": "^[a-z]+\"?\\d$"})");
  EXPECT_TRUE(Matches(pat, R"("ab\"1")"));
  EXPECT_TRUE(Matches(pat, R"("ab1")"));
  EXPECT_FALSE(Matches(pat, R"("ab"1")"));
  struct Case {
    const char* format;
    const char* ok;
    const char* bad;
  } cases[] = {{"date", R"("2024-02-28")", R"("2024-02-30")"},
               {"time", R"("23:59:59.5Z")", R"("24:00:00Z")"},
               {"date-time", R"("2024-01-31T08:00:00+05:30")", R"("2024-01-31 08:00:00Z")"},
               {"uuid", R"("123e4567-e89b-12d3-a456-426614174000")", R"("123e4567e89b12d3a456426614174000")"},
               {"email", R"("a.b+c@example.co")", R"("a@b")"},
               {"ipv4", R"("192.168.0.255")", R"("256.1.1.1")"}};
  for (const Case& c : cases) {
    auto g = Compact(std::string(R"({"type": "string", "format": ")") + c.format + "\"}");
    EXPECT_TRUE(Matches(g, c.ok)) << c.format;
    EXPECT_FALSE(Matches(g, c.bad)) << c.format;
  }
}

TEST(JsonSchemaTest, IntegerBounds) {
  auto g = Compact(R"({"type": "integer", "minimum": -15, "exclusiveMaximum": 120})");
  for (int v = -30; v <= 140; ++v) {
    EXPECT_EQ(Matches(g, std::to_string(v)), v >= -15 && v < 120) << v;
  }
  auto lo = Compact(R"({"type": "integer", "exclusiveMinimum": 97})");
  for (int v = 0; v <= 1200; v += 7) EXPECT_EQ(Matches(lo, std::to_string(v)), v > 97) << v;
  auto hi = Compact(R"({"type": "integer", "maximum": -3})");
  for (int v = -200; v <= 10; ++v) EXPECT_EQ(Matches(hi, std::to_string(v)), v <= -3) << v;
  EXPECT_FALSE(Compact(R"({"type": "integer", "minimum": 5, "maximum": 4})").ok());
}

TEST(JsonSchemaTest, WhitespacePolicy) {
  auto flex = CompileJsonSchema(R"({"type": "object", "properties": {"a": {"type": "array"}}, "required": ["a"]})");
  EXPECT_TRUE(Matches(flex, "{ \"a\" :\n\t[ 1 , 2 ] }"));
  EXPECT_TRUE(Matches(flex, "{\"a\":[]}"));
  auto compact = Compact(R"({"type": "object", "properties": {"a": {"type": "array"}}, "required": ["a"]})");
  EXPECT_FALSE(Matches(compact, "{ \"a\":[]}"));
  EXPECT_TRUE(Matches(compact, "{\"a\":[1,2]}"));
}

TEST(JsonSchemaTest, UnsupportedKeywordsAreNamed) {
  for (const char* kw : {"patternProperties", "minProperties", "multipleOf", "uniqueItems", "not", "if"}) {
    auto g = Compact(std::string(R"({"type": "object", "properties": {"x": {")") + kw + R"(": 1}}})");
    ASSERT_FALSE(g.ok()) << kw;
    EXPECT_NE(g.status().message().find(kw), std::string::npos) << g.status().message();
    EXPECT_NE(g.status().message().find("/properties/x"), std::string::npos) << g.status().message();
  }
  EXPECT_FALSE(Compact(R"({"type": "string", "format": "hostname"})").ok());
  EXPECT_FALSE(Compact(R"({"type": "number", "minimum": 1})").ok());
  EXPECT_FALSE(Compact("{not json").ok());
  EXPECT_FALSE(Compact(R"({"type": "wat"})").ok());
}

TEST(JsonObjectTest, AnyObject) {
  auto g = CompileJsonObject();
  EXPECT_TRUE(Matches(g, R"({"a": [1, "x", {"b": null}], "c": -0.5e3})"));
  EXPECT_TRUE(Matches(g, "{}"));
  EXPECT_FALSE(Matches(g, "[]"));
  EXPECT_FALSE(Matches(g, R"({"a" 1})"));
}

}  // namespace
}  // namespace llmserve::engine_core::structured_output
