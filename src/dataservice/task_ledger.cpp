#include "dataservice/task_ledger.h"

#include <algorithm>

#include "core/error.h"

namespace tessera {

namespace {
// The longest lease accepted: a day (a task is one micro-batch; nothing takes that long).
constexpr double kMaxLeaseS = 86'400.0;
}  // namespace

void LedgerSettings::validate() const {
  if (prefetch < 1 || prefetch > 1'000'000) throw Error("--prefetch", "got " + std::to_string(prefetch), "1 .. 1000000");
  if (!(lease_s > 0.0) || lease_s > kMaxLeaseS)
    throw Error("--lease-s", "got " + std::to_string(lease_s), "a number of seconds in (0, 86400]");
}

TaskLedger::TaskLedger(const EpochPlan& plan, const LedgerSettings& settings, std::vector<std::int64_t> cursors)
    : plan_(plan),
      settings_(settings),
      state_(plan.tasks.size(), TaskState::pending),
      result_(plan.tasks.size()),
      deadline_s_(plan.tasks.size(), 0.0),
      cursors_(static_cast<std::size_t>(plan.settings.ranks), 0),
      trainer_cursors_(static_cast<std::size_t>(plan.settings.trainer_ranks()), 0) {
  settings_.validate();
  if (!cursors.empty() && cursors.size() != trainer_cursors_.size())
    throw Error("cursors", std::to_string(cursors.size()) + " cursors for " + std::to_string(trainer_cursors_.size()) +
                               " trainer ranks",
                "one per trainer rank");
  for (std::size_t t = 0; t < cursors.size(); ++t)
    if (cursors[t] < 0 || cursors[t] > plan.per_rank)
      throw Error("cursors[" + std::to_string(t) + "]", "got " + std::to_string(cursors[t]),
                  "0 .. " + std::to_string(plan.per_rank));
  if (!cursors.empty()) trainer_cursors_ = std::move(cursors);
  for (int r = 0; r < plan.settings.ranks; ++r) move_cursor(r, group_cursor(r));
}

std::int64_t TaskLedger::group_cursor(int rank) const {
  const int cp = plan_.settings.context_parallel;
  const auto first = trainer_cursors_.begin() + static_cast<std::ptrdiff_t>(rank) * cp;
  return *std::min_element(first, first + cp);
}

std::int64_t TaskLedger::window_end(int rank) const {
  return std::min(plan_.per_rank, cursors_[static_cast<std::size_t>(rank)] + settings_.prefetch);
}

std::optional<std::int64_t> TaskLedger::lease(const std::string& worker, double now_s) {
  (void)worker;  // leases are anonymous: any worker's result completes a task
  if (!error_.empty()) return std::nullopt;
  std::optional<std::int64_t> best;
  std::int64_t best_ahead = 0;
  for (int r = 0; r < plan_.settings.ranks; ++r) {
    const std::int64_t cursor = cursors_[static_cast<std::size_t>(r)];
    for (std::int64_t pos = cursor; pos < window_end(r); ++pos) {
      const std::int64_t id = plan_.at(r, pos).id;
      if (state_[static_cast<std::size_t>(id)] != TaskState::pending) continue;
      if (!best || pos - cursor < best_ahead) {
        best = id;
        best_ahead = pos - cursor;
      }
      break;  // a rank's nearest pending task is its most urgent
    }
  }
  if (best) {
    state_[static_cast<std::size_t>(*best)] = TaskState::leased;
    deadline_s_[static_cast<std::size_t>(*best)] = now_s + settings_.lease_s;
    leased_.push_back(*best);
  }
  return best;
}

bool TaskLedger::complete(std::int64_t task, std::string payload) {
  if (task < 0 || task >= static_cast<std::int64_t>(state_.size())) throw Error("task_id", "no such task", "a leased task");
  TaskState& s = state_[static_cast<std::size_t>(task)];
  if (s == TaskState::done || s == TaskState::consumed) return false;
  // A result for a pending task is a late worker whose lease ran out: it counts if the task is
  // still within its rank's window (else the rank has moved on, or not come near, and it is dropped).
  const MicroBatchTask& t = plan_.tasks[static_cast<std::size_t>(task)];
  if (t.position < cursors_[static_cast<std::size_t>(t.rank)] || t.position >= window_end(t.rank)) return false;
  s = TaskState::done;
  result_[static_cast<std::size_t>(task)] = std::move(payload);
  std::erase(leased_, task);
  return true;
}

void TaskLedger::fail(std::int64_t task, const std::string& error) {
  if (error_.empty()) error_ = "micro-batch " + std::to_string(task) + ": " + error;
}

int TaskLedger::expire(double now_s) {
  int expired = 0;
  std::erase_if(leased_, [&](std::int64_t task) {
    if (deadline_s_[static_cast<std::size_t>(task)] > now_s) return false;
    state_[static_cast<std::size_t>(task)] = TaskState::pending;
    ++expired;
    return true;
  });
  leases_expired_ += expired;
  return expired;
}

// Positions before a rank's cursor are consumed, the rest are not: moving the cursor forward
// consumes the positions it passes (their results are released), moving it back (a restarted
// trainer) re-opens them.
void TaskLedger::move_cursor(int rank, std::int64_t position) {
  std::int64_t& cursor = cursors_[static_cast<std::size_t>(rank)];
  for (std::int64_t pos = cursor; pos < position; ++pos) {
    const auto id = static_cast<std::size_t>(plan_.at(rank, pos).id);
    if (state_[id] == TaskState::leased) std::erase(leased_, static_cast<std::int64_t>(id));
    state_[id] = TaskState::consumed;
    result_[id] = std::string();
  }
  for (std::int64_t pos = position; pos < cursor; ++pos) state_[static_cast<std::size_t>(plan_.at(rank, pos).id)] = TaskState::pending;
  // Moving back also shrinks the window: results past its new end are released (built again when
  // the rank gets near), so the bound of ranks x prefetch results holds through restarts.
  const std::int64_t old_end = std::min(plan_.per_rank, cursor + settings_.prefetch);
  for (std::int64_t pos = std::max(cursor, position + settings_.prefetch); pos < old_end; ++pos) {
    const auto id = static_cast<std::size_t>(plan_.at(rank, pos).id);
    if (state_[id] != TaskState::done) continue;
    state_[id] = TaskState::pending;
    result_[id] = std::string();
  }
  cursor = position;
}

FetchStatus TaskLedger::fetch(int trainer, std::int64_t position, const std::string** payload) {
  if (trainer < 0 || trainer >= plan_.settings.trainer_ranks())
    throw Error("rank", "got " + std::to_string(trainer), "0 .. " + std::to_string(plan_.settings.trainer_ranks() - 1));
  if (position < 0 || position > plan_.per_rank)
    throw Error("position", "got " + std::to_string(position), "0 .. " + std::to_string(plan_.per_rank));
  if (!error_.empty()) return FetchStatus::failed;
  trainer_cursors_[static_cast<std::size_t>(trainer)] = position;
  const int rank = trainer / plan_.settings.context_parallel;
  if (const std::int64_t group = group_cursor(rank); group != cursors_[static_cast<std::size_t>(rank)]) move_cursor(rank, group);
  if (position == plan_.per_rank) return FetchStatus::end_of_epoch;
  const auto id = static_cast<std::size_t>(plan_.at(rank, position).id);
  if (state_[id] != TaskState::done) return FetchStatus::not_ready;
  *payload = &result_[id];
  return FetchStatus::ready;
}

std::size_t TaskLedger::stored_results() const {
  return static_cast<std::size_t>(std::count(state_.begin(), state_.end(), TaskState::done));
}

std::size_t TaskLedger::stored_bytes() const {
  std::size_t bytes = 0;
  for (const std::string& r : result_) bytes += r.size();
  return bytes;
}

bool TaskLedger::finished() const {
  return std::all_of(trainer_cursors_.begin(), trainer_cursors_.end(), [&](std::int64_t c) { return c == plan_.per_rank; });
}

}  // namespace tessera
