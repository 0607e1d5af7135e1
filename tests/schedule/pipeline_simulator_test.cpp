// PipelineSimulator against closed forms and invariants.
//
// Closed forms with uniform costs and zero p2p (f, b, w: one stage's time per micro-batch):
//   GPipe, 1F1B      (m + p - 1)(f + b)                  Huang et al. 2019; Narayanan et al. 2021
//   interleaved      m (f + b) + (p - 1)(f + b) / v      Narayanan et al. SC'21 §2.2, m a multiple of p
//   ZB-H1            m (F + B + W) + (p - 1)(F + B - W)  Qi et al. 2024 §3.1, m >= p
//   peak in-flight   1F1B p - s on stage s, GPipe m, interleaved Megatron's warm-up + 1 chunks / v
// Invariants over 1,000 random uneven cost sets x 4 schedules: every operation starts once its
// input is there (the same micro-batch on the neighbouring virtual stage, plus that boundary's
// p2p) and its stage is free, in the schedule's order; the makespan bounds the busiest stage's work
// and the longest micro-batch path; DP syncs; the critical path; p2p events.
#include "schedule/pipeline_simulator.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "schedule/pipeline_schedule.h"

namespace tessera {
namespace {

constexpr Schedule kAllSchedules[] = {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved, Schedule::zb_h1};

void expect_rel(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * std::max(1.0, std::fabs(want))) << what;
}

template <class F>
void expect_simulator_error_naming(F&& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one naming '" << field << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

std::string shape(const PipelineCosts& c) {
  return std::string(to_string(c.schedule)) + " p=" + std::to_string(c.stages) + " m=" +
         std::to_string(c.microbatches) + " v=" + std::to_string(c.chunks);
}

// ---- closed forms -----------------------------------------------------------------------------

TEST(PipelineSimulator, UniformGPipeAndOneF1BTakeMPlusPMinusOneSteps) {
  PipelineSimulator sim;
  for (Schedule schedule : {Schedule::gpipe, Schedule::one_f_one_b})
    for (int p : {1, 2, 3, 4, 7, 8, 16})
      for (int m : {1, 2, 3, 5, 8, 16, 33, 64})
        for (auto [f, b, w] : {std::tuple{1.0, 2.0, 0.0}, std::tuple{0.3, 0.7, 0.0}, std::tuple{2.5, 1e-3, 0.0},
                               std::tuple{1.0, 1.0, 0.5}}) {
          const auto c = PipelineCosts::uniform(schedule, p, m, 1, f, b, w);
          const double want = (m + p - 1) * (f + b + w);
          const Timeline t = sim.run(c);
          expect_rel(t.makespan_s, want, shape(c));
          expect_rel(t.pipeline_makespan_s, want, shape(c));
          expect_rel(sim.makespan(c), want, shape(c));
          expect_rel(t.bubble_fraction, (p - 1.0) / (m + p - 1.0), shape(c));
        }
}

TEST(PipelineSimulator, UniformInterleavedDividesTheBubbleByV) {
  PipelineSimulator sim;
  for (int p : {1, 2, 3, 4, 8})
    for (int v : {1, 2, 3, 4})
      for (int k : {1, 2, 3, 4, 8})
        for (auto [f, b] : {std::pair{1.0, 2.0}, std::pair{0.37, 0.74}, std::pair{3.0, 0.01}}) {
          const int m = k * p;
          const auto c = PipelineCosts::uniform(Schedule::interleaved, p, m, v, f, b);
          const double want = m * (f + b) + (p - 1) * (f + b) / v;
          const Timeline t = sim.run(c);
          expect_rel(t.makespan_s, want, shape(c));
          expect_rel(sim.makespan(c), want, shape(c));
        }
}

// The closed form needs W <= min(F, B): each deferred W then fits in a bubble of its stage (the
// paper's analysis takes F = B = W). With a longer W the fixed ZB-H1 order is slower than it.
TEST(PipelineSimulator, UniformZbH1HidesWeightGradientsInTheBubble) {
  PipelineSimulator sim;
  for (int p : {1, 2, 3, 4, 8})
    for (int extra : {0, 1, 5, 24})
      for (auto [f, b, w] : {std::tuple{1.0, 1.0, 1.0}, std::tuple{1.0, 1.5, 0.5}, std::tuple{0.7, 0.9, 0.7},
                             std::tuple{2.0, 1.0, 0.0}, std::tuple{1.2, 0.8, 0.8}, std::tuple{0.3, 2.0, 0.25}}) {
        const int m = p + extra;
        const auto c = PipelineCosts::uniform(Schedule::zb_h1, p, m, 1, f, b, w);
        const double want = m * (f + b + w) + (p - 1) * (f + b - w);
        const Timeline t = sim.run(c);
        expect_rel(t.makespan_s, want, shape(c) + " f=" + std::to_string(f) + " b=" + std::to_string(b) +
                                           " w=" + std::to_string(w));
        expect_rel(sim.makespan(c), want, shape(c));
      }
}

// Megatron's interleaved in-flight chunks on stage s: its warm-up forwards plus the first steady
// forward (all m v when m == p); reported in micro-batch units (/ v).
double interleaved_peak(int p, int m, int v, int s) {
  if (m == p) return m;
  const int warm = std::min(2 * (p - s - 1) + (v - 1) * p, m * v);
  return std::min(warm + 1, m * v) / static_cast<double>(v);
}

TEST(PipelineSimulator, PeakInFlight) {
  PipelineSimulator sim;
  for (int p : {1, 2, 4, 8})
    for (int m : {1, 2, 4, 8, 9, 32}) {
      const Timeline one = sim.run(PipelineCosts::uniform(Schedule::one_f_one_b, p, m, 1, 1.0, 2.0));
      const Timeline zb = sim.run(PipelineCosts::uniform(Schedule::zb_h1, p, m, 1, 1.0, 1.0, 1.0));
      const Timeline gpipe = sim.run(PipelineCosts::uniform(Schedule::gpipe, p, m, 1, 1.0, 2.0));
      for (int s = 0; s < p; ++s) {
        const auto su = static_cast<std::size_t>(s);
        EXPECT_EQ(one.stages[su].peak_inflight, std::min(p - s, m)) << p << " " << m << " " << s;
        EXPECT_EQ(zb.stages[su].peak_inflight, std::min(p - s, m)) << p << " " << m << " " << s;
        EXPECT_EQ(gpipe.stages[su].peak_inflight, m) << p << " " << m << " " << s;
      }
      if (m % p != 0) continue;
      for (int v : {1, 2, 3, 4}) {
        const Timeline t = sim.run(PipelineCosts::uniform(Schedule::interleaved, p, m, v, 1.0, 2.0));
        for (int s = 0; s < p; ++s)
          EXPECT_DOUBLE_EQ(t.stages[static_cast<std::size_t>(s)].peak_inflight, interleaved_peak(p, m, v, s))
              << p << " " << m << " " << v << " " << s;
      }
    }
}

// ---- invariants over random uneven costs --------------------------------------------------------

struct Index {  // (kind, virtual stage, micro-batch) -> position in Timeline::ops
  int m = 0;
  std::vector<long> f, b, w;
  long& at(OpKind k, int vs, int mb) {
    auto& v = k == OpKind::forward ? f : k == OpKind::backward ? b : w;
    return v[static_cast<std::size_t>(vs) * m + mb];
  }
};

double duration_of(const PipelineCosts& c, OpKind kind, std::size_t slot) {
  return kind == OpKind::forward ? c.forward_s[slot] : kind == OpKind::backward ? c.backward_s[slot] : c.weight_s[slot];
}

// Checks one simulated timeline against costs rebuilt from first principles.
void check_timeline(const PipelineCosts& c, const Timeline& t, double fast_makespan, double fast_pipeline) {
  const int p = c.stages, m = c.microbatches, v = c.chunks, V = p * v;
  const bool zb = c.schedule == Schedule::zb_h1;
  const std::string where = shape(c);
  const double tol = 1e-9 * std::max(1.0, t.makespan_s);
  ASSERT_EQ(t.ops.size(), static_cast<std::size_t>(p) * m * v * (zb ? 3 : 2)) << where;

  // Programs: stage by stage, each in the schedule's order.
  std::vector<StageOp> prog;
  std::vector<std::size_t> first(static_cast<std::size_t>(p) + 1, 0);
  for (int s = 0; s < p; ++s) {
    stage_program(c.schedule, p, m, v, s, prog);
    first[static_cast<std::size_t>(s)] = s == 0 ? 0 : first[static_cast<std::size_t>(s) - 1] + prog.size();
    for (std::size_t k = 0; k < prog.size(); ++k) {
      const TimelineOp& op = t.ops[first[static_cast<std::size_t>(s)] + k];
      ASSERT_EQ(op.stage, s) << where;
      ASSERT_EQ(op.kind, prog[k].kind) << where;
      ASSERT_EQ(op.chunk, prog[k].chunk) << where;
      ASSERT_EQ(op.microbatch, prog[k].microbatch) << where;
    }
  }
  first[static_cast<std::size_t>(p)] = t.ops.size();

  Index idx{m, std::vector<long>(static_cast<std::size_t>(V) * m, -1), std::vector<long>(static_cast<std::size_t>(V) * m, -1),
            std::vector<long>(static_cast<std::size_t>(V) * m, -1)};
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const TimelineOp& op = t.ops[i];
    idx.at(op.kind, op.chunk * p + op.stage, op.microbatch) = static_cast<long>(i);
  }

  // The input an op waits for (-1: none) and the link time it crosses.
  auto input_of = [&](const TimelineOp& op, double* link) -> long {
    const int vs = op.chunk * p + op.stage;
    *link = 0.0;
    switch (op.kind) {
      case OpKind::forward:
        if (vs == 0) return -1;
        // With one stage, chunk to chunk stays on the GPU: no transfer.
        *link = p == 1 ? 0.0 : c.p2p_s[static_cast<std::size_t>((vs - 1) % p)];
        return idx.at(OpKind::forward, vs - 1, op.microbatch);
      case OpKind::backward:
        if (vs == V - 1) return idx.at(OpKind::forward, vs, op.microbatch);
        *link = p == 1 ? 0.0 : c.p2p_s[static_cast<std::size_t>(vs % p)];
        return idx.at(OpKind::backward, vs + 1, op.microbatch);
      case OpKind::weight: return idx.at(OpKind::backward, vs, op.microbatch);
    }
    return -1;
  };

  double pipeline_end = 0.0;
  std::size_t expected_p2p = 0;
  for (int s = 0; s < p; ++s) {
    double busy = 0.0;
    for (std::size_t i = first[static_cast<std::size_t>(s)]; i < first[static_cast<std::size_t>(s) + 1]; ++i) {
      const TimelineOp& op = t.ops[i];
      const int vs = op.chunk * p + s;
      const double d = duration_of(c, op.kind, static_cast<std::size_t>(vs) * m + op.microbatch);
      ASSERT_NEAR(op.end_s - op.start_s, d, tol) << where;
      busy += d;
      double link = 0.0;
      const long in = input_of(op, &link);
      double ready = 0.0;
      if (in >= 0) {
        ready = t.ops[static_cast<std::size_t>(in)].end_s + link;
        ASSERT_GE(op.start_s, ready - tol) << where << ": op " << i << " starts before its input";
        if (op.kind == OpKind::backward) {  // its own forward, too
          ASSERT_GE(op.start_s, t.ops[static_cast<std::size_t>(idx.at(OpKind::forward, vs, op.microbatch))].end_s - tol);
        }
        if (link > 0 && op.kind != OpKind::weight && !(op.kind == OpKind::backward && vs == V - 1)) ++expected_p2p;
      }
      const double free = i == first[static_cast<std::size_t>(s)] ? 0.0 : t.ops[i - 1].end_s;
      ASSERT_GE(op.start_s, free - tol) << where << ": two ops at once on stage " << s;
      // Event-driven: nothing waits longer than it must.
      ASSERT_NEAR(op.start_s, std::max(ready, free), tol) << where;
      pipeline_end = std::max(pipeline_end, op.end_s);
    }
    const StageSummary& sum = t.stages[static_cast<std::size_t>(s)];
    EXPECT_NEAR(sum.busy_s, busy, tol) << where;
    EXPECT_NEAR(sum.idle_s, t.pipeline_makespan_s - busy, tol) << where;
    if (t.pipeline_makespan_s > 0) {
      EXPECT_NEAR(sum.bubble_fraction, sum.idle_s / t.pipeline_makespan_s, 1e-9);
    }
    EXPECT_LE(busy, t.pipeline_makespan_s + tol) << where << ": makespan below stage " << s << "'s work";
  }
  EXPECT_NEAR(t.pipeline_makespan_s, pipeline_end, tol) << where;
  double mean_bubble = 0.0;
  for (const auto& s : t.stages) mean_bubble += s.bubble_fraction / p;
  EXPECT_NEAR(t.bubble_fraction, mean_bubble, 1e-9) << where;

  // The longest micro-batch path: forward chain, backward chain back, each W after its B.
  const double hop = p == 1 ? 0.0 : 1.0;  // chunk to chunk on one GPU crosses no link
  for (int mb = 0; mb < m; ++mb) {
    std::vector<double> fe(static_cast<std::size_t>(V)), be(static_cast<std::size_t>(V));
    double path = 0.0;
    for (int vs = 0; vs < V; ++vs) {
      const std::size_t slot = static_cast<std::size_t>(vs) * m + mb;
      fe[static_cast<std::size_t>(vs)] =
          (vs == 0 ? 0.0 : fe[static_cast<std::size_t>(vs) - 1] + hop * c.p2p_s[static_cast<std::size_t>((vs - 1) % p)]) +
          c.forward_s[slot];
    }
    for (int vs = V - 1; vs >= 0; --vs) {
      const std::size_t slot = static_cast<std::size_t>(vs) * m + mb;
      const double in = vs == V - 1 ? fe[static_cast<std::size_t>(vs)]
                                    : be[static_cast<std::size_t>(vs) + 1] + hop * c.p2p_s[static_cast<std::size_t>(vs % p)];
      be[static_cast<std::size_t>(vs)] = in + c.backward_s[slot];
      path = std::max(path, be[static_cast<std::size_t>(vs)] + (zb ? c.weight_s[slot] : 0.0));
    }
    EXPECT_GE(t.pipeline_makespan_s, path - tol) << where << ": makespan below micro-batch " << mb << "'s path";
  }

  // p2p events: one per input crossing a boundary with a positive link time.
  ASSERT_EQ(t.p2p.size(), expected_p2p) << where;
  for (const P2pEvent& e : t.p2p) {
    const int vs = e.chunk * p + e.to_stage;
    const long src = e.kind == OpKind::forward ? idx.at(OpKind::forward, vs - 1, e.microbatch)
                                               : idx.at(OpKind::backward, vs + 1, e.microbatch);
    ASSERT_GE(src, 0) << where;
    const TimelineOp& from = t.ops[static_cast<std::size_t>(src)];
    EXPECT_EQ(e.from_stage, from.stage) << where;
    EXPECT_NEAR(e.start_s, from.end_s, tol) << where;
    const double link = c.p2p_s[static_cast<std::size_t>(e.kind == OpKind::forward ? from.stage : e.to_stage)];
    EXPECT_GT(link, 0.0);
    EXPECT_NEAR(e.end_s - e.start_s, link, tol) << where;
  }

  // DP syncs, chunk by chunk: each chunk's share ((sync - tail) / v) is ready at the start of the
  // chunk's last backward-kind op (with overlap) or at the stage's last op end; shares go out in
  // order of readiness, one after another, then the tail once the stage's last op has ended; the
  // makespan is the last end of all.
  double with_sync = t.pipeline_makespan_s;
  std::size_t expected_syncs = 0;
  for (int s = 0; s < p && !c.dp_sync_s.empty(); ++s) {
    const auto su = static_cast<std::size_t>(s);
    const double last_end = t.ops[first[su + 1] - 1].end_s;
    std::vector<double> ready(static_cast<std::size_t>(v), last_end);
    if (c.dp_sync_overlap) {
      for (int chunk = 0; chunk < v; ++chunk)
        for (std::size_t i = first[su + 1]; i > first[su]; --i)
          if (t.ops[i - 1].kind != OpKind::forward && t.ops[i - 1].chunk == chunk) {
            ready[static_cast<std::size_t>(chunk)] = t.ops[i - 1].start_s;
            break;
          }
    }
    std::sort(ready.begin(), ready.end());
    const double tail = c.dp_sync_tail_s.empty() ? 0.0 : c.dp_sync_tail_s[su];
    double done = ready.front();
    for (double r : ready) done = std::max(done, r) + (c.dp_sync_s[su] - tail) / v;
    if (tail > 0) done = std::max(done, last_end) + tail;
    with_sync = std::max(with_sync, std::max(last_end, done));
    if (c.dp_sync_s[su] <= 0) continue;
    ++expected_syncs;
    const auto it = std::find_if(t.syncs.begin(), t.syncs.end(), [&](const SyncEvent& e) { return e.stage == s; });
    ASSERT_NE(it, t.syncs.end()) << where;
    EXPECT_NEAR(it->start_s, ready.front(), tol) << where;
    EXPECT_NEAR(it->end_s, done, tol) << where;
    EXPECT_GE(it->end_s - it->start_s, c.dp_sync_s[su] - tol) << where;  // never shorter than the sync
    EXPECT_GE(t.makespan_s, std::max(last_end, it->end_s) - tol) << where;
  }
  EXPECT_EQ(t.syncs.size(), expected_syncs) << where;
  EXPECT_GE(t.makespan_s, t.pipeline_makespan_s) << where;
  EXPECT_NEAR(t.makespan_s, with_sync, tol) << where;
  EXPECT_NEAR(fast_makespan, t.makespan_s, tol) << where;
  EXPECT_NEAR(fast_pipeline, t.pipeline_makespan_s, tol) << where;

  // Critical path: a chain of ops from time 0 to the pipeline makespan, each starting when its
  // predecessor (the previous op on its stage, or its input plus the link) ends.
  ASSERT_FALSE(t.critical_path.empty()) << where;
  for (std::size_t i : t.critical_path) ASSERT_LT(i, t.ops.size()) << where;
  EXPECT_NEAR(t.ops[t.critical_path.front()].start_s, 0.0, tol) << where;
  EXPECT_NEAR(t.ops[t.critical_path.back()].end_s, t.pipeline_makespan_s, tol) << where;
  for (std::size_t k = 1; k < t.critical_path.size(); ++k) {
    const std::size_t a = t.critical_path[k - 1], b = t.critical_path[k];
    const TimelineOp &x = t.ops[a], &y = t.ops[b];
    double link = 0.0;
    const bool input = input_of(y, &link) == static_cast<long>(a) && std::fabs(y.start_s - (x.end_s + link)) <= tol;
    const bool stage_order = x.stage == y.stage && b == a + 1 && std::fabs(y.start_s - x.end_s) <= tol;
    EXPECT_TRUE(input || stage_order) << where << ": critical path breaks between ops " << a << " and " << b;
  }
}

PipelineCosts random_costs(std::mt19937_64& rng, Schedule schedule) {
  std::uniform_int_distribution<int> stages(1, 8), chunks(1, 4), coin(0, 9);
  std::uniform_real_distribution<double> time(0.01, 3.0), link(0.0, 0.5), sync(0.0, 20.0);
  PipelineCosts c;
  c.schedule = schedule;
  c.stages = stages(rng);
  if (schedule == Schedule::interleaved) {
    c.chunks = chunks(rng);
    c.microbatches = c.stages * std::uniform_int_distribution<int>(1, std::max(1, 32 / c.stages))(rng);
  } else {
    c.microbatches = std::uniform_int_distribution<int>(1, 32)(rng);
  }
  const std::size_t n = c.virtual_stages() * static_cast<std::size_t>(c.microbatches);
  auto draw = [&](std::vector<double>& out) {
    out.resize(n);
    for (double& d : out) d = coin(rng) == 0 ? 0.0 : time(rng);  // some zero-length ops
  };
  draw(c.forward_s);
  draw(c.backward_s);
  if (schedule == Schedule::zb_h1) draw(c.weight_s);
  c.p2p_s.resize(static_cast<std::size_t>(c.stages));
  for (double& d : c.p2p_s) d = coin(rng) < 3 ? 0.0 : link(rng);
  if (coin(rng) < 5) {
    c.dp_sync_s.resize(static_cast<std::size_t>(c.stages));
    for (double& d : c.dp_sync_s) d = coin(rng) == 0 ? 0.0 : sync(rng);
    c.dp_sync_overlap = coin(rng) < 5;
    if (coin(rng) < 3) {
      c.dp_sync_tail_s.resize(c.dp_sync_s.size());
      for (std::size_t s = 0; s < c.dp_sync_s.size(); ++s)
        c.dp_sync_tail_s[s] = c.dp_sync_s[s] * std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    }
  }
  return c;
}

TEST(PipelineSimulator, InvariantsOverRandomUnevenCosts) {
  std::mt19937_64 rng(20240611);
  PipelineSimulator sim;  // reused across shapes, as the planner will
  for (int trial = 0; trial < 1000; ++trial)
    for (Schedule schedule : kAllSchedules) {
      const PipelineCosts c = random_costs(rng, schedule);
      const Timeline t = sim.run(c);
      double pipeline = -1.0;
      const double makespan = sim.makespan(c, &pipeline);
      check_timeline(c, t, makespan, pipeline);
      if (::testing::Test::HasFatalFailure()) {
        ADD_FAILURE() << "trial " << trial;
        return;
      }
    }
}

TEST(PipelineSimulator, UnevenStagesSlowTheWholePipeline) {
  // One stage twice as slow (t_max = 6, the others t = 3): the steady state runs at its pace. The
  // makespan lies between its own work plus the fill before it and the drain after it, and
  // (m - 1) t_max + sum of the stage times (the flush bound); the closed form with the mean stage
  // time would be far below.
  PipelineSimulator sim;
  for (Schedule schedule : {Schedule::gpipe, Schedule::one_f_one_b})
    for (int p : {2, 4, 8})
      for (int m : {8, 16, 32}) {
        auto c = PipelineCosts::uniform(schedule, p, m, 1, 1.0, 2.0);
        const int slow = p / 2;
        for (int mb = 0; mb < m; ++mb) {
          c.forward_s[static_cast<std::size_t>(slow) * m + mb] = 2.0;
          c.backward_s[static_cast<std::size_t>(slow) * m + mb] = 4.0;
        }
        const double got = sim.run(c).makespan_s;
        EXPECT_GE(got, 6.0 * m + slow * (1.0 + 2.0) - 1e-9) << shape(c);
        EXPECT_LE(got, (m - 1) * 6.0 + (p - 1) * 3.0 + 6.0 + 1e-9) << shape(c);
        EXPECT_GT(got, (m + p - 1) * (3.0 * (p + 1) / p)) << shape(c);
      }
}

TEST(PipelineSimulator, P2pAddsToEveryBoundaryCrossing) {
  // 1F1B with one micro-batch: p forwards and p backwards in a chain, 2 (p - 1) transfers.
  PipelineSimulator sim;
  for (int p : {1, 2, 5}) {
    auto c = PipelineCosts::uniform(Schedule::one_f_one_b, p, 1, 1, 1.0, 2.0);
    c.p2p_s.assign(static_cast<std::size_t>(p), 0.25);
    const Timeline t = sim.run(c);
    expect_rel(t.makespan_s, p * 3.0 + 2 * (p - 1) * 0.25, shape(c));
    EXPECT_EQ(t.p2p.size(), static_cast<std::size_t>(2 * (p - 1)));
    EXPECT_EQ(t.critical_path.size(), static_cast<std::size_t>(2 * p));
  }
}

TEST(PipelineSimulator, DataParallelSyncOverlapsTheLastBackwardOrFollowsIt) {
  PipelineSimulator sim;
  auto c = PipelineCosts::uniform(Schedule::one_f_one_b, 4, 8, 1, 1.0, 2.0);
  const double pipeline = 11 * 3.0;
  c.dp_sync_s.assign(4, 5.0);
  c.dp_sync_overlap = false;
  Timeline t = sim.run(c);
  // Stage 0 ends last; its sync follows it.
  expect_rel(t.pipeline_makespan_s, pipeline, "serial");
  expect_rel(t.makespan_s, pipeline + 5.0, "serial");
  ASSERT_EQ(t.syncs.size(), 4u);
  c.dp_sync_overlap = true;  // starts with stage 0's last backward (2 before the end)
  t = sim.run(c);
  expect_rel(t.makespan_s, pipeline - 2.0 + 5.0, "overlapped");
  c.dp_sync_s.assign(4, 1.0);  // shorter than the last backward: fully hidden
  t = sim.run(c);
  expect_rel(t.makespan_s, pipeline, "hidden");
  c.dp_sync_s.assign(4, 0.0);
  t = sim.run(c);
  EXPECT_TRUE(t.syncs.empty());
  expect_rel(t.makespan_s, pipeline, "zero");
}

// The sync's tail (the bucket holding the embedding) is ready only when the stage's last op ends:
// a sync that would hide entirely under the last backward still exposes its tail, and only that;
// without overlap the whole sync follows the stage anyway. A tail longer than its sync is refused.
TEST(PipelineSimulator, DataParallelSyncTailFollowsTheStagesLastOp) {
  PipelineSimulator sim;
  auto c = PipelineCosts::uniform(Schedule::one_f_one_b, 4, 8, 1, 1.0, 2.0);
  const double pipeline = 11 * 3.0;
  c.dp_sync_s.assign(4, 1.0);  // hidden under the last backward (2) without a tail
  c.dp_sync_overlap = true;
  c.dp_sync_tail_s = {0.5, 0.0, 0.0, 0.0};
  expect_rel(sim.run(c).makespan_s, pipeline + 0.5, "tail on the stage that ends last");
  c.dp_sync_tail_s = {0.0, 0.0, 0.0, 0.5};  // stage 3 ends 3 earlier (1F1B's cool-down)
  expect_rel(sim.run(c).makespan_s, pipeline, "tail on a stage that ends early");
  c.dp_sync_overlap = false;
  c.dp_sync_tail_s = {0.5, 0.0, 0.0, 0.0};
  expect_rel(sim.run(c).makespan_s, pipeline + 1.0, "serial");
  c.dp_sync_tail_s = {1.5, 0.0, 0.0, 0.0};
  try {
    sim.run(c);
    ADD_FAILURE() << "a tail longer than its sync was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "dp_sync_tail");
  }
}

TEST(PipelineSimulator, ReusedSimulatorMatchesAFreshOne) {
  PipelineSimulator reused;
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial)
    for (Schedule schedule : kAllSchedules) {
      const PipelineCosts c = random_costs(rng, schedule);
      PipelineSimulator fresh;
      EXPECT_EQ(reused.makespan(c), fresh.makespan(c)) << shape(c);
    }
}

