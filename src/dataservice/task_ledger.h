// The coordinator's ledger of one epoch's micro-batch tasks (issue 35): which worker builds which
// task, which results wait for their trainer rank, and where each rank's cursor stands. Pure state,
// driven by the transport (dataserver/) with the time passed in, so every rule is testable alone:
// - nothing lost: a lease that runs out (its worker died or stalled) returns the task to pending,
//   and another worker gets it; a result for a task already done is ignored (the first one wins;
//   building is deterministic, so both are the same bytes);
// - nothing twice: a rank's micro-batch at position p is served only when the rank asks for p, and
//   asking for p consumes every position before it; a trainer that restarts from a checkpointed
//   cursor asks for an earlier p, which re-opens the tasks from p on (rebuilt if their results were
//   released), so its order after the restart is the plan's order again;
// - bounded memory: a task is leased only within `prefetch` positions of its rank's cursor, so at
//   most ranks x prefetch results are held, whatever the trainers' speed;
// - context parallelism: the cp trainer ranks of a data-parallel rank share its micro-batches; the
//   rank's cursor is the lowest of theirs, so a micro-batch is released once all of them are past it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dataservice/epoch_plan.h"

namespace tessera {

struct LedgerSettings {
  std::int64_t prefetch = 4;  // micro-batches a rank may have built ahead of its cursor
  double lease_s = 30.0;      // how long a worker holds a task before it is given to another
  void validate() const;      // Error naming --prefetch or --lease-s
};

enum class TaskState : std::uint8_t { pending, leased, done, consumed };

// What a rank's request for a position finds.
enum class FetchStatus : std::uint8_t { ready, not_ready, end_of_epoch, failed };

class TaskLedger {
 public:
  // `cursors`: where each trainer rank resumes (a coordinator restarted from its checkpoint); empty = 0.
  TaskLedger(const EpochPlan& plan, const LedgerSettings& settings, std::vector<std::int64_t> cursors = {});

  // The task `worker` should build next: the pending one its rank needs soonest, within the
  // ranks' prefetch windows; none when every task there is leased or done.
  std::optional<std::int64_t> lease(const std::string& worker, double now_s);
  // A built micro-batch. False when the task was already done or consumed (the result is dropped).
  bool complete(std::int64_t task, std::string payload);
  // A task that cannot be built (a bad sample the user did not allow to be skipped): the epoch fails.
  void fail(std::int64_t task, const std::string& error);
  // Returns leases past their deadline to pending; how many.
  int expire(double now_s);
  // Trainer rank `trainer` (data-parallel rank trainer / cp) asks for its micro-batch at `position`
  // (0 .. per_rank): moves its cursor there.
  FetchStatus fetch(int trainer, std::int64_t position, const std::string** payload);

  const EpochPlan& plan() const { return plan_; }
  // Each trainer rank's cursor (ranks x cp of them).
  const std::vector<std::int64_t>& cursors() const { return trainer_cursors_; }
  const std::string& error() const { return error_; }
  TaskState state(std::int64_t task) const { return state_[static_cast<std::size_t>(task)]; }
  std::size_t stored_results() const;
  std::size_t stored_bytes() const;
  std::int64_t leases_expired() const { return leases_expired_; }
  bool finished() const;  // every rank's cursor at the end of the epoch

 private:
  void move_cursor(int rank, std::int64_t position);
  std::int64_t group_cursor(int rank) const;  // the lowest cursor of the rank's trainers
  std::int64_t window_end(int rank) const;

  const EpochPlan& plan_;
  LedgerSettings settings_;
  std::vector<TaskState> state_;
  std::vector<std::string> result_;
  std::vector<double> deadline_s_;
  std::vector<std::int64_t> cursors_;          // per data-parallel rank: its trainers' lowest
  std::vector<std::int64_t> trainer_cursors_;  // per trainer rank
  std::vector<std::int64_t> leased_;  // tasks in state leased, unordered
  std::string error_;
  std::int64_t leases_expired_ = 0;
};

}  // namespace tessera
