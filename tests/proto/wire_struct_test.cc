// The rules of proto/wire_struct.h on a small struct: which fields an
// encoder writes, and what a decoder accepts from a peer.
#include <gtest/gtest.h>

#include "proto/messages.h"
#include "proto/wire_struct.h"

namespace llmserve::proto {
namespace {

struct Sample {
  std::string id;
  int32_t count = 7;
  std::vector<int32_t> items;
  std::optional<std::string> note;

  bool operator==(const Sample&) const = default;
};

template <wire::Shape kShape, bool kOmit>
struct SampleFields {
  static constexpr wire::Layout kLayout{.name = "Sample", .shape = kShape, .omit_defaults = kOmit};
  template <typename S, typename F>
  void operator()(S& s, F&& field) const {
    field("id", s.id, wire::kRequired);
    field("unused", wire::Nil());
    field("count", s.count);
    field("items", wire::NilOrList(s.items));
    field("note", s.note);
    field("newer_field", wire::Nil());  // a peer's field we ignore
  }
};
using OmittingArray = SampleFields<wire::Shape::kArray, true>;
using FullArray = SampleFields<wire::Shape::kArray, false>;
using OmittingMap = SampleFields<wire::Shape::kMap, true>;

template <typename Fields>
std::string EncodeAs(const Sample& s) {
  wire::Buffer buffer;
  wire::Packer p(buffer);
  wire::PackStruct<Fields>(p, s);
  return std::string(buffer.data(), buffer.size());
}

template <typename Fields>
Status DecodeAs(const std::string& bytes, Sample* out) {
  return wire::DecodeWith(bytes.data(), bytes.size(), out,
                          [](const msgpack::object& o, Sample* v) { return wire::ReadStruct<Fields>(o, v); });
}

// msgpack bytes of `build`'s output.
template <typename Build>
std::string Bytes(Build build) {
  wire::Buffer buffer;
  wire::Packer p(buffer);
  build(p);
  return std::string(buffer.data(), buffer.size());
}

TEST(WireStruct, OmitDefaultsDropsTrailingDefaultsButKeepsRequiredFields) {
  EXPECT_EQ(EncodeAs<OmittingArray>(Sample{}), std::string("\x91\xa0", 2));  // [""]
  Sample s;
  s.note = "n";
  // id, unused (nil), count, items, note: the defaults before note stay.
  EXPECT_EQ(EncodeAs<OmittingArray>(s), std::string("\x95\xa0\xc0\x07\x90\xa1n", 7));
}

TEST(WireStruct, WithoutOmitDefaultsEveryFieldIsWritten) {
  EXPECT_EQ(EncodeAs<FullArray>(Sample{}), std::string("\x96\xa0\xc0\x07\x90\xc0\xc0", 7));
}

TEST(WireStruct, MapsHoldOnlyNonDefaultAndRequiredFields) {
  Sample s;
  s.count = 8;
  EXPECT_EQ(EncodeAs<OmittingMap>(s), std::string("\x82\xa2id\xa0\xa5" "count\x08", 12));
  Sample back;
  ASSERT_TRUE(DecodeAs<OmittingMap>(EncodeAs<OmittingMap>(s), &back).ok());
  EXPECT_EQ(back, s);
}

TEST(WireStruct, DecoderFillsOmittedFieldsWithDefaults) {
  Sample back;
  back.count = 99;
  ASSERT_TRUE(DecodeAs<OmittingArray>(std::string("\x91\xa1x", 3), &back).ok());
  Sample want;
  want.id = "x";
  EXPECT_EQ(back, want);
}

TEST(WireStruct, DecoderAcceptsAnythingInNilPositionsAndNilForLists) {
  // ["x", {"any": 1}, 3, nil]
  const std::string bytes = Bytes([](wire::Packer& p) {
    p.pack_array(4);
    p.pack(std::string("x"));
    p.pack_map(1);
    p.pack(std::string("any"));
    p.pack(1);
    p.pack(3);
    p.pack_nil();
  });
  Sample back;
  ASSERT_TRUE(DecodeAs<OmittingArray>(bytes, &back).ok());
  EXPECT_EQ(back.count, 3);
  EXPECT_TRUE(back.items.empty());
}

TEST(WireStruct, DecoderRejectsMoreFieldsThanTheList) {
  auto with_fields = [](uint32_t n) {
    return Bytes([n](wire::Packer& p) {
      p.pack_array(n);
      p.pack(std::string("x"));
      p.pack_nil();
      p.pack(7);
      for (uint32_t i = 3; i < n; ++i) p.pack_nil();  // items, note, newer_field, ...
    });
  };
  Sample back;
  EXPECT_TRUE(DecodeAs<OmittingArray>(with_fields(6), &back).ok());
  Status too_many = DecodeAs<OmittingArray>(with_fields(7), &back);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.message().find("7 fields, at most 6"), std::string::npos) << too_many.message();
}

TEST(WireStruct, DecoderNamesTheStructAndFieldOnATypeError) {
  const std::string bytes = Bytes([](wire::Packer& p) {
    p.pack_array(3);
    p.pack(std::string("x"));
    p.pack_nil();
    p.pack(std::string("not a count"));
  });
  Sample back;
  Status s = DecodeAs<OmittingArray>(bytes, &back);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("Sample: field 'count'"), std::string::npos) << s.message();
  EXPECT_FALSE(DecodeAs<OmittingArray>(std::string("\x80", 1), &back).ok());  // a map, not an array
}

TEST(WireStruct, MapDecoderIgnoresUnknownKeys) {
  const std::string bytes = Bytes([](wire::Packer& p) {
    p.pack_map(2);
    p.pack(std::string("unknown_key"));
    p.pack(true);
    p.pack(std::string("count"));
    p.pack(5);
  });
  Sample back;
  ASSERT_TRUE(DecodeAs<OmittingMap>(bytes, &back).ok());
  EXPECT_EQ(back.count, 5);
}

// The same rules on real messages: vLLM peers send nil events, and
// EngineCoreRequest's fields past priority that we do not carry.
TEST(WireStruct, MessagesAcceptVllmsNilEventsAndLongerRequests) {
  const std::string output = Bytes([](wire::Packer& p) {
    p.pack_array(8);
    p.pack(std::string("r"));
    p.pack_array(0);
    for (int i = 0; i < 6; ++i) p.pack_nil();  // ... stop_reason, events: nil
  });
  EngineCoreOutput o;
  ASSERT_TRUE(Decode(output, &o).ok());
  EXPECT_TRUE(o.events.empty());
  // A request with vLLM's 20 fields: the 14 we write, then six we ignore.
  EngineCoreRequest r;
  r.request_id = "id";
  r.prompt_token_ids = {1, 2};
  r.priority = 4;
  auto request_with = [&r](uint16_t n) {
    const std::string ours = Encode(r);  // a fixarray of 14
    return Bytes([&](wire::Packer& p) {
      p.pack_array(n);
      wire::internal::AppendEncoded(p, ours.data() + 1, ours.size() - 1);
      for (uint16_t i = 14; i < n; ++i) p.pack_nil();
    });
  };
  EngineCoreRequest back;
  ASSERT_TRUE(Decode(request_with(20), &back).ok());
  EXPECT_EQ(back, r);
  EXPECT_NE(Decode(request_with(21), &back).message().find("21 fields, at most 20"), std::string::npos);
}

}  // namespace
}  // namespace llmserve::proto
