// Sample files: the JSON Lines forms, blank lines skipped, errors naming line and field.
#include "formats/sample_file.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace tessera {
namespace {

std::string field_of(const std::string& text) {
  try {
    parse_sample_lines(text, "samples");
  } catch (const Error& e) {
    return e.field();
  }
  return "none";
}

TEST(SampleFile, ReadsEveryForm) {
  const auto s = parse_sample_lines(
      "{\"text_tokens\": 1500}\n\n  \n{\"text_tokens\": [40, 60], \"image_tokens\": [576, 256], "
      "\"generated_tokens\": 256}\r\n{\"image_tokens\": [1024]}\n{\"text_tokens\": 7.0}",
      "samples");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].text_tokens, (std::vector<std::int64_t>{1500}));
  EXPECT_EQ(s[1].text_tokens, (std::vector<std::int64_t>{40, 60}));
  EXPECT_EQ(s[1].image_tokens, (std::vector<std::int64_t>{576, 256}));
  EXPECT_EQ(s[1].generated_tokens, 256);
  EXPECT_EQ(s[1].backbone_tokens(), 40 + 60 + 576 + 256);
  EXPECT_TRUE(s[2].text_tokens.empty());
  EXPECT_EQ(s[3].text_tokens, (std::vector<std::int64_t>{7}));
}

// Issue 13: the JSON rules of every reader reach sample lines too (json_fields::parse): a number
// beyond double range, a key given twice, a boolean or 2^63 as a token count are errors naming
// the line.
TEST(SampleFile, JsonRulesNameTheLine) {
  EXPECT_EQ(field_of("{\"text_tokens\": 1}\n{\"text_tokens\": 1e400}"), "samples:2");
  EXPECT_EQ(field_of("{\"text_tokens\": 1, \"text_tokens\": 2}"), "samples:1");
  EXPECT_EQ(field_of("{\"text_tokens\": true}"), "samples:1.text_tokens");
  EXPECT_EQ(field_of("{\"text_tokens\": [9223372036854775808]}"), "samples:1.text_tokens[0]");
}

TEST(SampleFile, ErrorsNameTheLineAndTheField) {
  EXPECT_EQ(field_of("{\"text_tokens\": 1}\n{\"text_tokens\": -1}"), "samples:2.text_tokens");
  EXPECT_EQ(field_of("{\"text_tokens\": [1, \"a\"]}"), "samples:1.text_tokens[1]");
  EXPECT_EQ(field_of("{\"image_tokens\": 576}"), "samples:1.image_tokens");  // must be an array
  EXPECT_EQ(field_of("{\"text_tokens\": 1.5}"), "samples:1.text_tokens");
  EXPECT_EQ(field_of("{\"tokens\": 1}"), "samples:1.tokens");
  EXPECT_EQ(field_of("[1]"), "samples:1");
  EXPECT_EQ(field_of("{\"text_tokens\": 1"), "samples:1");
  EXPECT_EQ(field_of("{}"), "samples:1");  // no tokens at all
  EXPECT_EQ(field_of(""), "samples");
  EXPECT_THROW(read_sample_file("/nonexistent/samples.jsonl"), Error);
}

}  // namespace
}  // namespace tessera
