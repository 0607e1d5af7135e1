// tessera data-serve: DistTrain's data service (issue 35). `coordinator` plans the epoch over the
// trainer ranks and serves it; `worker` builds micro-batches for a coordinator; `plan` prints the
// epoch plan a coordinator would serve (which samples each rank gets, in order).
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "balance/sample_cost.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cli/subcommands.h"
#include "dataserver/coordinator_checkpoint.h"
#include "dataserver/coordinator_server.h"
#include "dataserver/worker_loop.h"
#include "dataservice/microbatch_builder.h"
#include "dataservice/synthetic_dataset.h"
#include "formats/json_fields.h"
#include "formats/sample_index.h"

namespace tessera::cli {

namespace {

struct ServePlanOptions {
  std::string index, model = "llama3-8b", cluster = "h100-sxm-80gb", method = "wlb";
  int ranks = 0, microbatches = 0, pipeline_stages = 1, context_parallel = 1;
  std::int64_t max_tokens = 0, epoch = 0;
  std::uint64_t seed = 0;
  bool json = false;
};

struct CoordinatorOptions {
  ServePlanOptions plan;
  std::string tokenizer, resize = "fixed:336", listen = "127.0.0.1:0", checkpoint;
  int patch = 14;
  std::int64_t prefetch = 4;
  double lease_s = 30.0;
  bool resume = false, skip_bad_samples = false;
};

void add_plan_options(CLI::App& sub, ServePlanOptions& o) {
  sub.add_option("--index", o.index, "Sample index: JSONL of files and token counts (see README)");
  sub.add_option("--ranks", o.ranks, "Trainer ranks D (data-parallel)");
  sub.add_option("--microbatches", o.microbatches, "Micro-batches M per rank and step");
  sub.add_option("--max-tokens", o.max_tokens, "Tokens of one micro-batch (its packed sequence)");
  sub.add_option("--method", o.method, "Balancer: none, fixed-greedy, lpt or wlb")->capture_default_str();
  sub.add_option("--seed", o.seed, "Seed of the epoch's shuffle")->capture_default_str();
  sub.add_option("--epoch", o.epoch, "Epoch number (each epoch shuffles anew)")->capture_default_str();
  sub.add_option("--pp", o.pipeline_stages, "Pipeline stages of each rank: its micro-batches in 1F1B order")->capture_default_str();
  sub.add_option("--cp", o.context_parallel, "Context-parallel trainers per rank, each served its shard")->capture_default_str();
  sub.add_option("--model", o.model, "Backbone whose cost the balancer evens out")->capture_default_str();
  sub.add_option("--cluster", o.cluster, "GPU key, GPU:COUNT or cluster JSON (its GPU sets the costs)")->capture_default_str();
}

EpochSettings epoch_settings(const ServePlanOptions& o) {
  for (const auto& [flag, missing] : {std::pair<const char*, bool>{"--index", o.index.empty()},
                                      {"--ranks", o.ranks == 0},
                                      {"--microbatches", o.microbatches == 0},
                                      {"--max-tokens", o.max_tokens == 0}})
    if (missing) throw Error(flag, "is required", std::string(flag) + " VALUE");
  EpochSettings e;
  e.ranks = o.ranks;
  e.microbatches = o.microbatches;
  e.max_tokens = o.max_tokens;
  e.method = parse_balance_method(o.method);
  e.seed = o.seed;
  e.epoch = o.epoch;
  e.pipeline_stages = o.pipeline_stages;
  e.context_parallel = o.context_parallel;
  return e;
}

EpochPlan plan_of(const std::vector<IndexedSample>& samples, const EpochSettings& e, const ServePlanOptions& o) {
  const SampleCostModel cost = make_sample_cost_model(load_model(o.model), gpu_of_cluster(o.cluster), e.max_tokens);
  std::vector<SampleTokens> tokens;
  std::vector<double> time_s;
  for (const IndexedSample& s : samples) {
    tokens.push_back(s.tokens);
    time_s.push_back(sample_cost(cost, s.tokens).total_s());
  }
  return plan_epoch(tokens, time_s, e, &cost.backbone);
}

nlohmann::json plan_to_json(const EpochPlan& plan) {
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < plan.settings.ranks; ++r) {
    nlohmann::json batches = nlohmann::json::array();
    for (std::int64_t p = 0; p < plan.per_rank; ++p) batches.push_back(plan.at(r, p).samples);
    ranks.push_back(std::move(batches));
  }
  nlohmann::json shardings = nlohmann::json::array();
  for (int r = 0; r < plan.settings.ranks; ++r) {
    nlohmann::json rank = nlohmann::json::array();
    for (std::int64_t p = 0; p < plan.per_rank; ++p) rank.push_back(to_string(plan.at(r, p).cp_sharding));
    shardings.push_back(std::move(rank));
  }
  return {{"ranks", plan.settings.ranks}, {"microbatches", plan.settings.microbatches},
          {"max_tokens", plan.settings.max_tokens}, {"seed", plan.settings.seed}, {"epoch", plan.settings.epoch},
          {"pipeline_stages", plan.settings.pipeline_stages}, {"context_parallel", plan.settings.context_parallel},
          {"per_rank", plan.per_rank}, {"samples_per_microbatch", std::move(ranks)},
          {"cp_sharding", plan.settings.context_parallel > 1 ? std::move(shardings) : nlohmann::json(nullptr)}};
}

void register_plan_subcommand(CLI::App& parent, CommandRegistry& commands) {
  auto* sub = parent.add_subcommand("plan", "Print the epoch plan: each rank's micro-batches, as sample ids in order");
  auto o = std::make_shared<ServePlanOptions>();
  add_plan_options(*sub, *o);
  sub->add_flag("--json", o->json, "Print one JSON document");
  commands.add(sub, [o, &io = commands.output()]() {
    const EpochSettings e = epoch_settings(*o);
    const EpochPlan plan = plan_of(read_sample_index(o->index), e, *o);
    if (o->json) {
      io.print("{}\n", json_fields::to_text(plan_to_json(plan)));
    } else {
      std::int64_t empty = 0;
      for (const MicroBatchTask& t : plan.tasks) empty += t.samples.empty() ? 1 : 0;
      io.print("epoch {} (seed {}): {} ranks x {} micro-batches per step, {} steps; {} of {} micro-batches empty\n",
               e.epoch, e.seed, e.ranks, e.microbatches, plan.per_rank / e.microbatches, empty, plan.tasks.size());
    }
    return 0;
  });
}

CoordinatorSetup coordinator_setup(const CoordinatorOptions& o, const CLI::App& sub) {
  CoordinatorSetup setup;
  EpochSettings e;
  ServePlanOptions plan = o.plan;
  if (o.resume) {
    if (o.checkpoint.empty()) throw Error("--resume", "needs --checkpoint FILE to resume from", "--checkpoint FILE --resume");
    for (const char* flag : {"--index", "--ranks", "--microbatches", "--max-tokens", "--method", "--seed", "--epoch", "--pp", "--cp"})
      if (given(sub, flag)) throw Error(flag, "is set by the checkpoint when resuming", "leave it out with --resume");
    const CoordinatorCheckpoint c = read_coordinator_checkpoint(o.checkpoint);
    e = c.settings;
    plan.index = c.index;
    setup.cursors = c.cursors;
  } else {
    e = epoch_settings(plan);
  }
  setup.index_path = plan.index;
  setup.samples = read_sample_index(plan.index);
  setup.plan = plan_of(setup.samples, e, plan);
  setup.ledger = {o.prefetch, o.lease_s};
  setup.ledger.validate();
  parse_resize_policy(o.resize, o.patch);  // refused here, not in every worker
  setup.workers = {o.tokenizer, o.resize, o.patch, o.skip_bad_samples};
  if (!o.tokenizer.empty()) TextTokenizer::load(o.tokenizer);
  setup.checkpoint_path = o.checkpoint;
  return setup;
}

void register_coordinator(CLI::App& parent, CommandRegistry& commands) {
  auto* sub = parent.add_subcommand("coordinator", "Plan the epoch and serve it to workers and trainer ranks");
  auto o = std::make_shared<CoordinatorOptions>();
  add_plan_options(*sub, o->plan);
  sub->add_option("--tokenizer", o->tokenizer, "SentencePiece model the workers tokenize text with");
  sub->add_option("--resize", o->resize, "fixed:SIDE or native:MAX_SIDE")->capture_default_str();
  sub->add_option("--patch", o->patch, "Encoder patch side in pixels")->capture_default_str();
  sub->add_option("--prefetch", o->prefetch, "Micro-batches built ahead of each rank")->capture_default_str();
  sub->add_option("--lease-s", o->lease_s, "Seconds a worker holds a task before another gets it")->capture_default_str();
  sub->add_option("--listen", o->listen, "HOST:PORT (port 0: a free one, printed)")->capture_default_str();
  sub->add_option("--checkpoint", o->checkpoint, "File the coordinator keeps its cursors in");
  sub->add_flag("--resume", o->resume, "Resume the epoch from --checkpoint");
  sub->add_flag("--skip-bad-samples", o->skip_bad_samples, "Report and skip unreadable samples instead of failing");
  commands.add(sub, [o, sub, &io = commands.output()]() {
    CoordinatorSetup setup = coordinator_setup(*o, *sub);
    const std::int64_t per_rank = setup.plan.per_rank;
    const CoordinatorRun run = run_coordinator(std::move(setup), o->listen, [&](std::string_view line) { io.print("{}", line); });
    if (run.failed) throw Error("epoch", run.error, "samples that can be built, or --skip-bad-samples");
    io.print("epoch done: {} micro-batches per rank delivered, {} leases expired\n", per_rank, run.leases_expired);
    return 0;
  });
}

void register_worker(CLI::App& parent, CommandRegistry& commands) {
  auto* sub = parent.add_subcommand("worker", "Build micro-batches for a coordinator until its epoch ends");
  auto o = std::make_shared<WorkerOptions>();
  sub->add_option("--coordinator", o->coordinator, "HOST:PORT of the coordinator")->required();
  sub->add_option("--name", o->name, "Name in the coordinator's logs")->capture_default_str();
  sub->add_option("--reconnect-s", o->reconnect_s, "Seconds an unreachable coordinator is retried")->capture_default_str();
  sub->add_option("--protocol-version", o->protocol_version, "Speak another protocol version (tests)")->group("");
  commands.add(sub, [o, &io = commands.output()]() {
    const WorkerReport r = run_worker(*o);
    io.print("worker {}: {} micro-batches built, {} dropped as duplicates, {} failed\n", o->name, r.built, r.dropped, r.failed);
    return 0;
  });
}

void register_synthetic(CLI::App& parent, CommandRegistry& commands) {
  auto* sub = parent.add_subcommand("synth", "Write a synthetic image + text set, its tokenizer and its index");
  auto o = std::make_shared<SyntheticDatasetSettings>();
  auto resize = std::make_shared<std::string>("fixed:336");
  sub->add_option("--out", o->folder, "Folder to create (img/, txt/, tokenizer.model, index.jsonl)")->required();
  sub->add_option("--samples", o->samples, "Samples (one image and one text each)")->capture_default_str();
  sub->add_option("--seed", o->seed, "Seed")->capture_default_str();
  sub->add_option("--vocab", o->vocab_size, "Tokenizer vocabulary")->capture_default_str();
  sub->add_option("--resize", *resize, "Policy the image token counts are for")->capture_default_str();
  sub->add_option("--patch", o->resize.patch, "Encoder patch side in pixels")->capture_default_str();
  commands.add(sub, [o, resize, &io = commands.output()]() {
    o->resize = parse_resize_policy(*resize, o->resize.patch);
    const SyntheticDataset d = make_synthetic_dataset(*o);
    io.print("wrote {} samples ({:.1f} MB of images, {:.1f} MB of text)\nindex      {}\ntokenizer  {}\n", o->samples,
             static_cast<double>(d.image_bytes) / 1e6, static_cast<double>(d.text_bytes) / 1e6, d.index, d.tokenizer);
    return 0;
  });
}

}  // namespace

void register_data_serve(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("data-serve", "DistTrain's data service: coordinator, workers, epoch plan");
  sub->require_subcommand(1);
  register_coordinator(*sub, commands);
  register_worker(*sub, commands);
  register_plan_subcommand(*sub, commands);
  register_synthetic(*sub, commands);
}

}  // namespace tessera::cli
