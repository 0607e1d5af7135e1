// tessera balance: pack and order a stream of samples over data-parallel ranks x micro-batches
// (balance/stream_balancer.h) and report how even the predicted work is.
//
//   tessera balance (--samples FILE.jsonl | --synthetic wlb-like|mllm-like) --dp D --microbatches M
//                   [--max-tokens S] [--steps K | --n N] [--method none|fixed-greedy|lpt|kk|wlb]
//                   [--model M] [--cluster C] [--seed X] [--json]
//   tessera balance --per-batch-cp --mix NAME[:WEIGHT][,NAME[:WEIGHT]...] (--gpus G | --dp D [--cp C])
//                   [--steps K (1000)] [--step-tokens T (262144)] [--mix-per-sequence]
//                   [--recompute none|selective|full (full)] [--model M] [--cluster C] [--seed X] [--json]
// runs K steps of T tokens drawn from the mixes (built-in names, .json / .jsonl files, or
// long-video) on G GPUs, static cp against per-batch cp (balance/per_batch_stream.h).
//
// Sample costs come from --model on --cluster's GPU (a ViT-H/14 encoder for images, a DiT-XL/2
// generator for generated images). With --steps K each step fills a budget of D x M x S tokens
// (samples carried over from the previous step first); with --n N one step balances N samples (no
// cap unless --max-tokens). A samples file with neither is one step over the whole file.
// time_ms times the balancing only (sample costs and the balancer), not generation or I/O.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "balance/per_batch_stream.h"
#include "balance/sample_cost.h"
#include "balance/stream_balancer.h"
#include "balance/stream_metrics.h"
#include "balance/synthetic_mix.h"
#include "catalog/data_mixes.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cli/subcommands.h"
#include "core/checks.h"
#include "core/error.h"
#include "formats/data_mix_json.h"
#include "formats/json_fields.h"
#include "formats/sample_file.h"
#include "report/balance_report.h"