// ---- bad shapes -----------------------------------------------------------------------------

TEST(PipelineSimulator, BadCostsThrowErrorsNamingTheField) {
  PipelineSimulator sim;
  auto ok = PipelineCosts::uniform(Schedule::one_f_one_b, 4, 8, 1, 1.0, 2.0);
  EXPECT_NO_THROW(sim.run(ok));
  expect_simulator_error_naming([&] { sim.run(PipelineCosts::uniform(Schedule::interleaved, 4, 6, 2, 1.0, 2.0)); },
                      "microbatches");
  expect_simulator_error_naming([&] { sim.run(PipelineCosts::uniform(Schedule::one_f_one_b, 4, 8, 2, 1.0, 2.0)); }, "vpp");
  expect_simulator_error_naming([&] { sim.run(PipelineCosts::uniform(Schedule::gpipe, 0, 8, 1, 1.0, 2.0)); }, "stages");
  expect_simulator_error_naming([&] { sim.run(PipelineCosts::uniform(Schedule::gpipe, 2, 0, 1, 1.0, 2.0)); }, "microbatches");
  auto bad = ok;
  bad.forward_s[3] = -1.0;
  expect_simulator_error_naming([&] { sim.run(bad); }, "fwd");
  bad = ok;
  bad.forward_s[0] = std::nan("");
  expect_simulator_error_naming([&] { sim.run(bad); }, "fwd");
  bad = ok;
  bad.backward_s[5] = INFINITY;
  expect_simulator_error_naming([&] { sim.run(bad); }, "bwd");
  bad = ok;
  bad.forward_s.pop_back();
  expect_simulator_error_naming([&] { sim.run(bad); }, "fwd");
  bad = ok;
  bad.backward_s.push_back(1.0);
  expect_simulator_error_naming([&] { sim.run(bad); }, "bwd");
  bad = ok;
  bad.weight_s.assign(bad.forward_s.size(), 1.0);  // W only exists in zb-h1
  expect_simulator_error_naming([&] { sim.run(bad); }, "wgrad");
  bad = PipelineCosts::uniform(Schedule::zb_h1, 4, 8, 1, 1.0, 1.0, 1.0);
  bad.weight_s.clear();
  expect_simulator_error_naming([&] { sim.run(bad); }, "wgrad");
  bad = ok;
  bad.p2p_s.resize(3);
  expect_simulator_error_naming([&] { sim.run(bad); }, "p2p");
  bad = ok;
  bad.p2p_s[1] = -0.1;
  expect_simulator_error_naming([&] { sim.run(bad); }, "p2p");
  bad = ok;
  bad.dp_sync_s.assign(3, 1.0);
  expect_simulator_error_naming([&] { sim.run(bad); }, "dp_sync");
  bad = ok;
  bad.dp_sync_s.assign(4, -1.0);
  expect_simulator_error_naming([&] { sim.run(bad); }, "dp_sync");
}

}  // namespace
}  // namespace tessera

