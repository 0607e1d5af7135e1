// `tessera plan` for multimodal models, end to end: the JSON the issue specifies, the trace, and
// bad input (one line naming the field, exit 2).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace {

using namespace tessera::testing;
namespace fs = std::filesystem;

class MultimodalPlanCli : public CliScratchTest {
 protected:
  void expect_error_naming(const RunResult& r, const std::string& field) {
    EXPECT_EQ(r.signal, 0) << describe(r);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
    ASSERT_FALSE(r.err.empty()) << describe(r);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line\n" << describe(r);
    EXPECT_NE(r.err.find(field), std::string::npos) << "should name " << field << "\n" << describe(r);
  }
};

// The command: per-module plans and GPU groups, MFU, the monolithic baseline.
TEST_F(MultimodalPlanCli, JsonCarriesModulesBaselineAndBackboneMfu) {
  const fs::path trace = dir_ / "step.json";
  const RunResult r = run({"plan", "--model", "mllm-72b-gen", "--data", "caption-like", "--cluster", "h800:1296",
                           "--gbs", "1920", "--json", "--trace", trace.string()});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("schema_version"));
  ASSERT_FALSE(j.at("plans").empty());
  const auto& best = j.at("plans")[0];
  std::int64_t gpus = 0;
  for (const auto& m : best.at("modules")) {
    EXPECT_TRUE(m.contains("name"));
    EXPECT_TRUE(m.contains("plan"));
    gpus += m.at("role") == "projector" ? 0 : m.at("gpus").get<std::int64_t>();  // a projector shares its encoder's GPUs
  }
  EXPECT_EQ(gpus, best.at("gpus_used").get<std::int64_t>());
  EXPECT_LE(gpus, 1296);
  const auto& mono = j.at("baseline_monolithic");
  for (const char* key : {"iteration_time_s", "mfu", "plan"}) EXPECT_TRUE(mono.contains(key)) << key;
  EXPECT_GT(j.at("backbone_only_mfu").get<double>(), 0.0);
  EXPECT_GE(mono.at("iteration_time_s").get<double>() / best.at("iteration_time_s").get<double>(), 1.3);
  // The recommendation is the fastest strategy reported: disaggregated unless the monolithic
  // layout on the backbone's best subset of GPUs beats it (since the memory model's physical
  // runtime reserve, a ZeRO-3 monolithic layout on 1,280 GPUs fits and does).
  const double disaggregated_s = best.at("iteration_time_s").get<double>();
  const auto& subset = j.at("on_fewer_gpus");
  const bool subset_faster = subset.at("baseline_monolithic").is_object() &&
                             subset.at("baseline_monolithic").at("iteration_time_s").get<double>() < disaggregated_s;
  EXPECT_EQ(j.at("recommended"), subset_faster ? "monolithic on " + std::to_string(subset.at("gpus").get<std::int64_t>()) + " GPUs"
                                               : std::string("disaggregated"));
  EXPECT_FALSE(best.at("megatron_args").empty());
  // The trace is a Chrome/Perfetto document with one track per stage.
  std::ifstream in(trace);
  const auto t = nlohmann::json::parse(in);
  EXPECT_FALSE(t.at("traceEvents").empty());
}

TEST_F(MultimodalPlanCli, BadInputNamesTheField) {
  expect_error_naming(run({"plan", "--model", "mllm-72b-gen", "--data", "no-such-mix", "--cluster", "h800:64"}), "data");
  expect_error_naming(run({"plan", "--model", "llama2-7b", "--data", "caption-like"}), "--model");
  expect_error_naming(run({"plan", "--model", file("broken.json", "{\"modules\": [").string(), "--data", "caption-like"}),
                      "malformed JSON");
  expect_error_naming(run({"plan", "--model", "llava-1.5-7b", "--seq", "100000", "--cluster", "h100-sxm-80gb:16"}), "--seq");
  expect_error_naming(run({"plan", "--model", "llava-1.5-7b", "--fix", "tp=2", "--cluster", "h100-sxm-80gb:16"}), "--fix");
  expect_error_naming(run({"plan", "--model", "llava-1.5-7b", "--gbs", "0", "--cluster", "h100-sxm-80gb:16"}), "gbs");
  {
    std::ofstream bad(dir_ / "samples.jsonl");
    bad << "{\"text_tokens\": 10, \"images\": [336]}\n{\"text_tokens\": 10, \"images\": [-5]}\n";
  }
  expect_error_naming(run({"plan", "--model", "llava-1.5-7b", "--data", (dir_ / "samples.jsonl").string(), "--cluster",
                           "h100-sxm-80gb:16", "--gbs", "16"}),
                      "data.samples[1].images");
}

// Real sample sizes from a JSONL file drive the plan.
TEST_F(MultimodalPlanCli, JsonlSamplesPlan) {
  {
    std::ofstream s(dir_ / "samples.jsonl");
    for (int i = 0; i < 50; ++i) s << "{\"text_tokens\": " << 40 + i << ", \"images\": [" << (i % 2 ? 336 : 672) << "]}\n";
  }
  const RunResult r = run({"plan", "--model", "llava-1.5-7b", "--data", (dir_ / "samples.jsonl").string(), "--cluster",
                           "h100-sxm-80gb:16", "--gbs", "32", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("data"), "samples");
  EXPECT_EQ(j.at("sequence_tokens"), 4096);  // LLaVA's context is shorter than the default 8192
}

}  // namespace
