// Numbers from a --json document by path: keys and array indices resolve, a missing or non-numeric
// field is an Error naming "report", and a tagged cell or span carries the exact value.
#include "report/json_number.h"

#include <gtest/gtest.h>

#include "common/thrown_field.h"

namespace tessera::report {
namespace {

using tessera::testing::thrown_field;

const nlohmann::json kDoc = nlohmann::json::parse(
    R"({"mfu": 0.4113, "rows": [{"error_pct": -2.5}, {"error_pct": 18.25, "id": "x"}], "a": {"b": {"c": 3}}})");

TEST(JsonNumber, PathsResolve) {
  EXPECT_EQ(json_number(kDoc, "mfu"), 0.4113);
  EXPECT_EQ(json_number(kDoc, "rows[1].error_pct"), 18.25);
  EXPECT_EQ(json_number(kDoc, "a.b.c"), 3);
  EXPECT_EQ(json_at(kDoc, "rows[1].id").get<std::string>(), "x");
}

TEST(JsonNumber, MissingOrNonNumericFieldsAreErrors) {
  for (const char* path : {"nope", "rows[2].error_pct", "rows[x].error_pct", "rows[1.error_pct", "rows[1].id", "a.b"})
    EXPECT_EQ(thrown_field([&] { json_number(kDoc, path); }), "report") << path;
  EXPECT_EQ(thrown_field([&] { json_cell(kDoc, "mfu", -1); }), "report.decimals");
}

TEST(JsonNumber, CellsAndSpansCarryTheExactValueAndItsScale) {
  const HtmlCell cell = json_cell(kDoc, "mfu", 1, 100, "%");
  EXPECT_EQ(cell.text, "41.1%");
  EXPECT_EQ(*cell.sort_key, 0.4113);
  EXPECT_EQ(cell.json_path, "mfu");
  EXPECT_EQ(cell.json_scale, 100);
  const std::string span = json_span(kDoc, "rows[0].error_pct", 2);
  EXPECT_NE(span.find("data-json=\"rows[0].error_pct\" data-value=\"-2.5\">-2.50<"), std::string::npos) << span;
  const std::string table = html_table({{"v"}, {{cell}}});
  EXPECT_NE(table.find("data-json=\"mfu\" data-value=\"0.4113\" data-scale=\"100\">41.1%<"), std::string::npos)
      << table;
}

}  // namespace
}  // namespace tessera::report
