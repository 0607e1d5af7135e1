// GEMM sweep CSV reader: the example fixture reads to its text, columns by name, and every bad
// cell named by line and column.
#include "formats/gemm_sweep.h"

#include <gtest/gtest.h>

#include <string>

#include "common/thrown_field.h"
#include "formats/json_fields.h"

namespace tessera {
namespace {

using testing::thrown_field;

std::string example() {
  return json_fields::read_text_file(
      std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/bench/gemm_sweep_example.csv", "fixture");
}

TEST(GemmSweep, ExampleReadsToItsText) {
  const std::vector<GemmSweepRow> rows = parse_gemm_sweep(example(), "sweep.csv");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].line, 3u);  // after the comment and the header
  EXPECT_EQ(rows[0].m, 4096);
  EXPECT_EQ(rows[0].n, 4096);
  EXPECT_EQ(rows[0].k, 4096);
  EXPECT_FALSE(rows[0].fp8);
  EXPECT_DOUBLE_EQ(rows[0].tflops, 600.5);
  EXPECT_TRUE(rows[3].fp8);
  EXPECT_FALSE(rows[4].fp8);  // fp16
  EXPECT_EQ(rows[4].m, 2048);
  EXPECT_EQ(rows[4].k, 28672);
  EXPECT_DOUBLE_EQ(rows[4].tflops, 650.25);
}

TEST(GemmSweep, ColumnsAreFoundByName) {
  const auto rows = parse_gemm_sweep("tflops , dtype,k,note,n,m\r\n 12.5,fp8,64,x,32,16\r\n\n", "f");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].m, 16);
  EXPECT_EQ(rows[0].n, 32);
  EXPECT_EQ(rows[0].k, 64);
  EXPECT_TRUE(rows[0].fp8);
  EXPECT_DOUBLE_EQ(rows[0].tflops, 12.5);
}

TEST(GemmSweep, BadCellsNameLineAndColumn) {
  const std::string header = "m,n,k,dtype,tflops\n";
  const auto field = [&](const std::string& row) {
    return thrown_field([&] { parse_gemm_sweep(header + "8,8,8,bf16,1\n" + row + "\n", "s.csv"); });
  };
  EXPECT_EQ(field("8,8,8,int8,1"), "gemm:s.csv:3.4");
  EXPECT_EQ(field("8,8,8,BF16,1"), "gemm:s.csv:3.4");
  EXPECT_EQ(field("0,8,8,bf16,1"), "gemm:s.csv:3.1");
  EXPECT_EQ(field("8,-8,8,bf16,1"), "gemm:s.csv:3.2");
  EXPECT_EQ(field("8,8,8.5,bf16,1"), "gemm:s.csv:3.3");
  EXPECT_EQ(field("8,8,8,bf16,0"), "gemm:s.csv:3.5");
  EXPECT_EQ(field("8,8,8,bf16,-3"), "gemm:s.csv:3.5");
  EXPECT_EQ(field("8,8,8,bf16,1e400"), "gemm:s.csv:3.5");
  EXPECT_EQ(field("8,8,8,bf16,fast"), "gemm:s.csv:3.5");
  EXPECT_EQ(field("8,8,8,bf16"), "gemm:s.csv:3.5");  // truncated: the missing column
  EXPECT_EQ(field("8,8,8,bf16,1,2"), "gemm:s.csv:3.6");
  EXPECT_EQ(field("8,8,,bf16,1"), "gemm:s.csv:3.3");
  EXPECT_EQ(field("\"8\",8,8,bf16,1"), "gemm:s.csv:3.1");
}

TEST(GemmSweep, HeaderIsRequiredAndComplete) {
  EXPECT_EQ(thrown_field([] { parse_gemm_sweep("4096,4096,4096,bf16,600\n", "s"); }), "gemm:s:1.6");
  EXPECT_EQ(thrown_field([] { parse_gemm_sweep("m,n,k,tflops\n8,8,8,1\n", "s"); }), "gemm:s:1.5");
  EXPECT_EQ(thrown_field([] { parse_gemm_sweep("m,n,k,dtype,tflops,m\n", "s"); }), "gemm:s:1.6");
  EXPECT_EQ(thrown_field([] { parse_gemm_sweep("# only a note\n\n", "s"); }), "gemm:s:1.1");
  EXPECT_EQ(thrown_field([] { parse_gemm_sweep("# note\nm,n,k,dtype,tflops\n", "s"); }), "gemm:s:2.1");
}

}  // namespace
}  // namespace tessera
