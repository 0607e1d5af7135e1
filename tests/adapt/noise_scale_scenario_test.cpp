// Built-in scenarios are sized to the model and follow Kaplan et al.'s law; scenarios validate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "adapt/batch_grid.h"
#include "adapt/noise_scale_scenario.h"
#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "core/error.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

TEST(NoiseScaleScenario, BuiltInsAreSizedToTheModel) {
  for (const char* name : {"llama3-8b", "qwen2.5-32b"}) {
    const ModelSpec model = builtin_model(name);
    const double params = count_parameters(model).total();
    const NoiseScaleScenario pretrain = builtin_scenario("pretrain", model);
    EXPECT_NEAR(pretrain.token_budget, 20.0 * params, 1.0);  // Chinchilla
    EXPECT_NEAR(builtin_scenario("warmup", model).token_budget, 0.02 * pretrain.token_budget, 1.0);
    EXPECT_EQ(pretrain.seq_len, 4096);
    EXPECT_EQ(pretrain.reference_batch * pretrain.seq_len, 524288);  // Kaplan's 2^19 tokens
    // The noise scale grows along the run, and plateau holds pretrain's final value.
    for (std::size_t i = 1; i < pretrain.noise_scale.size(); ++i)
      EXPECT_GT(pretrain.noise_scale[i].noise_scale_tokens, pretrain.noise_scale[i - 1].noise_scale_tokens * 0.999);
    const NoiseScaleScenario plateau = builtin_scenario("plateau", model);
    EXPECT_NEAR(plateau.noise_scale_at(0.0), pretrain.noise_scale_at(pretrain.token_budget), 1e-6);
    EXPECT_EQ(plateau.noise_scale_at(0.0), plateau.noise_scale_at(plateau.token_budget));
    // The real cluster departs from the catalog only in zero3-slower.
    Plan zero3;
    zero3.zero = OptimizerSharding::zero3;
    EXPECT_GT(builtin_scenario("zero3-slower", model).step_time_scale.of(zero3), 1.1);
    EXPECT_EQ(pretrain.step_time_scale.of(zero3), 1.0);
  }
  // A bigger model reaches a lower loss, so a bigger critical batch, after the same tokens.
  EXPECT_GT(kaplan_critical_batch_tokens(3e10, 1e11), kaplan_critical_batch_tokens(7e9, 1e11));
  // The model's context caps the sequence.
  ModelSpec short_context = builtin_model("llama3-8b");
  short_context.max_context = 2048;
  EXPECT_EQ(builtin_scenario("pretrain", short_context).seq_len, 2048);
  EXPECT_THROW(builtin_scenario("nope", short_context), Error);
}

// Kaplan et al. 2020: B_crit(L) = 2e8 / L^(1/0.21) tokens with L(N, D) of their section 4.
TEST(NoiseScaleScenario, KaplanCriticalBatchFollowsTheirFit) {
  const double n = 7e9, d = 1e10;
  const double loss = std::pow(std::pow(8.8e13 / n, 0.076 / 0.095) + 5.4e13 / d, 0.095);
  EXPECT_NEAR(kaplan_critical_batch_tokens(n, d), 2e8 / std::pow(loss, 1.0 / 0.21), 1e-6);
}

TEST(NoiseScaleScenario, InterpolatesLogLinearlyAndHoldsTheEnds) {
  NoiseScaleScenario s;
  s.name = "t";
  s.seq_len = 1000;
  s.token_budget = 100;
  s.reference_batch = s.min_batch = 1;
  s.max_batch = 10;
  s.noise_scale = {{10, 1000}, {20, 4000}};
  s.validate();
  EXPECT_DOUBLE_EQ(s.noise_scale_at(0), 1.0);  // tokens / seq_len
  EXPECT_NEAR(s.noise_scale_at(15), 2.0, 1e-12);  // geometric midpoint
  EXPECT_DOUBLE_EQ(s.noise_scale_at(50), 4.0);
}