namespace tessera::cli {

namespace {

constexpr const char* kDefaultBalanceModel = "llama3-8b";
constexpr const char* kDefaultGpu = "h100-sxm-80gb";
// First guess of the samples a --steps run draws, per step and slot: a 128K slot holds ~16
// wlb-like documents; more are generated (x kGrowth) whenever the stream runs out first.
constexpr std::int64_t kGuessSamplesPerSlotStep = 32;
constexpr std::int64_t kGrowth = 4;
// The most synthetic samples one run generates (~250 bytes each with their costs and placements:
// ~250 MB, ~3 s on 2 cores with the balancing). A run whose budgets need more is refused after the
// first run that runs out at this size, never cut short.
constexpr std::int64_t kMaxCliSyntheticSamples = 1'000'000;


// --per-batch-cp defaults: 1,000 steps (the stream) of 32 x 8K tokens.
constexpr std::int64_t kDefaultPerBatchSteps = 1000;
constexpr std::int64_t kDefaultStepTokens = 262'144;
constexpr const char* kLongVideoMixName = "long-video";

// A built-in mix or a file; an unknown name is an error of --mix that lists long-video too.
DataMix mix_named(const std::string& name) {
  try {
    return load_data_mix(name);
  } catch (const Error& e) {
    if (e.field() != "data") throw;  // a malformed file names its own field
    throw Error("mix", "unknown data mix '" + name + "'", e.allowed() + ", or " + kLongVideoMixName);
  }
}

// NAME or NAME:WEIGHT, comma-separated.
std::vector<WeightedMix> parse_mixes(const std::string& text) {
  std::vector<WeightedMix> out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    std::string name = text.substr(begin, end - begin);
    double weight = 1.0;
    if (const std::size_t colon = name.rfind(':'); colon != std::string::npos) {
      const std::string w = name.substr(colon + 1);
      std::size_t used = 0;
      try {
        weight = std::stod(w, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != w.size() || w.empty() || !(weight > 0))
        throw Error("mix", fmt::format("weight '{}' of '{}'", w, name), "NAME:WEIGHT with a positive number");
      name.resize(colon);
    }
    if (name.empty()) throw Error("mix", fmt::format("empty name in '{}'", text), "NAME[:WEIGHT][,NAME[:WEIGHT]...]");
    out.push_back({name == kLongVideoMixName ? long_video_mix() : mix_named(name), weight});
    begin = end + 1;
  }
  return out;
}

struct PerBatchOptions {
  std::string mix, model, cluster, recompute;
  std::int64_t gpus = 0, steps = 0, step_tokens = 0, seed = 0;
  bool mix_per_sequence = false, json = false;
};

// The per-batch planner's work: every step places each micro-batch (about step_tokens / its
// length of them) against every group of GPUs it may take, so it grows as gpus^2 x step tokens x
// steps (measured on 2 cores: 1.0-1.1 ns per unit for caption-like and long-video mixes, 64 to
// 1,024 GPUs). 6e12 units is about 8 s; every limit alone (4,096 GPUs, 2^26 tokens, 10^5 steps)
// would allow far more, so the three are bounded together.
constexpr double kMaxPerBatchWork = 6e12;

void require_per_batch_work(const PerBatchOptions& o) {
  const double work = static_cast<double>(o.gpus) * static_cast<double>(o.gpus) * static_cast<double>(o.step_tokens) *
                      static_cast<double>(o.steps);
  if (work > kMaxPerBatchWork)
    throw Error("steps", fmt::format("--gpus {} x --gpus {} x --step-tokens {} x --steps {} = {:.3g}", o.gpus, o.gpus,
                                     o.step_tokens, o.steps, work),
                fmt::format("gpus^2 x step tokens x steps of at most {:g} (about 8 s of planning on 2 cores)",
                            kMaxPerBatchWork));
}

void run_per_batch_cp(const PerBatchOptions& o, const CommandOutput& io) {
  if (o.mix.empty()) throw Error("mix", "missing for --per-batch-cp", "--mix NAME[:WEIGHT][,NAME[:WEIGHT]...]");
  require_positive("gpus", o.gpus, kMaxPerBatchGpus);
  require_per_batch_work(o);
  require_non_negative("seed", o.seed);
  PerBatchStreamSettings settings;
  settings.mixes = parse_mixes(o.mix);
  settings.steps = o.steps;
  settings.step_tokens = o.step_tokens;
  settings.mix_per_sequence = o.mix_per_sequence;
  settings.seed = static_cast<std::uint64_t>(o.seed);
  settings.validate();
  const Recompute recompute = parse_recompute(o.recompute);
  const ModelSpec model = load_model(o.model);
  const Cluster cluster = make_cluster(gpu_of_cluster(o.cluster), o.gpus);
  const CpCostModel cost = make_cp_cost_model(model, cluster, o.gpus, recompute);
  PerBatchCpPlanner planner(cost, static_cast<int>(o.gpus));
  PerBatchCpReport report;
  report.result = run_per_batch_stream(draw_stream(settings), planner);
  if (!report.result.violations.empty())
    throw std::logic_error("per-batch cp invariant broken: " + report.result.violations.front());
  report.mixes = settings.mixes;
  report.mix_per_sequence = o.mix_per_sequence;
  report.gpus = o.gpus;
  report.gpus_per_node = planner.node_gpus();
  report.steps = o.steps;
  report.step_tokens = o.step_tokens;
  report.seed = settings.seed;
  report.model = model.name;
  report.gpu = cluster.gpu.key;
  report.recompute = to_string(recompute);
  report.max_tokens_per_gpu = cost.max_tokens_per_gpu;
  if (o.json) io.print("{}\n", json_fields::to_text(per_batch_cp_report_to_json(report), 2));
  else io.print("{}", per_batch_cp_report_to_table(report));
}

struct Costs {
  std::vector<std::int64_t> tokens;
  std::vector<double> total_s, backbone_s, encoder_s, generator_s;
};

void compute_costs(const SampleCostModel& model, const std::vector<SampleTokens>& samples, Costs& c) {
  const std::size_t n = samples.size();
  c.tokens.resize(n);
  c.total_s.resize(n);
  c.backbone_s.resize(n);
  c.encoder_s.resize(n);
  c.generator_s.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const SampleCost cost = sample_cost(model, samples[i]);
    c.tokens[i] = samples[i].backbone_tokens();
    c.total_s[i] = cost.total_s();
    c.backbone_s[i] = cost.backbone_s;
    c.encoder_s[i] = cost.encoder_s;
    c.generator_s[i] = cost.generator_s;
  }
}

}  // namespace

