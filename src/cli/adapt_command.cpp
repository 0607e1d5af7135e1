// tessera adapt simulate --model M --cluster C [--scenario NAME|FILE] [--json]
#include <fmt/core.h>

#include "adapt/training_run_simulator.h"
#include "cli/profile_note.h"
#include "cli/subcommands.h"
#include "core/error.h"
#include "io/adapt_report.h"
#include "io/gpu_catalog.h"
#include "io/json_fields.h"
#include "io/model_source.h"
#include "io/scenario_file.h"
#include "io/schema.h"

namespace tessera::cli {

void register_adapt(CLI::App& app, CommandRegistry& commands) {
  auto* adapt = app.add_subcommand("adapt", "Goodput controller: co-adapt global batch size and parallel plan");
  auto* sub = adapt->add_subcommand(
      "simulate", "Simulate a training run under fixed, batch-only, plan-only and coadaptive policies");
  struct Options {
    std::string model, cluster, scenario;  // empty: default_scenario_name(the cluster's GPUs)
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--model", o->model, "Zoo name, Tessera model JSON or HF config.json")->required();
  sub->add_option("--cluster", o->cluster, "GPU:COUNT or a cluster JSON")->required();
  sub->add_option("--scenario", o->scenario,
                  "Built-in scenario (pretrain, warmup, plateau, zero3-slower; large clusters: cbs-pretrain, cbs-ramp, "
                  "deepseek-pretrain, llama3-schedule) or a scenario JSON file (default: pretrain below 512 GPUs, "
                  "cbs-pretrain from 512)");
  sub->add_flag("--json", o->json, "Print one JSON document");
  commands.add(sub, [o, &io = commands.output()]() {
    const ModelSpec model = load_model(o->model);
    const MixedCluster mixed = load_mixed_cluster(o->cluster);
    if (mixed.pools.size() > 1)
      throw Error("--cluster", "a cluster of several GPU pools is not supported by adapt simulate",
                  "one GPU type, e.g. h100-sxm-80gb:32");
    const Cluster& cluster = mixed.pools.front();
    const std::string name = o->scenario.empty() ? default_scenario_name(cluster.gpus()) : o->scenario;
    const NoiseScaleScenario scenario = load_scenario(name, model);
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
  // `tessera adapt` alone (registered after simulate, which runs when it was given).
  commands.add(adapt, []() -> int {
    throw Error("adapt", "a subcommand is required", "simulate");
  });
}

}  // namespace tessera::cli
