// tessera plan --model M --cluster C --gbs B [--seq S] [--top K] [--json] [--quiet]
//              [--emit megatron|torchtitan|json] [--fix tp=8,...] [--max-memory-gib X]
#include <cstdio>
#include <mutex>

#include <fmt/core.h>

#include "cli/subcommands.h"
#include "core/error.h"
#include "core/units.h"
#include "io/gpu_catalog.h"
#include "io/megatron_args.h"
#include "io/model_source.h"
#include "io/plan_report.h"
#include "io/plan_text.h"
#include "io/schema.h"
#include "search/planner.h"

namespace tessera::cli {

namespace {
constexpr const char* kDefaultModel = "gpt3-175b";
constexpr const char* kDefaultCluster = "a100-sxm-80gb:1024";
constexpr std::int64_t kDefaultGbs = 1536;
constexpr int kProgressWidth = 40;
}  // namespace

void register_plan(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("plan", "Search every valid plan and rank them");
  struct Options {
    std::string model = kDefaultModel, cluster = kDefaultCluster, emit, fix;
    std::int64_t gbs = kDefaultGbs, seq = 0, top = 5;
    double max_memory_gib = 0;
    bool json = false, quiet = false, cross_node_tp = false;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--model", o->model, "Zoo name, Tessera model JSON or HF config.json")->capture_default_str();
  sub->add_option("--cluster", o->cluster, "GPU:COUNT or a cluster JSON")->capture_default_str();
  sub->add_option("--gbs", o->gbs, "Global batch (sequences per step)")->capture_default_str();
  sub->add_option("--seq", o->seq, "Sequence length (default: the model's context)");
  sub->add_option("--top", o->top, "Plans to print")->capture_default_str();
  sub->add_option("--emit", o->emit, "Print only the best plan as megatron | torchtitan | json");
  sub->add_option("--fix", o->fix, "Pin degrees or switches, e.g. tp=8,recompute=full");
  sub->add_option("--max-memory-gib", o->max_memory_gib, "Per-GPU memory budget (default: the GPU's usable memory)");
  sub->add_flag("--allow-cross-node-tp", o->cross_node_tp, "Let tensor parallelism span nodes");
  sub->add_flag("--json", o->json, "Print one JSON document");
  sub->add_flag("--quiet", o->quiet, "No progress bar");
  commands.add(sub, [o]() {
    const ModelSpec model = load_model(o->model);
    const MixedCluster mixed = load_mixed_cluster(o->cluster);
    const Cluster& cluster = mixed.pools.front();
    Workload w{o->gbs, o->seq == 0 ? model.max_context : o->seq};
    if (o->seq < 0) throw Error("--seq", "got " + std::to_string(o->seq), "a positive integer");
    w.validate();
    if (o->top < 1 || o->top > 1000) throw Error("--top", "got " + std::to_string(o->top), "1 to 1000");
    if (!o->emit.empty() && o->emit != "megatron" && o->emit != "torchtitan" && o->emit != "json")
      throw Error("--emit", "unknown format '" + o->emit + "'", "megatron, torchtitan, json");
    PlanConstraints fix = parse_constraints(o->fix);
    fix.allow_cross_node_tp = o->cross_node_tp;
    if (o->max_memory_gib != 0) fix.max_memory_gib = o->max_memory_gib;
    PlannerOptions options;
    options.top_k = static_cast<std::size_t>(o->top);
    std::mutex progress_mutex;
    int shown = -1;
    if (!o->quiet) {
      options.progress = [&](std::int64_t done, std::int64_t total) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        const int filled = total > 0 ? static_cast<int>(kProgressWidth * done / total) : kProgressWidth;
        if (filled == shown) return;
        shown = filled;
        std::fprintf(stderr, "\rsearching [%s%s] %3d%%", std::string(static_cast<std::size_t>(filled), '#').c_str(),
                     std::string(static_cast<std::size_t>(kProgressWidth - filled), ' ').c_str(),
                     static_cast<int>(100 * done / std::max<std::int64_t>(1, total)));
        if (done == total) std::fprintf(stderr, "\n");
      };
    }
    if (mixed.pools.size() > 1) {
      if (!o->emit.empty()) throw Error("--emit", "not available for a cluster of several pools", "--json or the table");
      const MixedPlan plan = search_mixed_plans(model, mixed, w, fix, options);
      if (o->json) {
        auto j = mixed_plan_to_json(plan, mixed, model, w);
        j["schema_version"] = kSchemaVersion;
        fmt::print("{}\n", j.dump(2));
      } else {
        fmt::print("{}", mixed_plan_to_table(plan, mixed, model, w));
      }
      return 0;
    }
    const PlanSearch search = search_plans(model, cluster, w, fix, options);
    if (search.evaluated == 0)
      throw Error(o->fix.empty() ? "cluster" : "fix",
                  "no valid plan shape for " + model.name + " on " + std::to_string(cluster.gpus()) + " GPUs with gbs " +
                      std::to_string(w.global_batch) + (o->fix.empty() ? "" : " and --fix " + o->fix),
                  "degrees that divide the GPU count, the heads and the batch");
    const double limit_gib = fix.max_memory_gib.value_or(cluster.gpu.usable_memory_gib);
    if (!o->emit.empty()) {
      if (search.plans.empty())
        throw Error("plan", fmt::format("no plan fits in {:.1f} GiB per GPU; the smallest peak is {:.1f} GiB",
                                        limit_gib, search.min_peak_memory_bytes / units::kGiB),
                    "a larger --max-memory-gib or more GPUs");
      const Plan& best = search.plans[0].plan;
      if (o->emit == "megatron") fmt::print("{}\n", megatron_command_line(model, best, w));
      if (o->emit == "torchtitan") fmt::print("{}", torchtitan_toml(model, best, w));
      if (o->emit == "json") {
        nlohmann::json j = {{"schema_version", kSchemaVersion},
                            {"model", model.name},
                            {"cluster", {{"gpu", cluster.gpu.key}, {"gpus", cluster.gpus()}}},
                            {"plan", plan_to_json(best, w)},
                            {"iteration_time_s", search.plans[0].estimate.iteration_time_s}};
        fmt::print("{}\n", j.dump(2));
      }
      return 0;
    }
    if (o->json) {
      auto j = plan_search_to_json(search, model, w);
      j["schema_version"] = kSchemaVersion;
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("{}", plan_search_to_table(search, model, cluster, w, limit_gib));
    }
    return 0;
  });
}

}  // namespace tessera::cli