// ---- bounded work (issue 13) ------------------------------------------------------------------

namespace tessera {
namespace {

// The 1F1B / ZB-H1 step loop as it was (every step x in [0, m + p - 1), O(m + p) per stage): the
// programs that skip empty steps must be exactly these.
std::vector<StageOp> every_step_program(Schedule schedule, int p, int m, int s) {
  std::vector<StageOp> out;
  for (int x = 0; x < m + p - 1; ++x) {
    if (x < m) out.push_back({OpKind::forward, 0, x});
    const int b = x - (p - 1 - s);
    if (b >= 0 && b < m) out.push_back({OpKind::backward, 0, b});
    const int w = x - (p - 1);
    if (schedule == Schedule::zb_h1 && w >= 0 && w < m) out.push_back({OpKind::weight, 0, w});
  }
  return out;
}

TEST(PipelineSimulatorScale, SkippingEmptyStepsKeepsEveryProgram) {
  std::vector<StageOp> got;
  for (Schedule schedule : {Schedule::one_f_one_b, Schedule::zb_h1})
    for (int p : {1, 2, 3, 7, 16})
      for (int m : {1, 2, 5, 16, 40})
        for (int s = 0; s < p; ++s) {
          stage_program(schedule, p, m, 1, s, got);
          const std::vector<StageOp> want = every_step_program(schedule, p, m, s);
          ASSERT_EQ(got.size(), want.size()) << to_string(schedule) << " p " << p << " m " << m << " s " << s;
          for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i].kind, want[i].kind);
            EXPECT_EQ(got[i].microbatch, want[i].microbatch);
          }
        }
}

