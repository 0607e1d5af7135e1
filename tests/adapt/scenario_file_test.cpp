// Scenario JSON files: round trip, defaults, and one-line errors naming the field.
#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include <filesystem>
#include <fstream>

#include "catalog/model_source.h"
#include "core/error.h"
#include "formats/scenario_file.h"

namespace tessera {
namespace {

TEST(ScenarioFile, BuiltInRoundTripsThroughJson) {
  const NoiseScaleScenario s = builtin_scenario("zero3-slower", builtin_model("llama3-8b"));
  const NoiseScaleScenario back = scenario_from_json(scenario_to_json(s), "scenario");
  EXPECT_EQ(back.name, s.name);
  EXPECT_EQ(back.token_budget, s.token_budget);
  EXPECT_EQ(back.min_batch, s.min_batch);
  ASSERT_EQ(back.noise_scale.size(), s.noise_scale.size());
  for (double t : {0.0, 1e6, 1e9, 1e11}) EXPECT_DOUBLE_EQ(back.noise_scale_at(t), s.noise_scale_at(t));
  EXPECT_EQ(back.step_time_scale.zero3, s.step_time_scale.zero3);
}

TEST(ScenarioFile, MinimalFileTakesDefaults) {
  const auto j = nlohmann::json::parse(
      R"({"seq_len": 2048, "token_budget": 1e9, "noise_scale": [{"tokens": 0, "noise_scale_tokens": 1e6}]})");
  const NoiseScaleScenario s = scenario_from_json(j, "scenario");
  EXPECT_EQ(s.reference_batch, 256);  // 2^19 tokens
  EXPECT_EQ(s.min_batch, 32);
  EXPECT_EQ(s.max_batch, 8192);
  EXPECT_EQ(s.network_bandwidth_scale, 1.0);
  EXPECT_EQ(s.name, "custom");
}

TEST(ScenarioFile, ErrorsNameTheField) {
  auto field_of = [](const char* text) {
    return testing::thrown_field([&] { scenario_from_json(nlohmann::json::parse(text), "scenario"); });
  };
  EXPECT_EQ(field_of(R"({"seq_len": 2048, "noise_scale": []})"), "scenario.token_budget");
  EXPECT_EQ(field_of(R"({"seq_len": 2048, "token_budget": 1e9})"), "scenario.noise_scale");
  EXPECT_EQ(field_of(R"({"seq_len": 2048, "token_budget": 1e9, "noise_scale": [{"tokens": 0}]})"),
            "scenario.noise_scale[0].noise_scale_tokens");
  EXPECT_EQ(field_of(R"({"seq_len": 2048, "token_budget": 1e9, "noise_scale": [], "bogus": 1})"), "scenario.bogus");
  EXPECT_EQ(field_of(R"({"seq_len": 2048, "token_budget": 1e9, "noise_scale": [{"tokens": 0, "noise_scale_tokens": 1}],
                        "step_time_scale": {"zero2": 2}})"),
            "scenario.step_time_scale.zero2");
  EXPECT_EQ(field_of(R"({"seq_len": 0, "token_budget": 1e9, "noise_scale": []})"), "scenario.seq_len");
}

// Values a file can hold that no scenario means: booleans for numbers, integers at or past 2^63
// (which JSON parsers read as unsigned), batches past the grid's limit, repeated trajectory points.
TEST(ScenarioFile, OutOfRangeValuesNameTheField) {
  auto field_of = [](const char* key, const char* value) {
    nlohmann::json j = nlohmann::json::parse(R"({"seq_len": 4096, "token_budget": 1e9,
        "noise_scale": [{"tokens": 0, "noise_scale_tokens": 1e6}, {"tokens": 1e9, "noise_scale_tokens": 2e6}]})");
    if (key != nullptr) j[key] = nlohmann::json::parse(value);
    return testing::thrown_field([&] { scenario_from_json(j, "scenario"); });
  };
  EXPECT_EQ(field_of(nullptr, ""), "<no error>");
  EXPECT_EQ(field_of("min_batch", "true"), "scenario.min_batch");
  EXPECT_EQ(field_of("token_budget", "false"), "scenario.token_budget");
  EXPECT_EQ(field_of("max_batch", "9223372036854775808"), "scenario.max_batch");
  EXPECT_EQ(field_of("max_batch", "10000000"), "scenario.max_batch");
  EXPECT_EQ(field_of("reference_batch", "18446744073709551615"), "scenario.reference_batch");
  EXPECT_EQ(field_of("seed", "18446744073709551615"), "scenario.seed");
  EXPECT_EQ(field_of("seq_len", "1e30"), "scenario.seq_len");
  EXPECT_EQ(field_of("step_time_jitter", "-0.1"), "scenario.step_time_jitter");
  EXPECT_EQ(field_of("gradient_noise_dimension", "0"), "scenario.gradient_noise_dimension");
  EXPECT_EQ(field_of("noise_scale", R"([{"tokens": 5, "noise_scale_tokens": 1e6}, {"tokens": 5, "noise_scale_tokens": 2e6}])"),
            "scenario.noise_scale[1].tokens");
}

TEST(ScenarioFile, LoadsANameOrAFile) {
  const ModelSpec model = builtin_model("llama3-8b");
  EXPECT_EQ(load_scenario("warmup", model).name, "warmup");
  const auto path = std::filesystem::temp_directory_path() / "tessera_scenario_test.json";
  std::ofstream(path) << R"({"name": "mine", "seq_len": 4096, "token_budget": 1e10,
                            "noise_scale": [{"tokens": 0, "noise_scale_tokens": 2e5}, {"tokens": 1e10, "noise_scale_tokens": 4e6}]})";
  EXPECT_EQ(load_scenario(path.string(), model).name, "mine");
  std::filesystem::remove(path);
  try {
    load_scenario("no-such-scenario", model);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "--scenario");
    EXPECT_NE(e.allowed().find("pretrain"), std::string::npos);
  }
}

}  // namespace
}  // namespace tessera
