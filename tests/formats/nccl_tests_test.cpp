// nccl-tests output reader: real excerpts (tests/fixtures/bench/SOURCES.md) read to the numbers
// printed in them, nccl-tests' own arithmetic on every row, a round trip through nccl-tests'
// layout, and bad input refused with the line named.
#include "formats/nccl_tests.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/thrown_field.h"
#include "core/error.h"
#include "formats/json_fields.h"

namespace tessera {
namespace {

using testing::thrown_field;

std::string nccl_fixture(const std::string& name) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/bench/" + name;
  return json_fields::read_text_file(path, "fixture");
}

// The excerpts from before nccl-tests 2.15 do not name their binary: a user adds this line.
const std::string kAllReduceLine = "# Collective test starting: all_reduce_perf\n";

template <typename Fn>
std::string nccl_thrown_message(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

struct FixtureCase {
  std::string name, prefix;
  NcclShape shape;
};

// Every fixture that parses, with what it needs (a collective line, a shape) where the excerpt
// lacks it.
const std::vector<FixtureCase>& parsing_fixtures() {
  static const std::vector<FixtureCase> cases = {
      {"all_reduce_gb10_2x1.txt", "", {}},
      {"sendrecv_a40_2x1.txt", "# Collective test starting: sendrecv_perf\n", {}},
      {"all_reduce_v100_8x8_legacy.txt", kAllReduceLine, {8, 8}},
      {"alltoall_v100_8x8_legacy.txt", "# Collective test starting: alltoall_perf\n", {8, 8}},
      {"reduce_scatter_2x4.txt", "# Collective test starting: reduce_scatter_perf\n", {2, 4}},
      {"all_gather_mi250x_4x8_srun.txt", "", {4, 8}},
  };
  return cases;
}

NcclTestsRun parse_case(const FixtureCase& c) {
  return parse_nccl_tests(c.prefix + nccl_fixture(c.name), c.name, c.shape);
}

TEST(NcclTests, NewestLayoutReadsToTheNumbersPrinted) {
  const NcclTestsRun run = parse_nccl_tests(nccl_fixture("all_reduce_gb10_2x1.txt"), "gb10.txt");
  EXPECT_EQ(run.collective, NcclCollective::all_reduce);
  EXPECT_EQ(run.ranks, 2);
  EXPECT_EQ(run.nodes, 2);  // spark-d708 and spark-dbf4
  EXPECT_EQ(run.gpu_name, "NVIDIA GB10");
  ASSERT_EQ(run.rows.size(), 4u);
  const NcclTestsRow& first = run.rows[0];
  EXPECT_EQ(first.line, 12u);
  EXPECT_EQ(first.size_bytes, 8192);
  EXPECT_EQ(first.count, 2048);
  EXPECT_EQ(first.type, "float");
  EXPECT_EQ(first.redop, "sum");
  EXPECT_DOUBLE_EQ(first.time_us, 35.15);
  EXPECT_DOUBLE_EQ(first.algbw_gbps, 0.23);
  EXPECT_DOUBLE_EQ(first.busbw_gbps, 0.23);
  EXPECT_DOUBLE_EQ(*first.in_place_time_us, 30.33);
  EXPECT_DOUBLE_EQ(*first.in_place_algbw_gbps, 0.27);
  EXPECT_DOUBLE_EQ(run.rows[3].size_bytes, 65536);
  EXPECT_DOUBLE_EQ(*run.rows[3].in_place_busbw_gbps, 1.01);
  EXPECT_FALSE(run.avg_busbw_gbps);  // the excerpt stops before the footer
}

TEST(NcclTests, SendRecvWithoutInPlaceCheckKeepsItsTimes) {
  const NcclTestsRun run = parse_case(parsing_fixtures()[1]);
  EXPECT_EQ(run.collective, NcclCollective::send_recv);
  EXPECT_EQ(run.ranks, 2);
  EXPECT_EQ(run.nodes, 2);
  EXPECT_EQ(run.gpu_name, "NVIDIA A40");
  ASSERT_EQ(run.rows.size(), 5u);
  EXPECT_DOUBLE_EQ(*run.rows[4].in_place_time_us, 30.69);  // its #wrong is N/A
  EXPECT_DOUBLE_EQ(run.rows[4].busbw_gbps, 0.13);
}

TEST(NcclTests, LegacyTableWithErrorColumnAndBlankRedop) {
  const NcclTestsRun all_reduce = parse_case(parsing_fixtures()[2]);
  EXPECT_EQ(all_reduce.ranks, 64);
  EXPECT_EQ(all_reduce.nodes, 8);
  EXPECT_EQ(all_reduce.gpu_name, "");
  ASSERT_EQ(all_reduce.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(all_reduce.rows[1].time_us, 244833);
  EXPECT_DOUBLE_EQ(*all_reduce.avg_busbw_gbps, 4.32178);

  const NcclTestsRun alltoall = parse_case(parsing_fixtures()[3]);
  EXPECT_EQ(alltoall.collective, NcclCollective::all_to_all);
  ASSERT_EQ(alltoall.rows.size(), 2u);
  EXPECT_EQ(alltoall.rows[0].redop, "");
  EXPECT_EQ(alltoall.rows[0].count, 1048576);
  EXPECT_DOUBLE_EQ(*alltoall.rows[1].in_place_time_us, 1041299);
}

TEST(NcclTests, EmptyStepsAreListedNotRead) {
  const NcclTestsRun run = parse_case(parsing_fixtures()[4]);
  EXPECT_EQ(run.empty_rows, (std::vector<std::size_t>{5, 6, 7, 8, 9}));  // one line added on top
  ASSERT_EQ(run.rows.size(), 2u);
  EXPECT_EQ(run.rows[0].size_bytes, 128);
  EXPECT_EQ(run.rows[0].count, 4);  // 4 floats per rank x 8 ranks = 128 bytes
}

TEST(NcclTests, LauncherPrefixAndCommandLine) {
  const NcclTestsRun run = parse_case(parsing_fixtures()[5]);
  EXPECT_EQ(run.collective, NcclCollective::all_gather);  // from the srun command line
  EXPECT_EQ(run.ranks, 32);
  ASSERT_EQ(run.rows.size(), 5u);
  EXPECT_EQ(run.rows[0].line, 5u);
  EXPECT_EQ(run.rows[0].redop, "none");
  EXPECT_DOUBLE_EQ(run.rows[4].time_us, 1456.6);
}

// nccl-tests' arithmetic restated here independently of the parser: a check of its rank count.
TEST(NcclTests, EveryFixtureRowKeepsNcclTestsArithmetic) {
  for (const FixtureCase& c : parsing_fixtures()) {
    SCOPED_TRACE(c.name);
    const NcclTestsRun run = parse_case(c);
    const double n = static_cast<double>(run.ranks);
    double factor = (n - 1) / n;
    if (run.collective == NcclCollective::all_reduce) factor = 2 * (n - 1) / n;
    if (run.collective == NcclCollective::send_recv) factor = 1;
    const bool size_spans_ranks = run.collective == NcclCollective::all_gather ||
                                  run.collective == NcclCollective::reduce_scatter ||
                                  run.collective == NcclCollective::all_to_all;
    for (const NcclTestsRow& row : run.rows) {
      EXPECT_EQ(row.size_bytes, row.count * 4.0 * (size_spans_ranks ? n : 1.0)) << row.line;  // all float
      const auto check = [&](double time_us, double algbw, double busbw) {
        // Printed to 2 decimals (0.005) or >= 4 significant digits (0.1%).
        EXPECT_NEAR(algbw, row.size_bytes / (time_us * 1e3), 0.0051 + 0.001 * algbw) << row.line;
        EXPECT_NEAR(busbw, algbw * factor, 0.0051 * (1 + factor) + 0.001 * busbw) << row.line;
      };
      check(row.time_us, row.algbw_gbps, row.busbw_gbps);
      if (row.in_place_time_us) check(*row.in_place_time_us, *row.in_place_algbw_gbps, *row.in_place_busbw_gbps);
    }
  }
}

TEST(NcclTests, RenderedRunReadsBackToTheSameValues) {
  for (const FixtureCase& c : parsing_fixtures()) {
    SCOPED_TRACE(c.name);
    const NcclTestsRun run = parse_case(c);
    const NcclTestsRun again = parse_nccl_tests(render_nccl_tests(run), "rendered");
    EXPECT_EQ(again.collective, run.collective);
    EXPECT_EQ(again.ranks, run.ranks);
    EXPECT_EQ(again.nodes, run.nodes);
    EXPECT_EQ(again.gpu_name, run.gpu_name);
    EXPECT_EQ(again.avg_busbw_gbps, run.avg_busbw_gbps);
    ASSERT_EQ(again.rows.size(), run.rows.size());
    for (std::size_t i = 0; i < run.rows.size(); ++i) {
      const NcclTestsRow &a = run.rows[i], &b = again.rows[i];
      EXPECT_EQ(a.size_bytes, b.size_bytes);
      EXPECT_EQ(a.count, b.count);
      EXPECT_EQ(a.type, b.type);
      EXPECT_EQ(a.redop.empty() ? "none" : a.redop, b.redop);
      EXPECT_EQ(a.time_us, b.time_us);
      EXPECT_EQ(a.algbw_gbps, b.algbw_gbps);
      EXPECT_EQ(a.busbw_gbps, b.busbw_gbps);
      EXPECT_EQ(a.in_place_time_us, b.in_place_time_us);
      EXPECT_EQ(a.in_place_algbw_gbps, b.in_place_algbw_gbps);
      EXPECT_EQ(a.in_place_busbw_gbps, b.in_place_busbw_gbps);
    }
  }
}

TEST(NcclTests, RealTruncatedExcerptNamesItsLastLine) {
  const std::string text = nccl_fixture("alltoall_h100_1x4_truncated.txt");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(text, "a2a.txt"); }), "nccl:a2a.txt:14");
  EXPECT_NE(nccl_thrown_message([&] { parse_nccl_tests(text, "a2a.txt"); }).find("#wrong 'N'"), std::string::npos);
  // Completed as nccl-tests prints it (alltoall.cu: no in-place check), the row is valid.
  const NcclTestsRun run = parse_nccl_tests(replace_once(text, "    N\n", "    N/A\n"), "a2a.txt");
  EXPECT_EQ(run.ranks, 4);
  EXPECT_EQ(run.gpu_name, "NVIDIA H100 80GB HBM3");
}

