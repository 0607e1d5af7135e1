#include "cli/multimodal_plan_command.h"

#include <algorithm>
#include <utility>

#include <fmt/core.h>

#include "catalog/data_mixes.h"
#include "catalog/gpu_catalog.h"
#include "catalog/multimodal_models.h"
#include "cli/profile_note.h"
#include "core/error.h"
#include "export/megatron_launch.h"
#include "formats/data_mix_json.h"
#include "formats/json_fields.h"
#include "formats/multimodal_json.h"
#include "formats/plan_text.h"
#include "formats/schema.h"
#include "report/chrome_trace.h"
#include "report/html_file.h"
#include "report/multimodal_page.h"
#include "report/multimodal_report.h"
#include "report/report_timeline.h"
#include "search/multimodal_planner.h"

namespace tessera::cli {

namespace {

constexpr const char* kDefaultDataMix = "caption-like";
constexpr std::int64_t kMaxSeed = 1'000'000'000'000LL;


// What a monolithic or colocated step's drawing leaves out (issue 32: the trace stopped short of
// the step without a word): the backbone's pipeline is drawn, the modules' own work folded into
// its stages (and a colocated plan's own-layout phases) is priced but not drawn.
std::string not_drawn_text(const Timeline& timeline, const MultimodalPlan& plan) {
  const double missing_s = plan.iteration_time_s - timeline.makespan_s;
  if (missing_s <= 0) return "";
  return fmt::format(" (drawn {:.3f} s of the {:.3f} s step: the modules' {:.3f} s is priced, not drawn)",
                     timeline.makespan_s, plan.iteration_time_s, missing_s);
}

// --trace: the recommended strategy's step. Disaggregated: the extended pipeline (encoders first,
// generator last); monolithic: the backbone plan's pipeline as `estimate --trace` simulates it.
TraceSize write_multimodal_trace(const std::string& path, const MultimodalSpec& model, const Cluster& cluster,
                            const DataMix& mix, const MultimodalRequest& r, const MultimodalSearch& search) {
  const MultimodalStrategy chosen = recommended_strategy(search);
  if (chosen == MultimodalStrategy::none) throw Error("--trace", "no plan fits", "a request with a plan");
  const MultimodalPlan& plan = strategy_plan(search, chosen);
  TraceLabels labels;
  if (plan.disaggregated) {
    labels.process_name = "tessera " + model.name + " disaggregated (stage 0 = encoders, last = generator)";
    labels.schedule = "1f1b";
    return write_chrome_trace(disaggregated_timeline(model, cluster, mix, r.gbs, plan, static_cast<std::uint64_t>(r.seed)),
                              path, labels);
  }
  const Workload w{search.sequences, mix.sequence_tokens};
  // A colocated plan's trace is its backbone pipeline (with the shared modules folded in); the
  // own-layout modules' phases run before and after it.
  labels.process_name = "tessera " + model.name + (plan.colocated ? " colocated (backbone pipeline)" : " monolithic") +
                        " on " + std::to_string(plan.backbone_gpus) + " GPUs, backbone " +
                        plan_to_shorthand(plan.backbone_plan, w);
  labels.schedule = plan.backbone_plan.vpp > 1 ? "interleaved" : "1f1b";
  const Timeline timeline = monolithic_backbone_timeline(model, cluster, mix, r.gbs, plan);
  labels.process_name += not_drawn_text(timeline, plan);
  return write_chrome_trace(timeline, path, labels);
}

// --emit megatron: the recommended plan's backbone arguments, when Megatron-LM can run it (a
// monolithic layout is one Megatron job; per-module GPU groups are not).
std::string multimodal_megatron(const MultimodalSpec& model, const DataMix& mix, const MultimodalSearch& search) {
  const MultimodalStrategy chosen = recommended_strategy(search);
  if (chosen == MultimodalStrategy::none) throw Error("plan", "no plan fits", "more GPUs or a smaller --gbs");
  const MultimodalPlan& plan = strategy_plan(search, chosen);
  if (plan.disaggregated)
    throw Error("--emit", "the recommended plan is disaggregated, and Megatron-LM cannot express per-module GPU groups",
                "--json for the per-module plans");
  const bool own_layout = std::any_of(plan.modules.begin(), plan.modules.end(),
                                      [](const ModulePlacement& m) { return m.own_layout; });
  if (own_layout)
    throw Error("--emit", "the recommended plan is colocated with an encoder on its own layout, which Megatron-LM "
                          "cannot express",
                "--json for the per-module layouts");
  return megatron_command_line(model.backbone().transformer, plan.backbone_plan,
                               Workload{search.sequences, mix.sequence_tokens});
}

// plan --html for a multimodal model: the page from the document --json prints, with the
// simulated steps of the best disaggregated plan and of the monolithic layout on every GPU.
void write_multimodal_html(const std::string& path, const nlohmann::json& doc, const MultimodalSpec& model,
                           const Cluster& cluster, const DataMix& mix, const MultimodalRequest& r,
                           const MultimodalSearch& search) {
  report::MultimodalPageInputs in;
  in.title = "Tessera plan: " + model.name + " on " + std::to_string(cluster.gpus()) + " x " + cluster.gpu.key;
  if (!search.plans.empty())
    in.disaggregated = report_timeline(
        disaggregated_timeline(model, cluster, mix, r.gbs, search.plans[0], static_cast<std::uint64_t>(r.seed)),
        "best disaggregated plan: " + std::to_string(search.plans[0].gpus_used) + " GPUs");
  if (search.monolithic_found) {
    const Timeline timeline = monolithic_backbone_timeline(model, cluster, mix, r.gbs, search.monolithic);
    in.monolithic = report_timeline(timeline, "monolithic layout on every GPU" + not_drawn_text(timeline, search.monolithic));
  }
  write_html_file(path, report::multimodal_page_html(doc, in));
}

}  // namespace

int run_multimodal_plan(const MultimodalRequest& r, const CommandOutput& io) {
  for (const auto& [flag, set] : {std::pair{"--fix", !r.fix.empty()}, {"--max-memory-gib", r.max_memory_gib != 0}})
    if (set)
      throw Error(flag, "not available for multimodal models", "--data, --top, --seq, --seed, --json, --trace, --emit megatron");
  const MultimodalSpec model = load_multimodal_model(r.model);
  DataMix mix = load_data_mix(r.data.empty() ? kDefaultDataMix : r.data);
  const ModelSpec& backbone = model.backbone().transformer;
  if (r.seq < 0 || r.seq > backbone.max_context)
    throw Error("--seq", "got " + std::to_string(r.seq), "1 to the backbone's context " + std::to_string(backbone.max_context));
  // The mix's packed length, or the backbone's context when that is shorter (LLaVA's 4096).
  mix.sequence_tokens = r.seq > 0 ? r.seq : std::min(mix.sequence_tokens, backbone.max_context);
  DefaultNote seq_note(io);
  if (r.seq == 0)
    seq_note.set("--seq", std::to_string(mix.sequence_tokens) + " tokens, " +
                              (mix.sequence_tokens == backbone.max_context ? "the backbone's context"
                                                                           : "the data mix's packed length"));
  if (r.seed < 0 || r.seed > kMaxSeed) throw Error("--seed", "got " + std::to_string(r.seed), "0 to 10^12");
  if (r.top < 1 || r.top > 100) throw Error("--top", "got " + std::to_string(r.top), "1 to 100 for multimodal plans");
  if (!r.emit.empty() && r.emit != "megatron")
    throw Error("--emit", "unknown format '" + r.emit + "' for a multimodal model", "megatron");
  const MixedCluster mixed = load_mixed_cluster(r.cluster, r.links);
  if (mixed.pools.size() > 1) throw Error("--cluster", "multimodal plans need one GPU type", "GPU:COUNT or a one-pool cluster");
  const Cluster& cluster = mixed.pools.front();
  MultimodalOptions options;
  options.top_k = static_cast<std::size_t>(r.top);
  options.seed = static_cast<std::uint64_t>(r.seed);
  const MultimodalSearch search = search_multimodal_plans(model, cluster, mix, r.gbs, options);
  // The emitted text first: a refused --emit leaves no trace file behind.
  const std::string emitted = r.emit.empty() ? "" : multimodal_megatron(model, mix, search);
  if (!r.trace.empty()) io.print_error("{}", trace_truncation_note(write_multimodal_trace(r.trace, model, cluster, mix, r, search)));
  if (!r.emit.empty()) {
    io.print("{}\n", emitted);
    return 0;
  }
  if (r.json || !r.html.empty()) {
    auto j = multimodal_search_to_json(search, model, mix, cluster);
    j["schema_version"] = kSchemaVersion;
    note_profile(j);
    if (!r.html.empty()) write_multimodal_html(r.html, j, model, cluster, mix, r, search);
    if (r.json) {
      io.print("{}\n", json_fields::to_text(j, 2));
      return 0;
    }
  }
  io.print("{}{}", multimodal_search_to_table(search, model, mix, cluster), profile_note());
  if (!r.trace.empty()) io.print("trace written to {}\n", r.trace);
  return 0;
}

}  // namespace tessera::cli
