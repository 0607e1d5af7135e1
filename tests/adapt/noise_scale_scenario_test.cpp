// Built-in scenarios are sized to the model and follow Kaplan et al.'s law; scenarios validate.
#include <gtest/gtest.h>

#include <cmath>

#include "adapt/noise_scale_scenario.h"
#include "core/error.h"
#include "io/model_source.h"
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

}  // namespace
}  // namespace tessera
