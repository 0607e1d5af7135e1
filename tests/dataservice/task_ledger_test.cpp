// The coordinator's ledger (dataservice/task_ledger.h) under simulated workers that die and
// trainers that restart: each rank receives exactly its plan's micro-batches in the plan's order,
// a dead worker's task is rebuilt by another, a late duplicate is dropped, and no more than
// ranks x prefetch results are ever held.
#include "dataservice/task_ledger.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/seeded_random.h"

namespace tessera {
namespace {

EpochPlan small_plan(int ranks, int n) {
  std::vector<SampleTokens> samples(static_cast<std::size_t>(n));
  std::vector<double> times;
  SeededRandom rng(3);
  for (SampleTokens& s : samples) {
    s.text_tokens = {1 + static_cast<std::int64_t>(rng.below(900))};
    times.push_back(1e-6 * static_cast<double>(s.text_tokens[0]));
  }
  EpochSettings e;
  e.ranks = ranks;
  e.microbatches = 2;
  e.max_tokens = 1024;
  return plan_epoch(samples, times, e);
}

// The payload a worker builds for a task: its sample ids, as text.
std::string built(const MicroBatchTask& t) {
  std::string out;
  for (std::int64_t id : t.samples) out += std::to_string(id) + ",";
  return out;
}

TEST(TaskLedger, LeasesTheMostUrgentTaskWithinEachRanksWindow) {
  const EpochPlan plan = small_plan(2, 200);
  TaskLedger ledger(plan, {.prefetch = 2, .lease_s = 10});
  std::vector<std::int64_t> leased;
  while (auto t = ledger.lease("w", 0.0)) leased.push_back(*t);
  // Positions 0 and 1 of each rank, nearest first.
  ASSERT_EQ(leased.size(), 4u);
  EXPECT_EQ(plan.tasks[static_cast<std::size_t>(leased[0])].position, 0);
  EXPECT_EQ(plan.tasks[static_cast<std::size_t>(leased[1])].position, 0);
  EXPECT_EQ(plan.tasks[static_cast<std::size_t>(leased[2])].position, 1);
}

TEST(TaskLedger, ADeadWorkersTaskGoesToAnotherAndALateDuplicateIsDropped) {
  const EpochPlan plan = small_plan(1, 50);
  TaskLedger ledger(plan, {.prefetch = 1, .lease_s = 5});
  const std::int64_t task = *ledger.lease("dies", 0.0);
  EXPECT_FALSE(ledger.lease("other", 1.0).has_value());  // the window is full
  EXPECT_EQ(ledger.expire(4.9), 0);
  EXPECT_EQ(ledger.expire(5.0), 1);
  EXPECT_EQ(ledger.lease("other", 5.0), task);
  EXPECT_TRUE(ledger.complete(task, built(plan.tasks[0])));
  EXPECT_FALSE(ledger.complete(task, "late"));  // the first result wins
  const std::string* payload = nullptr;
  ASSERT_EQ(ledger.fetch(0, 0, &payload), FetchStatus::ready);
  EXPECT_EQ(*payload, built(plan.tasks[0]));
}

// Workers that die at random (their tasks never complete) and trainers that restart from an
// earlier cursor: every rank's received sequence, after its last restart, is the plan's.
TEST(TaskLedger, EveryRankGetsItsPlanInOrderThroughDeathsAndRestarts) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const EpochPlan plan = small_plan(2, 300);
    const LedgerSettings settings{.prefetch = 3, .lease_s = 2};
    TaskLedger ledger(plan, settings);
    SeededRandom rng(seed);
    std::vector<std::vector<std::string>> received(2);
    std::vector<std::int64_t> position(2, 0);
    std::size_t most_held = 0;
    for (double now = 0; !ledger.finished() && now < 1e5; now += 1.0) {
      ledger.expire(now);
      for (int w = 0; w < 3; ++w)
        if (auto t = ledger.lease("w" + std::to_string(w), now); t && rng.uniform() > 0.2)
          ledger.complete(*t, built(plan.tasks[static_cast<std::size_t>(*t)]));  // else: the worker died
      for (int r = 0; r < 2; ++r) {
        if (rng.uniform() < 0.02 && position[r] > 0) {  // restart from a checkpoint a few positions back
          position[r] = std::max<std::int64_t>(0, position[r] - 1 - static_cast<std::int64_t>(rng.below(4)));
          received[r].resize(static_cast<std::size_t>(position[r]));
        }
        const std::string* payload = nullptr;
        const FetchStatus s = ledger.fetch(r, position[r], &payload);
        if (s == FetchStatus::ready) {
          received[r].push_back(*payload);
          ++position[r];
        }
      }
      most_held = std::max(most_held, ledger.stored_results());
    }
    ASSERT_TRUE(ledger.finished()) << "seed " << seed;
    for (int r = 0; r < 2; ++r) {
      ASSERT_EQ(received[r].size(), static_cast<std::size_t>(plan.per_rank));
      for (std::int64_t p = 0; p < plan.per_rank; ++p) EXPECT_EQ(received[r][static_cast<std::size_t>(p)], built(plan.at(r, p)));
    }
    EXPECT_LE(most_held, static_cast<std::size_t>(2 * settings.prefetch));
    EXPECT_GT(ledger.leases_expired(), 0);
  }
}

