// tessera estimate --model M --cluster C --plan P [--json] [--trace OUT] [--html OUT]: one
// iteration's time and memory.
#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cli/profile_note.h"
#include "cli/subcommands.h"
#include "cost/cost_model.h"
#include "cost/stage_memories.h"
#include "formats/json_fields.h"
#include "formats/plan_text.h"
#include "formats/schema.h"
#include "report/chrome_trace.h"
#include "report/estimate_page.h"
#include "report/estimate_report.h"
#include "report/html_file.h"
#include "report/report_timeline.h"

namespace tessera::cli {

namespace {
// The built-in default: GPT-3 175B as Narayanan et al. (SC'21, Table 1) ran it on 1024 A100s.
constexpr const char* kDefaultPlan = "tp=8,pp=16,mb=1,gbs=1536,seq=2048,recompute=full,sp=0";
}  // namespace

void register_estimate(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("estimate", "Predict one training iteration's time and memory");
  struct Options {
    std::string model = kDefaultModel, cluster = kDefaultCluster, plan = kDefaultPlan, trace, html;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--model", o->model, "Zoo name, Tessera model JSON or HF config.json")->capture_default_str();
  sub->add_option("--cluster", o->cluster, "GPU:COUNT or a cluster JSON")->capture_default_str();
  sub->add_option("--plan", o->plan, "key=value,... shorthand or a plan JSON")->capture_default_str();
  sub->add_flag("--json", o->json, "Print one JSON document");
  sub->add_option("--trace", o->trace, "Write the simulated iteration as Chrome Trace JSON (Perfetto)");
  sub->add_option("--html", o->html, "Write a self-contained HTML report (breakdown, stage memory, timeline)");
  commands.add(sub, [o, &io = commands.output()]() {
    const ModelSpec model = load_model(o->model);
    const Cluster cluster = load_cluster(o->cluster);
    const PlanRequest request = load_plan(o->plan, model, cluster);
    Timeline timeline;
    const Estimate e = estimate_with_timeline(model, cluster, request.plan, request.workload, timeline);
    if (!o->trace.empty()) {
      TraceLabels labels;
      labels.process_name = "tessera " + model.name + " " + plan_to_shorthand(request.plan, request.workload);
      labels.schedule = request.plan.vpp > 1 ? "interleaved" : "1f1b";
      io.print_error("{}", trace_truncation_note(write_chrome_trace(timeline, o->trace, labels)));
    }
    if (o->json || !o->html.empty()) {
      auto j = estimate_to_json(e, model, cluster, request.plan, request.workload);
      j["schema_version"] = kSchemaVersion;
      j["model"] = model.name;
      j["cluster"] = {{"gpu", cluster.gpu.key}, {"gpus", cluster.gpus()}, {"gpus_per_node", cluster.gpus_per_node}};
      j["plan"] = plan_to_json(request.plan, request.workload);
      j["stage_memory"] = stage_memories_to_json(stage_memories(model, cluster, request.plan, request.workload));
      note_profile(j);
      if (!o->html.empty()) {
        const std::string shorthand = plan_to_shorthand(request.plan, request.workload);
        const std::string title = fmt::format("{} schedule: {} stages, {} micro-batches (the ops of --trace)",
                                              request.plan.vpp > 1 ? "interleaved 1F1B" : "1F1B", request.plan.pp,
                                              request.plan.microbatches(request.workload));
        write_html_file(o->html, report::estimate_page_html(j, shorthand, report_timeline(timeline, title)));
      }
      if (o->json) {
        io.print("{}\n", json_fields::to_text(j, 2));
        return 0;
      }
    }
    io.print("{}{}", estimate_to_table(e, model, cluster, request.plan, request.workload), profile_note());
    return 0;
  });
}

}  // namespace tessera::cli
