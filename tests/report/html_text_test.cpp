#include "report/html_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/thrown_field.h"

namespace tessera::report {
namespace {

std::string unescape(const std::string& text) {
  const std::pair<std::string, char> kEntities[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    bool matched = false;
    for (const auto& [entity, c] : kEntities)
      if (text.compare(i, entity.size(), entity) == 0) {
        out += c;
        i += entity.size();
        matched = true;
        break;
      }
    if (!matched) out += text[i++];
  }
  return out;
}

TEST(HtmlText, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(escape_html("a<b>&\"'c"), "a&lt;b&gt;&amp;&quot;&#39;c");
  EXPECT_EQ(escape_html("plain text, unchanged"), "plain text, unchanged");
  EXPECT_EQ(escape_html("&amp;"), "&amp;amp;");  // escaping twice is visible, never lossy
}

TEST(HtmlText, EscapeRoundTripsAndLeavesNoSpecialCharacter) {
  std::mt19937 rng(7);
  const std::string alphabet = "<>&\"' a;#x1\xc3\xa9";
  for (int trial = 0; trial < 500; ++trial) {
    std::string text;
    for (int k = 0; k < 20; ++k) text += alphabet[rng() % alphabet.size()];
    const std::string escaped = escape_html(text);
    EXPECT_EQ(escaped.find_first_of("<>\"'"), std::string::npos) << escaped;
    EXPECT_EQ(unescape(escaped), text);
  }
}

TEST(HtmlText, SvgNumberIsCompact) {
  EXPECT_EQ(svg_number(3.0), "3");
  EXPECT_EQ(svg_number(12.345), "12.3");
  EXPECT_EQ(svg_number(0.25), "0.3");
  EXPECT_EQ(svg_number(-0.04), "0");
  EXPECT_EQ(svg_number(-1.5), "-1.5");
  EXPECT_EQ(svg_number(1234567.0), "1234567");
  EXPECT_EQ(tessera::testing::thrown_field([] { svg_number(NAN, "rect.x_px"); }), "rect.x_px");
  EXPECT_EQ(tessera::testing::thrown_field([] { svg_number(INFINITY); }), "svg coordinate");
}

TEST(HtmlText, DisplayNumberKeepsSignificantDigits) {
  EXPECT_EQ(display_number(1234.5), "1230");
  EXPECT_EQ(display_number(1234567, 3, true), "1,230,000");
  EXPECT_EQ(display_number(-1234567, 3, true), "-1,230,000");
  EXPECT_EQ(display_number(999, 3, true), "999");
  EXPECT_EQ(display_number(0.012345), "0.0123");
  EXPECT_EQ(display_number(2.5), "2.5");
  EXPECT_EQ(display_number(999.6), "1000");
  EXPECT_EQ(display_number(0.9996), "1");
  EXPECT_EQ(display_number(0), "0");
  EXPECT_EQ(display_number(1.5e-5), "1.5e-05");
  EXPECT_EQ(display_number(2.5e16), "2.5e+16");
  EXPECT_EQ(display_number(NAN), "n/a");
  EXPECT_EQ(display_number(3.14159, 5), "3.1416");
  EXPECT_EQ(tessera::testing::thrown_field([] { display_number(1, 0); }), "significant_digits");
}

}  // namespace
}  // namespace tessera::report