TEST(NoiseScaleScenario, ValidationNamesTheField) {
  const NoiseScaleScenario good = builtin_scenario("pretrain", builtin_model("llama3-8b"));
  auto expect_field = [&](const char* field, auto change) {
    NoiseScaleScenario s = good;
    change(s);
    try {
      s.validate();
      ADD_FAILURE() << field;
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), field);
    }
  };
  expect_field("scenario.token_budget", [](NoiseScaleScenario& s) { s.token_budget = 0; });
  expect_field("scenario.max_batch", [](NoiseScaleScenario& s) { s.max_batch = s.min_batch - 1; });
  expect_field("scenario.noise_scale", [](NoiseScaleScenario& s) { s.noise_scale.clear(); });
  expect_field("scenario.noise_scale[2].tokens", [](NoiseScaleScenario& s) { s.noise_scale[2].tokens = 0; });
  expect_field("scenario.noise_scale[1].noise_scale_tokens",
               [](NoiseScaleScenario& s) { s.noise_scale[1].noise_scale_tokens = -5; });
  expect_field("scenario.step_time_scale.zero3", [](NoiseScaleScenario& s) { s.step_time_scale.zero3 = 0; });
  expect_field("scenario.step_time_jitter", [](NoiseScaleScenario& s) { s.step_time_jitter = 0.9; });
  expect_field("scenario.network_bandwidth_scale", [](NoiseScaleScenario& s) { s.network_bandwidth_scale = NAN; });
}

// Every field that sizes the work or enters a product has a documented range, refused up front:
// batches (issue 13: max_batch 10,000,000 ran the planner for 22 s), sequence length, the number
// of trajectory points, vanishing scales, infinities.
TEST(NoiseScaleScenario, WorkSizingFieldsAreBounded) {
  const NoiseScaleScenario good = builtin_scenario("pretrain", builtin_model("llama3-8b"));
  auto field_of = [&](auto change) {
    NoiseScaleScenario s = good;
    change(s);
    return testing::thrown_field([&] { s.validate(); });
  };
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.max_batch = 10'000'000; }), "scenario.max_batch");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.max_batch = kMaxGridBatch + 1; }), "scenario.max_batch");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.min_batch = s.max_batch = INT64_MAX; }), "scenario.min_batch");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.reference_batch = INT64_MAX; }), "scenario.reference_batch");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.seq_len = std::int64_t{1} << 40; }), "scenario.seq_len");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.token_budget = INFINITY; }), "scenario.token_budget");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.token_budget = 1.1e16; }), "scenario.token_budget");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.step_time_scale.all = 1e-300; }), "scenario.step_time_scale.all");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.network_bandwidth_scale = 1e-300; }),
            "scenario.network_bandwidth_scale");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) {
              s.noise_scale.clear();
              for (int i = 0; i <= 10000; ++i) s.noise_scale.push_back({static_cast<double>(i), 1e6});
            }),
            "scenario.noise_scale");
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.noise_scale[1].tokens = s.noise_scale[0].tokens; }),
            "scenario.noise_scale[1].tokens");  // a duplicate point
  EXPECT_EQ(field_of([](NoiseScaleScenario& s) { s.noise_scale[0].noise_scale_tokens = INFINITY; }),
            "scenario.noise_scale[0].noise_scale_tokens");
  // The limits' edges are accepted.
  NoiseScaleScenario edge = good;
  edge.max_batch = edge.reference_batch = kMaxGridBatch;
  edge.token_budget = 1e16;
  edge.step_time_scale.all = 0.01;
  EXPECT_NO_THROW(edge.validate());
}

// Defaults for short sequences stay within the grid's limit instead of asking for 2^24 sequences.
TEST(NoiseScaleScenario, DefaultBoundsStayWithinTheGridLimit) {
  for (std::int64_t seq_len : {1, 128, 4096, 1 << 20}) {
    const BatchBounds b = default_batch_bounds(seq_len);
    EXPECT_GE(b.min_batch, 1);
    EXPECT_LE(b.min_batch, b.max_batch);
    EXPECT_LE(b.max_batch, kMaxGridBatch);
    EXPECT_LE(b.reference_batch, kMaxGridBatch);
  }
  EXPECT_EQ(default_batch_bounds(4096).max_batch, 4096);  // 2^24 tokens, as before
}

