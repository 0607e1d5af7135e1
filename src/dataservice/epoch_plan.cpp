#include "dataservice/epoch_plan.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/checks.h"
#include "core/error.h"
#include "core/seeded_random.h"
#include "balance/microbatch_order.h"

namespace tessera {

namespace {

// The shuffle's seed: seed and epoch mixed by SplitMix64's finaliser (Steele et al., OOPSLA 2014),
// so epoch e of seed s and epoch s of seed e differ.
std::uint64_t shuffle_seed(std::uint64_t seed, std::int64_t epoch) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(epoch) + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void require_placeable(std::span<const SampleTokens> samples, std::int64_t max_tokens) {
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (samples[i].backbone_tokens() > max_tokens)
      throw Error("sample " + std::to_string(i), std::to_string(samples[i].backbone_tokens()) + " tokens",
                  "at most --max-tokens " + std::to_string(max_tokens) + " per sample");
}

StreamSettings stream_settings(const EpochSettings& e) {
  StreamSettings s;
  s.dp = e.ranks;
  s.microbatches = e.microbatches;
  s.max_tokens = e.max_tokens;
  s.method = e.method;
  s.until_placed = true;
  s.steps = static_cast<int>(std::min<std::int64_t>(kMaxSteps, kMaxSlotSteps / s.slots()));
  return s;
}

// Each rank's micro-batches of each step, in the 1F1B order its pipeline runs fastest.
void order_for_pipeline(EpochPlan& plan, std::span<const double> time_s) {
  const int m = plan.settings.microbatches;
  PipelineSimulator simulator;
  std::vector<double> batch_s(static_cast<std::size_t>(m));
  std::vector<std::vector<std::int64_t>> samples(static_cast<std::size_t>(m));
  for (int r = 0; r < plan.settings.ranks; ++r)
    for (std::int64_t first = 0; first < plan.per_rank; first += m) {
      for (int j = 0; j < m; ++j) {
        samples[static_cast<std::size_t>(j)] = std::move(plan.tasks[static_cast<std::size_t>(r * plan.per_rank + first + j)].samples);
        batch_s[static_cast<std::size_t>(j)] = 0;
        for (std::int64_t id : samples[static_cast<std::size_t>(j)]) batch_s[static_cast<std::size_t>(j)] += time_s[static_cast<std::size_t>(id)];
      }
      const MicrobatchOrder best = order_microbatches(batch_s, plan.settings.pipeline_stages, simulator);
      for (int k = 0; k < m; ++k)
        plan.tasks[static_cast<std::size_t>(r * plan.per_rank + first + k)].samples =
            std::move(samples[static_cast<std::size_t>(best.order[static_cast<std::size_t>(k)])]);
    }
}

// Each micro-batch's context-parallel split: the way whose slowest rank is faster for its documents.
void choose_cp_shardings(EpochPlan& plan, std::span<const SampleTokens> samples, const SpanCost& backbone) {
  std::vector<std::int64_t> documents;
  for (MicroBatchTask& t : plan.tasks) {
    documents.clear();
    for (std::int64_t id : t.samples) documents.push_back(samples[static_cast<std::size_t>(id)].backbone_tokens());
    t.cp_sharding = choose_cp_sharding(documents, plan.settings.context_parallel, backbone).sharding;
  }
}

}  // namespace

void EpochSettings::validate() const {
  require_positive("--ranks", ranks, 1'000'000);
  require_positive("--microbatches", microbatches, 1'000'000);
  if (static_cast<std::int64_t>(ranks) * microbatches > kMaxSlots)
    throw Error("--ranks", "ranks x micro-batches is over " + std::to_string(kMaxSlots), "fewer slots");
  require_positive("--max-tokens", max_tokens, kMaxSlotTokens);
  if (method == BalanceMethod::kk)
    throw Error("--method", "kk balances one step without a token cap", "none, fixed-greedy, lpt or wlb");
  if (epoch < 0) throw Error("--epoch", "got " + std::to_string(epoch), "0 or more");
  require_positive("--pp", pipeline_stages, 1024);
  // Context parallelism beyond 64 ranks has no published run; Megatron's largest recipes use 32.
  require_positive("--cp", context_parallel, 64);
  if (static_cast<std::int64_t>(ranks) * context_parallel > kMaxSlots)
    throw Error("--cp", "ranks x cp is over " + std::to_string(kMaxSlots), "fewer trainer ranks");
}

EpochPlan plan_epoch(std::span<const SampleTokens> samples, std::span<const double> time_s, const EpochSettings& settings,
                     const SpanCost* backbone) {
  settings.validate();
  if (settings.context_parallel > 1 && backbone == nullptr)
    throw Error("--cp", "the context-parallel split needs the backbone's cost", "a plan made with --model");
  require_placeable(samples, settings.max_tokens);
  std::vector<std::int64_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  SeededRandom(shuffle_seed(settings.seed, settings.epoch)).shuffle(std::span<std::int64_t>(order));
  std::vector<std::int64_t> tokens(order.size());
  std::vector<double> times(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    tokens[k] = samples[static_cast<std::size_t>(order[k])].backbone_tokens();
    times[k] = time_s[static_cast<std::size_t>(order[k])];
  }
  const StreamResult stream = balance_stream(tokens, times, stream_settings(settings));
  if (stream.n_carried > 0 || stream.n_assigned != static_cast<std::int64_t>(samples.size()))
    throw Error("--max-tokens", std::to_string(stream.n_carried) + " samples left unplaced", "a larger token cap");

  EpochPlan plan;
  plan.settings = settings;
  const int m = settings.microbatches;
  plan.per_rank = static_cast<std::int64_t>(stream.steps.size()) * m;
  plan.tasks.resize(static_cast<std::size_t>(settings.ranks * plan.per_rank));
  for (int r = 0; r < settings.ranks; ++r)
    for (std::int64_t pos = 0; pos < plan.per_rank; ++pos) {
      MicroBatchTask& t = plan.tasks[static_cast<std::size_t>(r * plan.per_rank + pos)];
      t.id = r * plan.per_rank + pos;
      t.rank = r;
      t.position = pos;
      t.step = static_cast<int>(pos / m);
      t.microbatch = static_cast<int>(pos % m);
    }
  for (std::size_t step = 0; step < stream.steps.size(); ++step)
    for (const SlotPlacement& placed : stream.steps[step].placements) {
      const int rank = placed.slot / m;
      const std::int64_t pos = static_cast<std::int64_t>(step) * m + placed.slot % m;
      plan.tasks[static_cast<std::size_t>(rank * plan.per_rank + pos)].samples.push_back(order[static_cast<std::size_t>(placed.item)]);
    }
  if (settings.pipeline_stages > 1 && m > 1) order_for_pipeline(plan, time_s);
  if (settings.context_parallel > 1) choose_cp_shardings(plan, samples, *backbone);
  return plan;
}

}  // namespace tessera