// Deep pipelines with one micro-batch once cost O(p^2) (every stage walked every step, and every
// stage visited per wave); now O(ops), so 20,000 stages run at once and still match the closed
// forms: GPipe / 1F1B (m + p - 1)(f + b); ZB-H1 with m = 1 chains p forwards, p input-gradient
// backwards, then the first stage's W: p (F + B) + W.
TEST(PipelineSimulatorScale, ManyStagesMatchTheClosedForms) {
  constexpr int p = 20'000;
  constexpr double f = 1.0, b = 2.0, w = 0.5;
  PipelineSimulator sim;
  for (Schedule schedule : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::zb_h1}) {
    const bool split = schedule == Schedule::zb_h1;
    const PipelineCosts c = PipelineCosts::uniform(schedule, p, 1, 1, f, b, w);
    const Timeline t = sim.run(c);
    EXPECT_EQ(t.ops.size(), static_cast<std::size_t>(p) * (split ? 3 : 2));
    const double want = split ? p * (f + b) + w : p * (f + b + w);
    expect_rel(t.makespan_s, want, to_string(schedule));
    expect_rel(sim.makespan(c), want, to_string(schedule));
  }
  // Interleaved: m (f + b) + (p - 1)(f + b) / v, m a multiple of p.
  constexpr int ip = 200, im = 200, v = 2;
  const Timeline t = sim.run(PipelineCosts::uniform(Schedule::interleaved, ip, im, v, f, b));
  expect_rel(t.makespan_s, im * (f + b) + (ip - 1) * (f + b) / v, "interleaved");
}

TEST(PipelineSimulatorScale, OperationCountIsLimitedUpFront) {
  EXPECT_EQ(simulated_ops(Schedule::zb_h1, 4, 8, 1), 96);
  EXPECT_EQ(simulated_ops(Schedule::interleaved, 4, 8, 2), 128);
  EXPECT_NO_THROW(validate_schedule_shape(Schedule::one_f_one_b, 100, kMaxSimulatedOps / 200, 1));
  expect_simulator_error_naming([] { validate_schedule_shape(Schedule::one_f_one_b, 100, kMaxSimulatedOps / 200 + 1, 1); },
                      "microbatches");
  expect_simulator_error_naming([] { validate_schedule_shape(Schedule::zb_h1, 100, kMaxSimulatedOps / 200, 1); }, "microbatches");
  expect_simulator_error_naming([] { validate_schedule_shape(Schedule::interleaved, 100'000, 10'000'000, 10'000); },
                      "microbatches");
}

}  // namespace
}  // namespace tessera