// `adapt simulate --tokens/--trajectory/--noise-start/--noise-end`: a described scenario has the
// budget given (or Chinchilla's), the large-cluster bounds, and either the named trajectory or a
// log-linear noise scale between the two ends.
TEST(NoiseScaleScenario, DescribedByFlags) {
  const ModelSpec model = builtin_model("llama3-70b");
  ScenarioDescription d;
  const NoiseScaleScenario chinchilla = described_scenario(d, model);
  EXPECT_NEAR(chinchilla.token_budget, 20.0 * count_parameters(model).total(), 1.0);
  const BatchBounds large = large_cluster_batch_bounds(chinchilla.seq_len);
  EXPECT_EQ(chinchilla.min_batch, large.min_batch);
  EXPECT_EQ(chinchilla.max_batch, large.max_batch);
  // The default trajectory (merrill) is what cbs-pretrain uses for a run of the same budget.
  const NoiseScaleScenario cbs = builtin_scenario("cbs-pretrain", model);
  EXPECT_NEAR(chinchilla.noise_scale_at(0.3 * cbs.token_budget), cbs.noise_scale_at(0.3 * cbs.token_budget), 1e-6);

  d.token_budget = 1e11;
  d.seq_len = 2048;
  d.noise_scale_start_tokens = 1e5;
  d.noise_scale_end_tokens = 1e7;
  const NoiseScaleScenario ramp = described_scenario(d, model);
  EXPECT_EQ(ramp.token_budget, 1e11);
  EXPECT_EQ(ramp.seq_len, 2048);
  // Log-linear: halfway through, the geometric mean (in sequences of 2,048 tokens).
  EXPECT_NEAR(ramp.noise_scale_at(0.5e11) * 2048, 1e6, 1e-3 * 1e6);
  EXPECT_NEAR(ramp.noise_scale_at(1e11) * 2048, 1e7, 1e-6 * 1e7);

  d = ScenarioDescription{};
  d.trajectory = "chinchilla";
  EXPECT_EQ(testing::thrown_field([&] { described_scenario(d, model); }), "--trajectory");
  d = ScenarioDescription{};
  d.token_budget = 1e17;
  EXPECT_EQ(testing::thrown_field([&] { described_scenario(d, model); }), "scenario.token_budget");
}

// --min-gbs / --max-gbs replace the grid bounds (0 keeps one), never silently clamp, and name the
// flag when out of range or crossed.
TEST(NoiseScaleScenario, BatchBoundsFromFlags) {
  const NoiseScaleScenario s = builtin_scenario("pretrain", builtin_model("llama3-8b"));
  const NoiseScaleScenario narrowed = with_batch_bounds(s, 64, 256);
  EXPECT_EQ(narrowed.min_batch, 64);
  EXPECT_EQ(narrowed.max_batch, 256);
  EXPECT_EQ(narrowed.reference_batch, s.reference_batch);
  EXPECT_EQ(with_batch_bounds(s, 0, 256).min_batch, s.min_batch);
  EXPECT_EQ(with_batch_bounds(s, 64, 0).max_batch, s.max_batch);
  using testing::thrown_field;
  EXPECT_EQ(thrown_field([&] { with_batch_bounds(s, 256, 64); }), "--max-gbs");
  EXPECT_EQ(thrown_field([&] { with_batch_bounds(s, s.max_batch + 1, 0); }), "--min-gbs");
  EXPECT_EQ(thrown_field([&] { with_batch_bounds(s, -1, 0); }), "--min-gbs");
  EXPECT_EQ(thrown_field([&] { with_batch_bounds(s, 0, kMaxGridBatch + 1); }), "--max-gbs");
}

}  // namespace
}  // namespace tessera