namespace {

struct BalanceOptions {
  std::string samples, synthetic, method = "wlb", model = kDefaultBalanceModel, cluster = kDefaultGpu;
  std::int64_t dp = 0, microbatches = 0, max_tokens = 0, steps = 0, n = 0, seed = 0;
  bool json = false;
  // --per-batch-cp
  bool per_batch_cp = false, mix_per_sequence = false;
  std::string mix, recompute = "full";
  std::int64_t gpus = 0, cp = 1, step_tokens = kDefaultStepTokens;
};

void add_balance_options(CLI::App& sub, BalanceOptions& o) {
  sub.add_option("--samples", o.samples, "JSONL file, one sample per line (see README)");
  sub.add_option("--synthetic", o.synthetic, "wlb-like or mllm-like");
  sub.add_option("--dp", o.dp, "Data-parallel ranks D");
  sub.add_option("--microbatches", o.microbatches, "Micro-batches M per rank and step");
  sub.add_option("--max-tokens", o.max_tokens, "Token cap S of one micro-batch (required with --steps)");
  sub.add_option("--steps", o.steps, "Steps K, each filling D x M x S tokens");
  sub.add_option("--n", o.n, "One step over N samples");
  sub.add_option("--method", o.method, "none, fixed-greedy, lpt, kk or wlb")->capture_default_str();
  sub.add_option("--model", o.model, "Backbone: zoo name, model JSON or HF config.json")->capture_default_str();
  sub.add_option("--cluster", o.cluster, "GPU key, GPU:COUNT or cluster JSON (its GPU sets the costs)")
      ->capture_default_str();
  sub.add_option("--seed", o.seed, "Seed of the synthetic stream and the random baseline")->capture_default_str();
  sub.add_flag("--json", o.json, "Print one JSON document");
}

void add_per_batch_cp_options(CLI::App& sub, BalanceOptions& o) {
  sub.add_flag("--per-batch-cp", o.per_batch_cp, "Static cp against cp re-chosen per step on a stream of --mix");
  sub.add_option("--mix", o.mix, "With --per-batch-cp: NAME[:WEIGHT],... (built-in, file, long-video)");
  sub.add_option("--gpus", o.gpus, "With --per-batch-cp: GPUs G of a stage (or --dp x --cp)");
  sub.add_option("--cp", o.cp, "With --per-batch-cp and --dp: G = dp x cp");
  sub.add_option("--step-tokens", o.step_tokens, "With --per-batch-cp: tokens per step");
  sub.add_flag("--mix-per-sequence", o.mix_per_sequence, "With --per-batch-cp: draw each sequence's mix, not each step's");
  sub.add_option("--recompute", o.recompute, "With --per-batch-cp: none, selective or full")->capture_default_str();
}

// balance --per-batch-cp: its own inputs (a mix, a stage's GPUs), checked, then the comparison.
void per_batch_cp_command(const BalanceOptions& o, const CLI::App& sub, const CommandOutput& io) {
  if (given(sub, "--samples") || given(sub, "--synthetic") || given(sub, "--microbatches") || given(sub, "--n"))
    throw Error("per-batch-cp", "takes its samples from --mix", "--mix without --samples, --synthetic, --n, --microbatches");
  if (given(sub, "--gpus") && given(sub, "--dp"))
    throw Error("gpus", "give --gpus G or --dp D [--cp C], not both", "--gpus G or --dp D --cp C");
  if (!given(sub, "--gpus") && !given(sub, "--dp")) throw Error("gpus", "missing", "--gpus G or --dp D --cp C");
  if (given(sub, "--dp")) {
    require_positive("dp", o.dp, kMaxPerBatchGpus);
    require_positive("cp", o.cp, kMaxPerBatchGpus);
  }
  if (given(sub, "--steps")) require_positive("steps", o.steps, kMaxPerBatchSteps);
  require_positive("step-tokens", o.step_tokens, kMaxPerBatchStepTokens);
  const std::int64_t gpus = given(sub, "--gpus") ? o.gpus : o.dp * o.cp;
  run_per_batch_cp({o.mix, o.model, o.cluster, o.recompute, gpus, given(sub, "--steps") ? o.steps : kDefaultPerBatchSteps,
                    o.step_tokens, o.seed, o.mix_per_sequence, o.json},
                   io);
}

// The stream mode's flags: one sample source, the slots, and --steps or --n (not both); returns
// the --synthetic mix (wlb-like when the samples come from a file).
SyntheticMix check_stream_flags(const BalanceOptions& o, const CLI::App& sub) {
  for (const char* only : {"--mix", "--gpus", "--cp", "--step-tokens", "--mix-per-sequence", "--recompute"})
    if (given(sub, only)) throw Error(std::string(only).substr(2), "only with --per-batch-cp", "--per-batch-cp, or leave it out");
  if (given(sub, "--samples") == given(sub, "--synthetic"))
    throw Error("samples", "give exactly one of --samples and --synthetic",
                "--samples FILE.jsonl or --synthetic wlb-like|mllm-like");
  if (!given(sub, "--dp")) throw Error("dp", "missing", "--dp D, a positive integer");
  if (!given(sub, "--microbatches")) throw Error("microbatches", "missing", "--microbatches M, a positive integer");
  if (given(sub, "--steps") && given(sub, "--n")) throw Error("steps", "give --steps K or --n N, not both", "--steps K or --n N");
  require_non_negative("seed", o.seed);
  const bool synthetic = given(sub, "--synthetic");
  const SyntheticMix mix = synthetic ? parse_synthetic_mix(o.synthetic) : SyntheticMix::wlb_like;
  if (synthetic && !given(sub, "--steps") && !given(sub, "--n")) throw Error("steps", "missing for --synthetic", "--steps K or --n N");
  if (given(sub, "--n")) require_positive("n", o.n, synthetic ? kMaxCliSyntheticSamples : kMaxSyntheticSamples);
  if (given(sub, "--steps")) require_positive("steps", o.steps, kMaxSteps);
  return mix;
}

StreamSettings stream_settings(const BalanceOptions& o, bool one_step) {
  StreamSettings settings;
  require_positive("dp", o.dp, kMaxSlots);
  require_positive("microbatches", o.microbatches, kMaxSlots);
  settings.dp = static_cast<int>(o.dp);
  settings.microbatches = static_cast<int>(o.microbatches);
  settings.max_tokens = o.max_tokens;
  settings.one_step = one_step;
  settings.steps = settings.one_step ? 1 : static_cast<int>(o.steps);
  settings.method = parse_balance_method(o.method);
  settings.validate();
  return settings;
}

// The samples of the first balancing attempt: the file's (its first --n), or synthetic ones.
std::vector<SampleTokens> first_samples(const BalanceOptions& o, const CLI::App& sub, const StreamSettings& settings,
                                        SyntheticMix mix) {
  const auto seed = static_cast<std::uint64_t>(o.seed);
  if (given(sub, "--samples")) {
    std::vector<SampleTokens> samples = read_sample_file(o.samples);
    if (given(sub, "--n")) {
      if (o.n > static_cast<std::int64_t>(samples.size()))
        throw Error("n", fmt::format("the file has {} samples", samples.size()), fmt::format("1 to {}", samples.size()));
      samples.resize(static_cast<std::size_t>(o.n));
    }
    return samples;
  }
  if (settings.one_step) return synthetic_samples(mix, o.n, seed);
  return synthetic_samples(
      mix, std::min(kMaxCliSyntheticSamples, kGuessSamplesPerSlotStep * settings.slots() * (settings.steps + 1)), seed);
}

struct BalancedStream {
  Costs costs;
  StreamResult result;
  double time_ms = 0;  // costing and balancing, the last attempt
};

// Costs and balances the samples; a synthetic --steps run that runs out of samples draws more
// (the same prefix, x kGrowth) until its steps are filled, up to kMaxCliSyntheticSamples.
BalancedStream balance_samples(const BalanceOptions& o, const SampleCostModel& cost_model, const StreamSettings& settings,
                               std::vector<SampleTokens> samples, bool synthetic, SyntheticMix mix) {
  BalancedStream b;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    compute_costs(cost_model, samples, b.costs);
    b.result = balance_stream(b.costs.tokens, b.costs.total_s, settings);
    b.time_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const auto have = static_cast<std::int64_t>(samples.size());
    if (!synthetic || settings.one_step || !b.result.ran_out) break;
    if (have >= kMaxCliSyntheticSamples)
      throw Error("steps", fmt::format("{} steps of {} x {} x {} tokens need more than {} synthetic samples", o.steps,
                                       o.dp, o.microbatches, o.max_tokens, kMaxCliSyntheticSamples),
                  "fewer steps, slots or --max-tokens");
    samples = synthetic_samples(mix, std::min(kMaxCliSyntheticSamples, have * kGrowth), static_cast<std::uint64_t>(o.seed));
  }
  const std::vector<std::string> broken = stream_violations(b.result, b.costs.tokens, b.costs.total_s, settings);
  if (!broken.empty()) throw std::logic_error("balancer invariant broken: " + broken.front());
  return b;
}

