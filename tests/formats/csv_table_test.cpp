// RFC 4180 CSV: quoted fields with commas, doubled quotes and line breaks, CRLF records,
// empty cells, and a row with the wrong number of fields is an Error naming the input.
#include "formats/csv_table.h"

#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "core/error.h"

namespace tessera {
namespace {

using Row = std::vector<std::string>;

using testing::thrown_field;

TEST(CsvTable, HeaderAndRows) {
  const CsvTable t = parse_csv("a,b,c\n1,2,3\n4,5,6\n", "runs.csv");
  EXPECT_EQ(t.header, (Row{"a", "b", "c"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (Row{"1", "2", "3"}));
  EXPECT_EQ(t.rows[1], (Row{"4", "5", "6"}));
  EXPECT_EQ(t.column("a"), 0);
  EXPECT_EQ(t.column("c"), 2);
  EXPECT_EQ(t.column("missing"), -1);
}

TEST(CsvTable, NoTrailingNewline) {
  const CsvTable t = parse_csv("a,b\n1,2", "x");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (Row{"1", "2"}));
}

TEST(CsvTable, QuotedFieldsWithCommasAndDoubledQuotes) {
  const CsvTable t =
      parse_csv("id,notes,n\nr1,\"tp=8, pp=4\",3\nr2,\"he said \"\"fast\"\"\",4\nr3,\"\"\"\",5\n", "x");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0], (Row{"r1", "tp=8, pp=4", "3"}));
  EXPECT_EQ(t.rows[1], (Row{"r2", "he said \"fast\"", "4"}));
  EXPECT_EQ(t.rows[2], (Row{"r3", "\"", "5"}));
}

TEST(CsvTable, QuotedLineBreakStaysInTheField) {
  const CsvTable t = parse_csv("a,b\n\"line one\nline two\",2\n", "x");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0][0], "line one\nline two");
  EXPECT_EQ(t.rows[0][1], "2");
}

TEST(CsvTable, CrlfLineEndings) {
  const CsvTable t = parse_csv("a,b\r\n1,\"x,y\"\r\n3,4\r\n", "x");
  EXPECT_EQ(t.header, (Row{"a", "b"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (Row{"1", "x,y"}));
  EXPECT_EQ(t.rows[1], (Row{"3", "4"}));
}

TEST(CsvTable, EmptyCellsArePreserved) {
  const CsvTable t = parse_csv("a,b,c\n,,\n1,,3\n,2,\n", "x");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0], (Row{"", "", ""}));
  EXPECT_EQ(t.rows[1], (Row{"1", "", "3"}));
  EXPECT_EQ(t.rows[2], (Row{"", "2", ""}));
  const CsvTable q = parse_csv("a,b\n\"\",x\n", "x");
  EXPECT_EQ(q.rows[0], (Row{"", "x"}));
}

TEST(CsvTable, WrongFieldCountIsAnError) {
  EXPECT_EQ(thrown_field([] { parse_csv("a,b,c\n1,2\n", "runs.csv"); }), "runs.csv");
  EXPECT_EQ(thrown_field([] { parse_csv("a,b\n1,2,3\n", "runs.csv"); }), "runs.csv");
  // A comma inside quotes is not a separator, one outside is.
  EXPECT_EQ(thrown_field([] { parse_csv("a,b\n\"1,2\",3,4\n", "runs.csv"); }), "runs.csv");
  EXPECT_NO_THROW(parse_csv("a,b\n\"1,2\",3\n", "runs.csv"));
}

TEST(CsvTable, UnterminatedQuoteIsAnError) {
  EXPECT_EQ(thrown_field([] { parse_csv("a,b\n\"1,2\n", "runs.csv"); }), "runs.csv");
}

TEST(CsvTable, EmptyInputIsAnError) {
  EXPECT_EQ(thrown_field([] { parse_csv("", "runs.csv"); }), "runs.csv");
}

TEST(CsvTable, HeaderOnlyHasNoRows) {
  const CsvTable t = parse_csv("a,b\n", "x");
  EXPECT_EQ(t.header.size(), 2u);
  EXPECT_TRUE(t.rows.empty());
}

// Issue 13, D11: column() would find only the first of two equal names, silently shadowing the
// second; a name given twice in the header is an error naming the input.
TEST(CsvTable, ColumnNameGivenTwiceIsAnError) {
  EXPECT_EQ(thrown_field([] { (void)parse_csv("id,tp,tp\n1,8,4\n", "runs.csv"); }), "runs.csv");
  EXPECT_NO_THROW((void)parse_csv("id,tp,pp\n1,8,4\n", "runs.csv"));
}

}  // namespace
}  // namespace tessera
