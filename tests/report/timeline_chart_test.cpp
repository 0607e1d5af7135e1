#include "report/timeline_chart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "common/thrown_field.h"
#include "common/markup_check.h"

namespace tessera::report {
namespace {

using report_testing::count_of;
using report_testing::markup_problem;
using tessera::testing::thrown_field;

struct DecodedOp {
  std::int64_t start_us, duration_us;
  int kind, micro_batch;
  bool operator==(const DecodedOp&) const = default;
};

// The page script's decoder, in C++: base64, then per op three varints (see timeline_chart.h).
std::vector<DecodedOp> decode(const std::string& text) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    if (c == '=') break;
    bits = (bits << 6) | static_cast<std::uint32_t>(alphabet.find(c));
    if ((count += 6) >= 8) bytes += static_cast<char>((bits >> (count -= 8)) & 0xFF);
  }
  std::size_t pos = 0;
  const auto next = [&] {
    std::uint64_t value = 0;
    for (int shift = 0;; shift += 7) {
      const auto b = static_cast<unsigned char>(bytes.at(pos++));
      value |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (b < 0x80) return value;
    }
  };
  const auto unzig = [](std::uint64_t v) {
    return v % 2 ? -static_cast<std::int64_t>((v + 1) / 2) : static_cast<std::int64_t>(v / 2);
  };
  std::vector<DecodedOp> ops;
  std::int64_t previous_end = 0, duration[kOpKindCount] = {}, micro_batch[kOpKindCount] = {};
  while (pos < bytes.size()) {
    const std::uint64_t head = next();
    const int kind = static_cast<int>(head % kOpKindCount);
    const std::int64_t start = previous_end + unzig(head / kOpKindCount);
    duration[kind] += unzig(next());
    micro_batch[kind] += unzig(next());
    ops.push_back({start, duration[kind], kind, static_cast<int>(micro_batch[kind])});
    previous_end = start + duration[kind];
  }
  return ops;
}

// 1F1B on `stages` x `micro_batches` with +/-5% jitter on every op, simulated from its
// dependencies (forward from the stage before, backward from the stage after).
TimelineChart one_f_one_b(int stages, int micro_batches) {
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> jitter(0.95, 1.05);
  constexpr double kForwardS = 1.2e-3, kBackwardS = 2.4e-3;
  std::vector<std::vector<std::pair<OpKind, int>>> order(static_cast<std::size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    const int warmup = std::min(stages - s - 1, micro_batches);
    auto& o = order[static_cast<std::size_t>(s)];
    for (int m = 0; m < warmup; ++m) o.push_back({OpKind::forward, m});
    for (int m = warmup; m < micro_batches; ++m) {
      o.push_back({OpKind::forward, m});
      o.push_back({OpKind::backward, m - warmup});
    }
    for (int m = micro_batches - warmup; m < micro_batches; ++m) o.push_back({OpKind::backward, m});
  }
  const auto n = static_cast<std::size_t>(micro_batches);
  std::vector<std::vector<double>> forward_end(order.size(), std::vector<double>(n, -1)), backward_end = forward_end;
  std::vector<std::size_t> next(order.size(), 0);
  std::vector<double> free_s(order.size(), 0);
  TimelineChart chart{"1F1B", {}};
  for (int s = 0; s < stages; ++s) chart.rows.push_back({"stage " + std::to_string(s), {}});
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < order.size(); ++s)
      for (; next[s] < order[s].size(); ++next[s], progress = true) {
        const auto [kind, m] = order[s][next[s]];
        const auto mb = static_cast<std::size_t>(m);
        const bool forward = kind == OpKind::forward;
        double ready = 0;
        if (forward && s > 0) ready = forward_end[s - 1][mb];
        if (!forward) ready = s + 1 < order.size() ? backward_end[s + 1][mb] : forward_end[s][mb];
        if (ready < 0) break;
        const double start = std::max(ready, free_s[s]), duration = (forward ? kForwardS : kBackwardS) * jitter(rng);
        (forward ? forward_end : backward_end)[s][mb] = free_s[s] = start + duration;
        chart.rows[s].ops.push_back({start, duration, kind, m});
      }
  }
  return chart;
}

