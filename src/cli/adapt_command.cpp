// tessera adapt simulate --model M --cluster C [--gpus N] [--scenario NAME|FILE] [--seq S]
//                        [--min-gbs B] [--max-gbs B] [--tokens T] [--trajectory NAME]
//                        [--noise-start T --noise-end T] [--json]
// tessera adapt map [--models A,B] [--gpu GPU] [--gpus N,M] [--scenario NAME] [--json]
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "adapt/batch_grid.h"
#include "adapt/gain_map.h"
#include "adapt/training_run_simulator.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cli/profile_note.h"
#include "cli/subcommands.h"
#include "core/checks.h"
#include "core/error.h"
#include "formats/json_fields.h"
#include "formats/scenario_file.h"
#include "formats/schema.h"
#include "report/adapt_report.h"
#include "report/gain_map_report.h"

namespace tessera::cli {

namespace {

struct SimulateOptions {
  std::string model, cluster, scenario;  // scenario empty: described by flags, or default_scenario_name
  std::int64_t gpus = 0, seq_len = 0, min_gbs = 0, max_gbs = 0;
  double tokens = 0, noise_start_tokens = 0, noise_end_tokens = 0;
  std::string trajectory;
  bool json = false;
};

// The cluster to simulate: --cluster as given, or with --gpus its GPU count replaced (links kept);
// with --gpus, --cluster may be a GPU name alone.
Cluster simulate_cluster(const SimulateOptions& o, const CLI::App& sub) {
  std::error_code ec;
  const bool gpus_given = given(sub, "--gpus");
  if (gpus_given) require_positive("--gpus", o.gpus, kMaxAdaptGpus);
  if (gpus_given && o.cluster.find(':') == std::string::npos && !std::filesystem::is_regular_file(o.cluster, ec))
    return make_cluster(find_gpu(o.cluster), o.gpus);
  const MixedCluster mixed = load_mixed_cluster(o.cluster);
  if (mixed.pools.size() > 1)
    throw Error("--cluster", "a cluster of several GPU pools is not supported by adapt simulate",
                "one GPU type, e.g. h100-sxm-80gb:32");
  const Cluster& given_cluster = mixed.pools.front();
  if (!gpus_given) return given_cluster;
  const std::int64_t per_node = o.gpus < given_cluster.gpus_per_node ? 0 : given_cluster.gpus_per_node;
  Cluster c = make_cluster(given_cluster.gpu, o.gpus, per_node);
  c.intra_node = given_cluster.intra_node;
  c.inter_node = given_cluster.inter_node;
  return c;
}

// --tokens, --trajectory, --noise-start and --noise-end describe a scenario; --scenario names one.
NoiseScaleScenario simulate_scenario(const SimulateOptions& o, const CLI::App& sub, const ModelSpec& model,
                                     std::int64_t gpus) {
  const bool described = given(sub, "--tokens") || given(sub, "--trajectory") || given(sub, "--noise-start") ||
                         given(sub, "--noise-end");
  if (given(sub, "--seq")) require_positive("--seq", o.seq_len, kMaxScenarioSeqLen);
  if (given(sub, "--min-gbs")) require_positive("--min-gbs", o.min_gbs, kMaxGridBatch);
  if (given(sub, "--max-gbs")) require_positive("--max-gbs", o.max_gbs, kMaxGridBatch);
  NoiseScaleScenario s;
  if (described) {
    if (!o.scenario.empty())
      throw Error("--scenario", "given with --tokens / --trajectory / --noise-start / --noise-end",
                  "either a scenario name or file, or a scenario described by those flags");
    if (given(sub, "--noise-start") != given(sub, "--noise-end"))
      throw Error(given(sub, "--noise-start") ? "--noise-end" : "--noise-start", "missing",
                  "--noise-start and --noise-end together (B_noise in tokens at the start and at the end)");
    if (given(sub, "--trajectory") && given(sub, "--noise-start"))
      throw Error("--trajectory", "given with --noise-start / --noise-end",
                  "one of the two ways to set the noise scale");
    if (given(sub, "--tokens")) require_positive_real("--tokens", o.tokens, kMaxScenarioTokens);
    // B_noise is a batch size in tokens (McCandlish et al., arXiv 1812.06162): below one token it
    // is no batch, and 1e-300 would overflow the noise model's squared norms.
    if (given(sub, "--noise-start")) require_in_range("--noise-start", o.noise_start_tokens, 1.0, kMaxScenarioTokens, "tokens");
    if (given(sub, "--noise-end")) require_in_range("--noise-end", o.noise_end_tokens, 1.0, kMaxScenarioTokens, "tokens");
    ScenarioDescription d;
    d.seq_len = o.seq_len;
    d.token_budget = o.tokens;
    if (!o.trajectory.empty()) d.trajectory = o.trajectory;
    d.noise_scale_start_tokens = o.noise_start_tokens;
    d.noise_scale_end_tokens = o.noise_end_tokens;
    s = described_scenario(d, model);
  } else {
    s = load_scenario(o.scenario.empty() ? default_scenario_name(gpus) : o.scenario, model, o.seq_len);
  }
  return with_batch_bounds(std::move(s), o.min_gbs, o.max_gbs);
}

void register_adapt_simulate(CLI::App& adapt, CommandRegistry& commands) {
  auto* sub = adapt.add_subcommand(
      "simulate", "Simulate a training run under fixed, batch-only, plan-only and coadaptive policies");
  auto o = std::make_shared<SimulateOptions>();
  sub->add_option("--model", o->model, "Zoo name, Tessera model JSON or HF config.json")->required();
  sub->add_option("--cluster", o->cluster, "GPU:COUNT or a cluster JSON (with --gpus: a GPU name is enough)")
      ->required();
  sub->add_option("--gpus", o->gpus, "Number of GPUs (replaces the count in --cluster)");
  sub->add_option("--scenario", o->scenario,
                  "Built-in scenario (pretrain, warmup, plateau, zero3-slower; large clusters: cbs-pretrain, cbs-ramp, "
                  "deepseek-pretrain, llama3-schedule) or a scenario JSON file (default: pretrain below 512 GPUs, "
                  "cbs-pretrain from 512)");
  sub->add_option("--seq", o->seq_len, "Tokens per sequence (default: min(4096, the model's context))");
  sub->add_option("--min-gbs", o->min_gbs, "Smallest global batch the policies may use, in sequences");
  sub->add_option("--max-gbs", o->max_gbs, "Largest global batch the policies may use, in sequences");
  sub->add_option("--tokens", o->tokens, "Describe the run: tokens to the target (default 20 per parameter)");
  sub->add_option("--trajectory", o->trajectory,
                  "Describe the run: critical-batch trajectory kaplan, deepseek, llama3 or merrill (default)");
  sub->add_option("--noise-start", o->noise_start_tokens, "Describe the run: noise scale at the start, in tokens");
  sub->add_option("--noise-end", o->noise_end_tokens, "Describe the run: noise scale at the end, in tokens");
  sub->add_flag("--json", o->json, "Print one JSON document");
  commands.add(sub, [o, sub, &io = commands.output()]() {
    const ModelSpec model = load_model(o->model);
    const Cluster cluster = simulate_cluster(*o, *sub);
    const NoiseScaleScenario scenario = simulate_scenario(*o, *sub, model, cluster.gpus());
    const RunSimulation sim = simulate_training_run(model, cluster, scenario);
    if (o->json) {
      auto j = run_simulation_to_json(sim, model, cluster);
      j["schema_version"] = kSchemaVersion;
      note_profile(j);
      io.print("{}\n", json_fields::to_text(j, 2));
    } else {
      io.print("{}{}", run_simulation_to_table(sim, model, cluster), profile_note());
    }
    return 0;
  });
}

void register_adapt_map(CLI::App& adapt, CommandRegistry& commands) {
  auto* sub = adapt.add_subcommand(
      "map", "Gain of co-adapting batch and plan over the best fixed configuration, over models x cluster sizes");
  struct Options {
    std::vector<std::string> models{std::begin(kDefaultGainMapModels), std::end(kDefaultGainMapModels)};
    std::vector<std::int64_t> gpus{std::begin(kDefaultGainMapGpus), std::end(kDefaultGainMapGpus)};
    std::string gpu = "h100-sxm-80gb", scenario;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--models", o->models, "Models, comma-separated (default llama3-8b,llama3-70b,llama3.1-405b)")
      ->delimiter(',');
  sub->add_option("--gpus", o->gpus, "GPU counts, comma-separated (default 32,1024,8192)")
      ->delimiter(',');
  sub->add_option("--gpu", o->gpu, "GPU type (default h100-sxm-80gb)");
  sub->add_option("--scenario", o->scenario,
                  "Built-in scenario for every cell (default: pretrain below 512 GPUs, cbs-pretrain from 512)");
  sub->add_flag("--json", o->json, "Print one JSON document");
  commands.add(sub, [o, &io = commands.output()]() {
    std::vector<ModelSpec> models;
    for (const std::string& name : o->models) models.push_back(load_model(name));
    const GpuSpec& gpu = find_gpu(o->gpu);
    const std::vector<GainMapCell> cells = gain_map(models, gpu, o->gpus, o->scenario);
    if (o->json) {
      auto j = gain_map_to_json(cells, gpu.key);
      j["schema_version"] = kSchemaVersion;
      note_profile(j);
      io.print("{}\n", json_fields::to_text(j, 2));
    } else {
      io.print("{}{}", gain_map_to_table(cells, gpu.key), profile_note());
    }
    return 0;
  });
}

}  // namespace

void register_adapt(CLI::App& app, CommandRegistry& commands) {
  auto* adapt = app.add_subcommand("adapt", "Goodput controller: co-adapt global batch size and parallel plan");
  register_adapt_simulate(*adapt, commands);
  register_adapt_map(*adapt, commands);
  // `tessera adapt` alone (registered after its subcommands, which run when one was given).
  commands.add(adapt, []() -> int {
    throw Error("adapt", "a subcommand is required", "simulate or map");
  });
}

}  // namespace tessera::cli