TEST(TaskLedger, AFailedTaskFailsTheEpochForEveryRank) {
  const EpochPlan plan = small_plan(2, 40);
  TaskLedger ledger(plan, {});
  ledger.fail(*ledger.lease("w", 0.0), "sample 3 (img/3.jpg): not a JPEG or PNG file");
  const std::string* payload = nullptr;
  EXPECT_EQ(ledger.fetch(1, 0, &payload), FetchStatus::failed);
  EXPECT_NE(ledger.error().find("sample 3"), std::string::npos);
  EXPECT_FALSE(ledger.lease("w", 1.0).has_value());
}

// Context parallelism: both trainers of a data-parallel rank get its micro-batches, and one
// trainer ahead of its sibling does not release what the sibling still needs.
TEST(TaskLedger, ContextParallelTrainersShareTheirRanksMicroBatches) {
  std::vector<SampleTokens> samples(60);
  std::vector<double> times(60, 1e-3);
  for (SampleTokens& s : samples) s.text_tokens = {300};
  EpochSettings e;
  e.ranks = 2;
  e.microbatches = 1;
  e.max_tokens = 1024;
  e.context_parallel = 2;
  SpanCost cost;
  cost.linear_s_per_token = 1e-6;
  const EpochPlan plan = plan_epoch(samples, times, e, &cost);
  TaskLedger ledger(plan, {.prefetch = 2, .lease_s = 10});
  while (auto t = ledger.lease("w", 0.0)) ledger.complete(*t, built(plan.tasks[static_cast<std::size_t>(*t)]));
  const std::string* payload = nullptr;
  // Trainer 0 (rank 0, cp 0) reads positions 0 and 1; position 0 stays held for trainer 1.
  ASSERT_EQ(ledger.fetch(0, 0, &payload), FetchStatus::ready);
  ASSERT_EQ(ledger.fetch(0, 1, &payload), FetchStatus::ready);
  EXPECT_EQ(ledger.state(plan.at(0, 0).id), TaskState::done);
  ASSERT_EQ(ledger.fetch(1, 0, &payload), FetchStatus::ready);
  EXPECT_EQ(*payload, built(plan.at(0, 0)));
  ASSERT_EQ(ledger.fetch(1, 1, &payload), FetchStatus::ready);  // now both are past 0
  EXPECT_EQ(ledger.state(plan.at(0, 0).id), TaskState::consumed);
  EXPECT_EQ(ledger.cursors(), (std::vector<std::int64_t>{1, 1, 0, 0}));
  EXPECT_THROW(ledger.fetch(4, 0, &payload), Error);
}

TEST(TaskLedger, ResumesFromCheckpointedCursors) {
  const EpochPlan plan = small_plan(2, 100);
  TaskLedger ledger(plan, {.prefetch = 1, .lease_s = 1}, {3, 5});
  const std::int64_t first = *ledger.lease("w", 0.0);
  EXPECT_EQ(plan.tasks[static_cast<std::size_t>(first)].position, 3);
  EXPECT_EQ(ledger.state(plan.at(0, 2).id), TaskState::consumed);
  EXPECT_THROW(TaskLedger(plan, {}, {0}), Error);
  EXPECT_THROW(TaskLedger(plan, {}, {0, plan.per_rank + 1}), Error);
}

}  // namespace
}  // namespace tessera