BalanceReport stream_report(const BalanceOptions& o, const BalancedStream& b, const StreamSettings& settings,
                            const std::string& source, const ModelSpec& model, const GpuSpec& gpu) {
  const int slots = settings.slots();
  const auto seed = static_cast<std::uint64_t>(o.seed);
  const StreamResult& result = b.result;
  BalanceReport report;
  report.source = source;
  report.method = to_string(settings.method);
  report.dp = o.dp;
  report.microbatches = o.microbatches;
  report.max_tokens = o.max_tokens;
  report.steps = static_cast<std::int64_t>(result.steps.size());
  report.seed = seed;
  report.model = model.name;
  report.gpu = gpu.key;
  report.balanced = mean_load_balance(result, b.costs.total_s, slots);
  report.random = mean_random_load_balance(result, b.costs.total_s, slots, seed);
  const struct {
    const char* name;
    const std::vector<double>& cost;
  } modules[] = {{"backbone", b.costs.backbone_s}, {"encoder", b.costs.encoder_s}, {"generator", b.costs.generator_s}};
  for (const auto& m : modules) {
    if (std::none_of(m.cost.begin(), m.cost.end(), [](double c) { return c > 0; })) continue;
    report.modules.push_back(
        {m.name, mean_load_balance(result, m.cost, slots), mean_random_load_balance(result, m.cost, slots, seed)});
  }
  report.n_in = result.n_in;
  report.n_assigned = result.n_assigned;
  report.n_carried = result.n_carried;
  report.mean_delay_steps = result.mean_delay_steps;
  report.max_delay_steps = result.max_delay_steps;
  report.outlier_queues = result.outlier_queues;
  double slowest_sum = 0;
  for (const StepResult& step : result.steps) slowest_sum += *std::max_element(step.slot_time_s.begin(), step.slot_time_s.end());
  report.step_time_s = result.steps.empty() ? 0.0 : slowest_sum / static_cast<double>(result.steps.size());
  report.time_ms = b.time_ms;
  return report;
}

