// Text for the HTML report: escaping of user text for HTML content and attribute values, and the
// two number formats the report uses (compact SVG coordinates, readable display values).
#pragma once

#include <string>
#include <string_view>

namespace tessera::report {

// `text` safe inside HTML content and inside single- or double-quoted attribute values: &, <, >,
// " and ' become entities, so no user text can open a tag or end an attribute.
std::string escape_html(std::string_view text);

// A coordinate for SVG output: rounded to 0.1 px (finer is invisible and bloats the file), no
// trailing zeros, "-0" printed as "0". Throws tessera::Error naming `field` when not finite.
std::string svg_number(double value, std::string_view field = "svg coordinate");

// A value for people: `significant_digits` significant digits, trailing zeros dropped, plain
// notation from 1e-3 to below 1e15 (exponent outside), optional thousands separators (1,230,000).
// Non-finite values print as "n/a": a display never throws.
std::string display_number(double value, int significant_digits = 3, bool thousands_separators = false);

}  // namespace tessera::report