TEST(NcclTests, TruncatedAndGarbledRowsNameTheLine) {
  const std::string text = nccl_fixture("all_reduce_gb10_2x1.txt");
  const std::string last = "       65536         16384     float     sum      -1    67.93    0.96    0.96       0    64.71    1.01    1.01       0\n";
  const std::string cut = replace_once(text, last, last.substr(0, 70));
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(cut, "f"); }), "nccl:f:15");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(replace_once(text, "35.15", "35.1x"), "f"); }), "nccl:f:12");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(replace_once(text, "  16384  ", "  -16384  "), "f"); }),
            "nccl:f:13");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(replace_once(text, "67.93", " 0.00"), "f"); }), "nccl:f:15");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(text + "garbage here\n", "f"); }), "nccl:f:16");
  // A size whose time and algbw disagree: a misread column.
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(replace_once(text, "31.67", "41.67"), "f"); }), "nccl:f:13");
}

TEST(NcclTests, FailedDataCheckIsRefused) {
  const std::string text = nccl_fixture("all_reduce_gb10_2x1.txt");
  const std::string wrong = replace_once(text, "0.52       0    30.75", "0.52      12    30.75");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(wrong, "f"); }), "nccl:f:13");
  EXPECT_NE(nccl_thrown_message([&] { parse_nccl_tests(wrong, "f"); }).find("data check failed"), std::string::npos);
  const std::string footer = kAllReduceLine + replace_once(nccl_fixture("all_reduce_v100_8x8_legacy.txt"),
                                                           "values : 0 OK", "values : 3 FAILED");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(footer, "f", {8, 8}); }), "nccl:f:8");
}

