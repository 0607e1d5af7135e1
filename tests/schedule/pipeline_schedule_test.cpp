// Stage programs (the order each stage runs its operations): every (chunk, micro-batch) runs its
// forward and backward exactly once (and its weight-gradient op for ZB-H1), in dependency order,
// and the published orders: GPipe all-forward-then-all-backward; 1F1B (Narayanan et al. 2021)
// p - s forwards before the first backward; Megatron-LM's interleaved warm-up
// min(2(p - s - 1) + (v - 1) p, m v) and chunk order by groups of p; ZB-H1 (Qi et al. 2024 §3.1)
// (F_x, B_{x-(p-1-s)}, W_{x-(p-1)}).
#include "schedule/pipeline_schedule.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace tessera {
namespace {

constexpr Schedule kAll[] = {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb_h1};

template <class F>
void expect_error_naming(F&& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming '" << field << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

std::vector<StageOp> program(Schedule schedule, int p, int m, int v, int s) {
  std::vector<StageOp> out = {{OpKind::weight, 99, 99}};  // must be cleared
  stage_program(schedule, p, m, v, s, out);
  return out;
}

std::string text(const std::vector<StageOp>& ops) {
  std::string t;
  for (const auto& op : ops) {
    const char k = op.kind == OpKind::forward ? 'F' : op.kind == OpKind::backward ? 'B' : 'W';
    t += (t.empty() ? "" : " ") + std::string(1, k) + std::to_string(op.microbatch);
    if (op.chunk != 0) t += "c" + std::to_string(op.chunk);
  }
  return t;
}

// Every shape the tests sweep: (schedule, p, m, v).
std::vector<std::tuple<Schedule, int, int, int>> shapes() {
  std::vector<std::tuple<Schedule, int, int, int>> out;
  for (Schedule s : kAll)
    for (int p = 1; p <= 8; ++p)
      for (int m = 1; m <= 17; ++m) {
        if (s != Schedule::interleaved) {
          out.emplace_back(s, p, m, 1);
          continue;
        }
        if (m % p != 0) continue;
        for (int v = 1; v <= 4; ++v) out.emplace_back(s, p, m, v);
      }
  return out;
}

TEST(PipelineSchedule, NamesRoundTrip) {
  for (Schedule s : kAll) EXPECT_EQ(parse_schedule(to_string(s)), s);
  EXPECT_STREQ(to_string(Schedule::one_f_one_b), "1f1b");
  EXPECT_STREQ(to_string(Schedule::zb_h1), "zb-h1");
  EXPECT_EQ(parse_schedule("zbh1"), Schedule::zb_h1);
  expect_error_naming([] { parse_schedule("pipedream"); }, "schedule");
  expect_error_naming([] { parse_schedule(""); }, "schedule");
}

TEST(PipelineSchedule, EveryOperationOnceAndInDependencyOrder) {
  for (const auto& [schedule, p, m, v] : shapes())
    for (int s = 0; s < p; ++s) {
      const auto ops = program(schedule, p, m, v, s);
      const bool zb = schedule == Schedule::zb_h1;
      ASSERT_EQ(ops.size(), static_cast<std::size_t>(m * v * (zb ? 3 : 2)))
          << to_string(schedule) << " p=" << p << " m=" << m << " v=" << v << " s=" << s;
      std::map<std::tuple<int, int, int>, std::size_t> position;  // (kind, chunk, mb) -> index
      for (std::size_t i = 0; i < ops.size(); ++i) {
        const auto& op = ops[i];
        ASSERT_GE(op.chunk, 0);
        ASSERT_LT(op.chunk, v);
        ASSERT_GE(op.microbatch, 0);
        ASSERT_LT(op.microbatch, m);
        if (!zb) {
          ASSERT_NE(op.kind, OpKind::weight);
        }
        const auto key = std::make_tuple(static_cast<int>(op.kind), op.chunk, op.microbatch);
        ASSERT_TRUE(position.emplace(key, i).second) << "duplicate in " << text(ops);
      }
      for (int c = 0; c < v; ++c)
        for (int mb = 0; mb < m; ++mb) {
          const std::size_t f = position.at({0, c, mb}), b = position.at({1, c, mb});
          EXPECT_LT(f, b) << text(ops);
          if (zb) {
            EXPECT_LT(b, position.at({2, c, mb})) << text(ops);
          }
        }
      // Each chunk takes its micro-batches in order, forward and backward alike.
      for (int kind = 0; kind < (zb ? 3 : 2); ++kind)
        for (int c = 0; c < v; ++c)
          for (int mb = 1; mb < m; ++mb) EXPECT_LT(position.at({kind, c, mb - 1}), position.at({kind, c, mb}));
    }
}

TEST(PipelineSchedule, GPipeRunsAllForwardsThenAllBackwards) {
  EXPECT_EQ(text(program(Schedule::gpipe, 3, 4, 1, 1)), "F0 F1 F2 F3 B0 B1 B2 B3");
  for (int p = 1; p <= 6; ++p)
    for (int m = 1; m <= 9; ++m)
      for (int s = 0; s < p; ++s) {
        const auto ops = program(Schedule::gpipe, p, m, 1, s);
        for (int i = 0; i < 2 * m; ++i)
          EXPECT_EQ(ops[static_cast<std::size_t>(i)].kind, i < m ? OpKind::forward : OpKind::backward);
      }
}

int forwards_before_first_backward(const std::vector<StageOp>& ops) {
  int n = 0;
  for (const auto& op : ops) {
    if (op.kind != OpKind::forward) break;
    ++n;
  }
  return n;
}

TEST(PipelineSchedule, OneF1BWarmsUpWithPMinusSForwards) {
  EXPECT_EQ(text(program(Schedule::one_f_one_b, 2, 3, 1, 0)), "F0 F1 B0 F2 B1 B2");
  EXPECT_EQ(text(program(Schedule::one_f_one_b, 2, 3, 1, 1)), "F0 B0 F1 B1 F2 B2");
  EXPECT_EQ(text(program(Schedule::one_f_one_b, 4, 6, 1, 1)), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5");
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 12; ++m)
      for (int s = 0; s < p; ++s) {
        const auto ops = program(Schedule::one_f_one_b, p, m, 1, s);
        const int warm = std::min(p - s, m);
        EXPECT_EQ(forwards_before_first_backward(ops), warm) << p << " " << m << " " << s;
        // Steady state: backward and forward alternate until the forwards run out.
        for (int i = warm; i < 2 * m; ++i) {
          const int k = i - warm;
          const bool forward_left = (k / 2) + warm < m;
          const OpKind want = (k % 2 == 1 && forward_left) ? OpKind::forward : OpKind::backward;
          EXPECT_EQ(ops[static_cast<std::size_t>(i)].kind, want) << text(ops);
        }
      }
}

TEST(PipelineSchedule, ZbH1DefersWeightGradientsByPMinusOneSteps) {
  EXPECT_EQ(text(program(Schedule::zb_h1, 2, 3, 1, 0)), "F0 F1 B0 W0 F2 B1 W1 B2 W2");
  EXPECT_EQ(text(program(Schedule::zb_h1, 2, 3, 1, 1)), "F0 B0 F1 B1 W0 F2 B2 W1 W2");
  // Same F/B order as 1F1B.
  for (int p = 1; p <= 8; ++p)
    for (int m = 1; m <= 12; ++m)
      for (int s = 0; s < p; ++s) {
        auto zb = program(Schedule::zb_h1, p, m, 1, s);
        zb.erase(std::remove_if(zb.begin(), zb.end(), [](const StageOp& op) { return op.kind == OpKind::weight; }),
                 zb.end());
        EXPECT_EQ(text(zb), text(program(Schedule::one_f_one_b, p, m, 1, s)));
      }
}

TEST(PipelineSchedule, InterleavedFollowsMegatron) {
  // p = 2, m = 4, v = 2, stage 0: warm-up 2(p - 1) + (v - 1) p = 4 chunk-forwards; forward chunk
  // order by groups of p micro-batches; backward chunks reversed.
  EXPECT_EQ(text(program(Schedule::interleaved, 2, 4, 2, 0)),
            "F0 F1 F0c1 F1c1 F2 B0c1 F3 B1c1 F2c1 B0 F3c1 B1 B2c1 B3c1 B2 B3");
  // Stage 1 warms up with (v - 1) p = 2.
  EXPECT_EQ(text(program(Schedule::interleaved, 2, 4, 2, 1)),
            "F0 F1 F0c1 B0c1 F1c1 B1c1 F2 B0 F3 B1 F2c1 B2c1 F3c1 B3c1 B2 B3");
  for (int p = 1; p <= 8; ++p)
    for (int k = 1; k <= 4; ++k)
      for (int v = 1; v <= 4; ++v)
        for (int s = 0; s < p; ++s) {
          const int m = k * p;
          const auto ops = program(Schedule::interleaved, p, m, v, s);
          int warm = m == p ? m * v : std::min(2 * (p - s - 1) + (v - 1) * p, m * v);
          if (warm < m * v) ++warm;  // the steady state opens with a forward
          EXPECT_EQ(forwards_before_first_backward(ops), warm) << p << " " << m << " " << v << " " << s;
          // The i-th forward is virtual micro-batch i: chunk (i mod pv) / p, micro-batch (i / pv) p + i mod p.
          int i = 0;
          for (const auto& op : ops) {
            if (op.kind != OpKind::forward) continue;
            EXPECT_EQ(op.chunk, (i % (p * v)) / p);
            EXPECT_EQ(op.microbatch, (i / (p * v)) * p + i % p);
            ++i;
          }
        }
}

TEST(PipelineSchedule, ShapeErrorsNameTheField) {
  EXPECT_NO_THROW(validate_schedule_shape(Schedule::interleaved, 4, 8, 2));
  EXPECT_NO_THROW(validate_schedule_shape(Schedule::zb_h1, 4, 3, 1));
  expect_error_naming([] { validate_schedule_shape(Schedule::interleaved, 4, 6, 2); }, "microbatches");
  expect_error_naming([] { validate_schedule_shape(Schedule::one_f_one_b, 4, 8, 2); }, "vpp");
  expect_error_naming([] { validate_schedule_shape(Schedule::gpipe, 4, 8, 3); }, "vpp");
  expect_error_naming([] { validate_schedule_shape(Schedule::zb_h1, 4, 8, 2); }, "vpp");
  expect_error_naming([] { validate_schedule_shape(Schedule::one_f_one_b, 0, 8, 1); }, "stages");
  expect_error_naming([] { validate_schedule_shape(Schedule::one_f_one_b, -2, 8, 1); }, "stages");
  expect_error_naming([] { validate_schedule_shape(Schedule::one_f_one_b, 4, 0, 1); }, "microbatches");
  expect_error_naming([] { validate_schedule_shape(Schedule::interleaved, 4, 8, 0); }, "vpp");
  expect_error_naming([] { validate_schedule_shape(Schedule::interleaved, 4, 8'000'000, 10); }, "microbatches");
}

}  // namespace
}  // namespace tessera