// balance: a sample file or a synthetic stream over --dp x --microbatches slots, step by step.
void stream_command(const BalanceOptions& o, const CLI::App& sub, const CommandOutput& io) {
  const SyntheticMix mix = check_stream_flags(o, sub);
  const bool synthetic = given(sub, "--synthetic");
  StreamSettings settings = stream_settings(o, !given(sub, "--steps"));
  const ModelSpec model = load_model(o.model);
  const GpuSpec gpu = gpu_of_cluster(o.cluster);
  const std::int64_t packed_tokens = o.max_tokens > 0 ? o.max_tokens : model.max_context;
  const SampleCostModel cost_model = make_sample_cost_model(model, gpu, packed_tokens);
  settings.filler_s_per_token = cost_model.backbone.linear_s_per_token;
  const BalancedStream b = balance_samples(o, cost_model, settings, first_samples(o, sub, settings, mix), synthetic, mix);
  const std::string source = synthetic ? std::string("synthetic ") + to_string(mix) : o.samples;
  const BalanceReport report = stream_report(o, b, settings, source, model, gpu);
  if (o.json) io.print("{}\n", json_fields::to_text(balance_report_to_json(report), 2));
  else io.print("{}", balance_report_to_table(report));
}

}  // namespace

void register_balance(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("balance", "Balance samples over data-parallel ranks and micro-batches");
  auto o = std::make_shared<BalanceOptions>();
  add_balance_options(*sub, *o);
  add_per_batch_cp_options(*sub, *o);
  commands.add(sub, [o, sub, &io = commands.output()]() {
    if (o->per_batch_cp) per_batch_cp_command(*o, *sub, io);
    else stream_command(*o, *sub, io);
    return 0;
  });
}

}  // namespace tessera::cli