TEST(NcclTests, WrongRankCountBreaksTheArithmetic) {
  // all_gather: size = count x 4 bytes x ranks, so 16 ranks cannot be right.
  const std::string gather = nccl_fixture("all_gather_mi250x_4x8_srun.txt");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(gather, "f", {4, 4}); }), "nccl:f:5");
  // all_reduce: busbw / algbw = 2(n-1)/n is 1.97 for 64 ranks, 1.94 for 32.
  const std::string reduce = kAllReduceLine + nccl_fixture("all_reduce_v100_8x8_legacy.txt");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(reduce, "f", {4, 8}); }), "nccl:f:6");
  // Swapped algbw and busbw columns break algbw = size / time.
  const std::string swapped = replace_once(reduce, "122131    2.20    4.33", "122131    4.33    2.20");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(swapped, "f", {8, 8}); }), "nccl:f:6");
}

TEST(NcclTests, MissingCollectiveOrShapeAsksForIt) {
  const std::string legacy = nccl_fixture("all_reduce_v100_8x8_legacy.txt");
  const std::string no_collective = nccl_thrown_message([&] { parse_nccl_tests(legacy, "ar.txt", {8, 8}); });
  EXPECT_NE(no_collective.find("Collective test starting"), std::string::npos) << no_collective;
  const std::string no_shape = nccl_thrown_message([&] { parse_nccl_tests(kAllReduceLine + legacy, "ar.txt"); });
  EXPECT_NE(no_shape.find("ar.txt@2x8"), std::string::npos) << no_shape;
  // A shape that contradicts the rank lines.
  const std::string gb10 = nccl_fixture("all_reduce_gb10_2x1.txt");
  EXPECT_NE(nccl_thrown_message([&] { parse_nccl_tests(gb10, "f", {1, 2}); }).find("disagrees"), std::string::npos);
}

