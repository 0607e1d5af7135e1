// core/error.h: every tessera::Error is one line of valid UTF-8 whatever user text it echoes
// (issue 13, D10 and D2): control characters and bytes that are not UTF-8 become escapes.
#include "core/error.h"

#include <string>

#include <gtest/gtest.h>

namespace tessera {
namespace {

// True when `text` has no byte below 0x20 and no DEL.
bool printable_line(const std::string& text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

TEST(Error, ControlCharactersAreEscapedSoTheMessageIsOneLine) {
  const Error e("model", "unknown model 'a\nb\r\tc\x01\x7f'", "llama3-8b, ...");
  const std::string text = e.what();
  EXPECT_TRUE(printable_line(text)) << text;
  EXPECT_NE(text.find("a\\nb\\r\\tc\\x01\\x7f"), std::string::npos) << text;
  EXPECT_EQ(e.field(), "model");  // the field itself is kept verbatim for callers
}

TEST(Error, BytesThatAreNotUtf8AreEscapedAndValidUtf8IsKept) {
  // \xff never occurs in UTF-8; \xc0\xaf is an overlong '/'; \xed\xa0\x80 a UTF-16 surrogate;
  // a lead byte cut short at the end. Each byte becomes \xNN.
  EXPECT_EQ(one_line("m\xff/x"), "m\\xff/x");
  EXPECT_EQ(one_line("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(one_line("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(one_line("end\xe2\x82"), "end\\xe2\\x82");
  // Two-, three- and four-byte characters survive: é, €, U+1F600.
  const std::string valid = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  EXPECT_EQ(one_line(valid), valid);
}

TEST(Error, OneLineIsIdempotent) {
  for (const std::string text : {"a\nb", "m\xff", "plain \\x41 text", "tab\there"})
    EXPECT_EQ(one_line(one_line(text)), one_line(text)) << text;
}

// A caller that re-raises under a fuller path passes problem() on: the field and the allowed
// values appear once.
TEST(Error, ProblemIsTheMessageWithoutFieldOrAllowed) {
  const Error inner("gpu.h100.gemm_efficiency", "got -5", "a number from 0.001 to 1");
  EXPECT_EQ(inner.problem(), "got -5");
  const Error outer("profile.gpus[0].parameters.gemm_efficiency", inner.problem(), inner.allowed());
  EXPECT_STREQ(outer.what(), "profile.gpus[0].parameters.gemm_efficiency: got -5 (allowed: a number from 0.001 to 1)");
}

}  // namespace
}  // namespace tessera