TEST(TimelineChart, EncodingRoundTripsInMicroseconds) {
  const std::vector<TimelineOp> ops = {{0.004, 0.002, OpKind::backward, 3},  {0, 0.0012, OpKind::forward, 0},
                                       {0.0013, 0.0011, OpKind::forward, 1}, {0.0014, 0.0005, OpKind::p2p, 1},
                                       {0.5, 0.25, OpKind::dp_sync, -1},     {0.0024, 0.00004, OpKind::weight_grad, 2},
                                       {3000.0, 1e-6, OpKind::other, 100000}};
  const std::vector<DecodedOp> expected = {{0, 1200, 0, 0},           {1300, 1100, 0, 1}, {1400, 500, 3, 1},
                                           {2400, 40, 2, 2},          {4000, 2000, 1, 3}, {500000, 250000, 4, -1},
                                           {3000000000, 1, 5, 100000}};
  EXPECT_EQ(decode(encode_timeline_ops(ops)), expected);
}

TEST(TimelineChart, SixtyFourStagesTimesThousandMicroBatchesStaysUnderOnePointFiveMegabytes) {
  const TimelineChart chart = one_f_one_b(64, 1024);
  std::size_t op_count = 0;
  for (const TimelineRow& row : chart.rows) op_count += row.ops.size();
  ASSERT_EQ(op_count, 64u * 1024u * 2u);
  const std::string html = timeline_chart_html(chart);
  constexpr std::size_t kBoundBytes = 1'500'000;
  EXPECT_LE(html.size(), kBoundBytes);
  std::printf("64 x 1,024 1F1B timeline (%zu ops): %zu bytes of HTML\n", op_count, html.size());
  EXPECT_EQ(markup_problem(html), "");
  const std::string row_zero = encode_timeline_ops(chart.rows[0].ops);
  const std::vector<DecodedOp> decoded = decode(row_zero);
  ASSERT_EQ(decoded.size(), chart.rows[0].ops.size());
  EXPECT_EQ(decoded.back().micro_batch, 1023);
}

TEST(TimelineChart, FragmentHasCanvasScriptNoscriptAndSummary) {
  TimelineChart chart = one_f_one_b(4, 8);
  chart.rows[0].label = "stage \"0\" <first>";
  const std::string html = timeline_chart_html(chart);
  EXPECT_EQ(markup_problem(html), "") << html;
  EXPECT_EQ(count_of(html, "<canvas"), 1u);
  EXPECT_EQ(count_of(html, "<script>"), 1u);
  EXPECT_EQ(count_of(html, "<noscript>"), 1u);
  EXPECT_EQ(count_of(html, "<svg"), 1u);
  EXPECT_NE(html.find("data-counts=\"16,16,16,16\""), std::string::npos);
  EXPECT_NE(html.find("data-labels=\"[&quot;stage \\&quot;0\\&quot; &lt;first&gt;&quot;"), std::string::npos);
}

TEST(TimelineChart, InvalidInputNamesTheField) {
  const auto field = [](auto edit) {
    TimelineChart chart = one_f_one_b(2, 2);
    edit(chart);
    return thrown_field([&] { timeline_chart_html(chart); });
  };
  EXPECT_EQ(field([](TimelineChart& c) { c.rows.clear(); }), "rows");
  EXPECT_EQ(field([](TimelineChart& c) { c.rows[1].ops[2].start_s = -1; }), "rows[1].ops[2].start_s");
  EXPECT_EQ(field([](TimelineChart& c) { c.rows[0].ops[1].duration_s = NAN; }), "rows[0].ops[1].duration_s");
  EXPECT_EQ(field([](TimelineChart& c) { c.rows[0].ops[0].micro_batch = -2; }), "rows[0].ops[0].micro_batch");
}

}  // namespace
}  // namespace tessera::report