TEST(NcclTests, RankLinesMustBeCompleteAndDistinct) {
  const std::string gb10 = nccl_fixture("all_reduce_gb10_2x1.txt");
  // Every process printing "Rank 0": a build without MPI=1, each process ran alone.
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(replace_once(gb10, "Rank  1", "Rank  0"), "f"); }), "nccl:f:7");
  EXPECT_NE(nccl_thrown_message([&] { parse_nccl_tests(replace_once(gb10, "Rank  1", "Rank  2"), "f"); })
                .find("missing"),
            std::string::npos);
}

TEST(NcclTests, OneRunOfOneCollectivePerFile) {
  const std::string gb10 = nccl_fixture("all_reduce_gb10_2x1.txt");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(gb10 + gb10, "f"); }), "nccl:f:18");  // second nThread line
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(gb10 + "# Collective test starting: all_gather_perf\n", "f"); }),
            "nccl:f:16");
  EXPECT_EQ(thrown_field([&] {
              parse_nccl_tests(replace_once(gb10, "all_reduce_perf", "broadcast_perf"), "f");
            }),
            "nccl:f:2");
  const std::string cpu = replace_once(gb10, "root     time", "root  cputime");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(cpu, "f"); }), "nccl:f:10");
}

TEST(NcclTests, SizeAndCountMustAgreeOnEmptiness) {
  const std::string rs = "# Collective test starting: reduce_scatter_perf\n" + nccl_fixture("reduce_scatter_2x4.txt");
  const std::string bad = replace_once(rs, "           0             0     float", "           0             4     float");
  EXPECT_EQ(thrown_field([&] { parse_nccl_tests(bad, "f", {2, 4}); }), "nccl:f:5");
}

TEST(NcclTests, BusFactorsAreNcclTestsOwn) {
  EXPECT_DOUBLE_EQ(nccl_bus_bandwidth_factor(NcclCollective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(nccl_bus_bandwidth_factor(NcclCollective::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(nccl_bus_bandwidth_factor(NcclCollective::reduce_scatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(nccl_bus_bandwidth_factor(NcclCollective::all_to_all, 2), 0.5);
  EXPECT_DOUBLE_EQ(nccl_bus_bandwidth_factor(NcclCollective::send_recv, 16), 1.0);
  EXPECT_EQ(nccl_collective_name(NcclCollective::all_to_all), "all_to_all");
  EXPECT_EQ(nccl_tests_binary(NcclCollective::all_to_all), "alltoall_perf");
}

TEST(NcclTests, SplitArgument) {
  EXPECT_EQ(split_nccl_argument("ar.txt").first, "ar.txt");
  EXPECT_EQ(split_nccl_argument("ar.txt").second.nodes, 0);
  const auto [file, shape] = split_nccl_argument("ar.txt@2x8");
  EXPECT_EQ(file, "ar.txt");
  EXPECT_EQ(shape.nodes, 2);
  EXPECT_EQ(shape.gpus_per_node, 8);
  EXPECT_EQ(split_nccl_argument("runs@lab/ar.txt@1x4").first, "runs@lab/ar.txt");
  for (const char* bad : {"ar.txt@", "ar.txt@2x", "ar.txt@x8", "ar.txt@0x8", "ar.txt@2x0", "ar.txt@-1x8",
                          "ar.txt@2X8", "ar.txt@2x8x1", "@2x8", "ar.txt@ 2x8", "ar.txt@2x+8", "", "runs@lab/ar.txt"})
    EXPECT_EQ(thrown_field([&] { split_nccl_argument(bad); }), "--nccl") << bad;
}

}  // namespace
}  // namespace tessera
