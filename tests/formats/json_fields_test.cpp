// formats/json_fields.h, the one JSON reader behind every file format (issue 13): a number beyond
// double range, a key given twice (at any depth), a boolean where a number belongs and an integer
// beyond int64 are each one tessera::Error naming the input; to_text never throws on bytes that
// are not UTF-8.
#include "formats/json_fields.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "core/error.h"

namespace tessera {
namespace {

using json_fields::Json;
using testing::thrown_field;

// The message of the Error `fn` throws, or "<no error>".
template <typename Fn>
std::string thrown_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(JsonFields, NumberBeyondDoubleRangeIsAnErrorNamingTheInput) {
  for (const char* text : {R"({"gpus": 1e400})", R"([-1e309])", R"({"a": {"b": [1, 2E+999]}})"}) {
    const std::string message = thrown_message([&] { (void)json_fields::parse(text, "cluster (c.json)"); });
    EXPECT_EQ(message.rfind("cluster (c.json): malformed JSON", 0), 0u) << message;
    EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
  }
  // The largest finite double still parses.
  EXPECT_DOUBLE_EQ(json_fields::parse("1.7976931348623157e308", "x").get<double>(),
                   std::numeric_limits<double>::max());
}

TEST(JsonFields, KeyGivenTwiceIsAnErrorNamingItsPath) {
  const auto message = [](const std::string& text) {
    return thrown_message([&] { (void)json_fields::parse(text, "plan"); });
  };
  EXPECT_NE(message(R"({"tp": 8, "tp": 4})").find("key 'tp' given twice"), std::string::npos);
  EXPECT_NE(message(R"({"gpu": {"key": "a", "key": "b"}})").find("key 'gpu.key' given twice"), std::string::npos);
  EXPECT_NE(message(R"({"pools": [{"a": 1}, {"a": 1, "a": 2}]})").find("key 'pools[1].a' given twice"),
            std::string::npos);
  EXPECT_NE(message(R"([[1, 2], [3, {"x": 1, "x": 1}]])").find("key '[1][1].x' given twice"), std::string::npos);
  // Equal keys in different objects, or a value equal to a key, are fine.
  const Json ok = json_fields::parse(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}], "c": "a"})", "x");
  EXPECT_EQ(ok.at("b").at(1).at("a"), 2);
  EXPECT_EQ(thrown_field([&] { (void)json_fields::parse(R"({"a": 1, "a": 1})", "model (m.json)"); }),
            "model (m.json)");
}

TEST(JsonFields, BooleanIsNotANumber) {
  const Json j = json_fields::parse(R"({"vpp": true, "eff": false})", "x");
  EXPECT_EQ(thrown_field([&] { (void)json_fields::get_int(j, "vpp", "plan"); }), "plan.vpp");
  EXPECT_EQ(thrown_field([&] { (void)json_fields::get_number(j, "eff", "gpu"); }), "gpu.eff");
  EXPECT_FALSE(json_fields::exact_integer(j.at("vpp")).has_value());
}

TEST(JsonFields, IntegerBeyondInt64IsRefusedNotWrapped) {
  const Json j = json_fields::parse(
      R"({"max": 9223372036854775807, "over": 9223372036854775808, "top": 18446744073709551615,
          "min": -9223372036854775808, "exact": 4096.0, "half": 4096.5, "huge": 1e300})", "x");
  EXPECT_EQ(json_fields::get_int(j, "max", "c"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(json_fields::get_int(j, "min", "c"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(json_fields::get_int(j, "exact", "c"), 4096);
  for (const char* key : {"over", "top", "half", "huge"})
    EXPECT_EQ(thrown_field([&] { (void)json_fields::get_int(j, key, "c"); }), std::string("c.") + key);
  EXPECT_EQ(thrown_message([&] { (void)json_fields::get_int(j, "over", "c"); }).find("-9223372036854775808"),
            std::string::npos);
}

TEST(JsonFields, ToTextNeverThrowsOnBytesThatAreNotUtf8) {
  const Json j = {{"path", std::string("m\xff/config.json")}, {"ok", "caf\xc3\xa9"}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // the failure to_text exists for
  const std::string text = json_fields::to_text(j, 2);
  const Json back = Json::parse(text);
  EXPECT_EQ(back.at("path"), "m\xef\xbf\xbd/config.json");  // U+FFFD REPLACEMENT CHARACTER
  EXPECT_EQ(back.at("ok"), "caf\xc3\xa9");                   // valid UTF-8 kept as is
  EXPECT_EQ(json_fields::to_text(Json{1, 2}), "[1,2]");      // indent -1: one line
}

}  // namespace
}  // namespace tessera
