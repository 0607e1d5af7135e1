#include "schedule/pipeline_simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "core/error.h"

namespace tessera {

namespace {
constexpr double kNotDone = -1.0;
constexpr PipelineSimulator::OpIndex kNoOp = -1;

bool finite_non_negative(double v) { return std::isfinite(v) && v >= 0.0; }

void check_durations(const std::vector<double>& values, std::size_t expected, const char* field) {
  if (values.size() != expected)
    throw Error(field, "has " + std::to_string(values.size()) + " entries", std::to_string(expected) +
                                                                               " (virtual stages x micro-batches)");
  for (double v : values)
    if (!finite_non_negative(v)) throw Error(field, "a duration is negative or not finite", "finite values >= 0");
}
}  // namespace

PipelineCosts PipelineCosts::uniform(Schedule schedule, int stages, int microbatches, int chunks,
                                     double forward_s, double backward_s, double weight_s) {
  PipelineCosts c;
  c.schedule = schedule;
  c.stages = stages;
  c.microbatches = microbatches;
  c.chunks = chunks;
  const std::size_t n = static_cast<std::size_t>(stages) * chunks * microbatches;
  const double v = static_cast<double>(chunks);
  c.forward_s.assign(n, forward_s / v);
  if (schedule == Schedule::zb_h1) {
    c.backward_s.assign(n, backward_s / v);
    c.weight_s.assign(n, weight_s / v);
  } else {
    c.backward_s.assign(n, (backward_s + weight_s) / v);
  }
  c.p2p_s.assign(static_cast<std::size_t>(stages), 0.0);
  return c;
}

void PipelineCosts::validate() const {
  validate_schedule_shape(schedule, stages, microbatches, chunks);
  const std::size_t n = virtual_stages() * static_cast<std::size_t>(microbatches);
  check_durations(forward_s, n, "fwd");
  check_durations(backward_s, n, "bwd");
  if (schedule == Schedule::zb_h1) check_durations(weight_s, n, "wgrad");
  else if (!weight_s.empty()) throw Error("wgrad", "a separate weight-gradient pass needs zb-h1", "zb-h1");
  check_durations(p2p_s, static_cast<std::size_t>(stages), "p2p");
  if (!dp_sync_s.empty()) check_durations(dp_sync_s, static_cast<std::size_t>(stages), "dp_sync");
  if (!dp_sync_tail_s.empty()) {
    check_durations(dp_sync_tail_s, static_cast<std::size_t>(stages), "dp_sync_tail");
    for (std::size_t s = 0; s < dp_sync_tail_s.size(); ++s)
      if (dp_sync_s.empty() || dp_sync_tail_s[s] > dp_sync_s[s])
        throw Error("dp_sync_tail", "stage " + std::to_string(s) + " has a tail longer than its sync",
                    "0 .. that stage's dp_sync");
  }
}

void PipelineSimulator::build_programs(const PipelineCosts& c) {
  if (program_schedule_ == c.schedule && program_p_ == c.stages && program_m_ == c.microbatches &&
      program_v_ == c.chunks && !program_begin_.empty())
    return;
  program_.clear();
  program_begin_.assign(static_cast<std::size_t>(c.stages) + 1, 0);
  for (int s = 0; s < c.stages; ++s) {
    stage_program(c.schedule, c.stages, c.microbatches, c.chunks, s, scratch_);
    program_begin_[static_cast<std::size_t>(s)] = program_.size();
    program_.insert(program_.end(), scratch_.begin(), scratch_.end());
  }
  program_begin_.back() = program_.size();
  program_schedule_ = c.schedule;
  program_p_ = c.stages;
  program_m_ = c.microbatches;
  program_v_ = c.chunks;
}

void PipelineSimulator::simulate(const PipelineCosts& c) {
  build_programs(c);
  const int p = c.stages, m = c.microbatches;
  const std::size_t ops = program_.size();
  // Op indices are 32-bit (memory); validate_schedule_shape keeps real shapes far below.
  if (ops > static_cast<std::size_t>(std::numeric_limits<OpIndex>::max()))
    throw Error("microbatches", std::to_string(ops) + " operations", "at most " + std::to_string(kMaxSimulatedOps));
  const std::size_t slots = c.virtual_stages() * static_cast<std::size_t>(m);
  const int last_vs = p * c.chunks - 1;
  start_.assign(ops, kNotDone);
  end_.assign(ops, kNotDone);
  pred_.assign(ops, kNoOp);
  f_index_.assign(slots, kNoOp);
  b_index_.assign(slots, kNoOp);
  w_index_.assign(slots, kNoOp);
  next_.assign(static_cast<std::size_t>(p), 0);
  free_at_.assign(static_cast<std::size_t>(p), 0.0);
  for (int s = 0; s < p; ++s) next_[static_cast<std::size_t>(s)] = program_begin_[static_cast<std::size_t>(s)];

  // Work list of stages that may be able to run: every stage at first, then a stage whenever an
  // op it may wait on (a forward from the virtual stage before it, a backward from the one after)
  // completes elsewhere. Each op wakes at most one stage, so the whole run is O(ops + p) whatever
  // the shape (a round-robin over all stages per wave would be O(p) per wave).
  const auto pu = static_cast<std::size_t>(p);
  ring_.resize(pu);
  queued_.assign(pu, 1);
  for (int s = 0; s < p; ++s) ring_[static_cast<std::size_t>(s)] = s;
  std::size_t head = 0, queued = pu;
  auto wake = [&](int stage) {
    const auto su = static_cast<std::size_t>(stage);
    if (queued_[su]) return;
    queued_[su] = 1;
    ring_[(head + queued) % pu] = stage;
    ++queued;
  };

  // Advances stage s as far as its inputs allow; returns the number of operations run.
  auto advance = [&](int s) {
    const auto su = static_cast<std::size_t>(s);
    std::size_t& i = next_[su];
    const std::size_t end = program_begin_[su + 1];
    std::size_t ran = 0;
    while (i < end) {
      const StageOp& op = program_[i];
      const int vs = op.chunk * p + s;
      const std::size_t slot = static_cast<std::size_t>(vs) * m + op.microbatch;
      double ready = 0.0;
      OpIndex dep = kNoOp;
      double duration = 0.0;
      int consumer = s;  // the stage that may wait on this op's result
      switch (op.kind) {
        case OpKind::forward: {
          if (vs > 0) {
            const OpIndex d = f_index_[slot - static_cast<std::size_t>(m)];
            if (d < 0) return ran;
            const int from = (vs - 1) % p;
            // Chunk to chunk on the same GPU (p = 1) sends nothing.
            ready = end_[static_cast<std::size_t>(d)] + (from == s ? 0.0 : c.p2p_s[static_cast<std::size_t>(from)]);
            dep = d;
          }
          duration = c.forward_s[slot];
          f_index_[slot] = static_cast<OpIndex>(i);
          if (vs < last_vs) consumer = (vs + 1) % p;
          break;
        }
        case OpKind::backward: {
          const OpIndex own = f_index_[slot];
          if (own < 0) return ran;
          if (vs < last_vs) {
            const OpIndex d = b_index_[slot + static_cast<std::size_t>(m)];
            if (d < 0) return ran;
            ready = end_[static_cast<std::size_t>(d)] + (p == 1 ? 0.0 : c.p2p_s[static_cast<std::size_t>(s)]);
            dep = d;
          } else {
            ready = end_[static_cast<std::size_t>(own)];
            dep = own;
          }
          duration = c.backward_s[slot];
          b_index_[slot] = static_cast<OpIndex>(i);
          if (vs > 0) consumer = (vs - 1) % p;
          break;
        }
        case OpKind::weight: {
          const OpIndex own = b_index_[slot];
          if (own < 0) return ran;
          ready = end_[static_cast<std::size_t>(own)];
          dep = own;
          duration = c.weight_s[slot];
          w_index_[slot] = static_cast<OpIndex>(i);
          break;
        }
      }
      const double free = free_at_[su];
      const double start = std::max(free, ready);
      start_[i] = start;
      end_[i] = start + duration;
      // The binding predecessor: the input if it arrived after the stage was free.
      pred_[i] = ready > free ? dep : (i > program_begin_[su] ? static_cast<OpIndex>(i - 1) : kNoOp);
      free_at_[su] = end_[i];
      if (consumer != s) wake(consumer);
      ++i;
      ++ran;
    }
    return ran;
  };

  std::size_t done = 0;
  while (queued > 0) {
    const int s = ring_[head];
    head = (head + 1) % pu;
    --queued;
    queued_[static_cast<std::size_t>(s)] = 0;
    done += advance(s);
  }
  if (done < ops) throw std::logic_error("pipeline schedule deadlocked (invalid program)");

  pipeline_end_ = 0.0;
  for (int s = 0; s < p; ++s) pipeline_end_ = std::max(pipeline_end_, free_at_[static_cast<std::size_t>(s)]);
  sync_gradients(c);
}

void PipelineSimulator::sync_gradients(const PipelineCosts& c) {
  const int p = c.stages;
  end_with_sync_ = pipeline_end_;
  sync_begin_.assign(static_cast<std::size_t>(p), 0.0);
  sync_end_.assign(static_cast<std::size_t>(p), 0.0);
  if (!c.dp_sync_s.empty()) {
    for (int s = 0; s < p; ++s) {
      const auto su = static_cast<std::size_t>(s);
      // Each chunk's gradients (an equal share of the stage's sync) are ready when the chunk's
      // last backward-kind op starts (bucketed overlap, Megatron-Core's per-chunk grad sync) or,
      // without overlap, when the stage's last op ends; the shares go out one after another.
      ready_.assign(static_cast<std::size_t>(c.chunks), free_at_[su]);
      if (c.dp_sync_overlap) {
        seen_.assign(static_cast<std::size_t>(c.chunks), 0);
        int found = 0;
        for (std::size_t i = program_begin_[su + 1]; i > program_begin_[su] && found < c.chunks; --i) {
          const StageOp& op = program_[i - 1];
          const auto chunk = static_cast<std::size_t>(op.chunk);
          if (op.kind != OpKind::forward && !seen_[chunk]) {
            ready_[chunk] = start_[i - 1];
            seen_[chunk] = 1;
            ++found;
          }
        }
      }
      std::sort(ready_.begin(), ready_.end());
      const double tail = c.dp_sync_tail_s.empty() ? 0.0 : c.dp_sync_tail_s[su];
      const double share = (c.dp_sync_s[su] - tail) / static_cast<double>(c.chunks);
      double t = ready_.front();
      for (double r : ready_) t = std::max(t, r) + share;
      if (tail > 0) t = std::max(t, free_at_[su]) + tail;  // ready when the stage's last op ends
      sync_begin_[su] = ready_.front();
      sync_end_[su] = t;
      end_with_sync_ = std::max(end_with_sync_, std::max(free_at_[su], t));
    }
  }
}

double PipelineSimulator::makespan(const PipelineCosts& costs, double* pipeline_makespan_s) {
  // The full validation reads every duration; the sizes are what memory safety needs.
  const std::size_t n = costs.virtual_stages() * static_cast<std::size_t>(costs.microbatches);
  if (costs.forward_s.size() != n || costs.backward_s.size() != n ||
      (costs.schedule == Schedule::zb_h1 && costs.weight_s.size() != n) ||
      costs.p2p_s.size() != static_cast<std::size_t>(costs.stages) ||
      (!costs.dp_sync_s.empty() && costs.dp_sync_s.size() != static_cast<std::size_t>(costs.stages)))
    costs.validate();  // throws, naming the field
  simulate(costs);
  if (pipeline_makespan_s != nullptr) *pipeline_makespan_s = pipeline_end_;
  return end_with_sync_;
}

Timeline PipelineSimulator::run(const PipelineCosts& c) {
  c.validate();
  simulate(c);
  Timeline t;
  const int p = c.stages, m = c.microbatches;
  t.pipeline_makespan_s = pipeline_end_;
  t.makespan_s = end_with_sync_;
  t.ops.reserve(program_.size());
  // Transfers exist only across links with a positive time (reserving for none saves 40 bytes an op).
  if (std::any_of(c.p2p_s.begin(), c.p2p_s.end(), [](double link) { return link > 0; })) t.p2p.reserve(program_.size());
  t.syncs.reserve(static_cast<std::size_t>(p));
  t.stages.resize(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    const auto su = static_cast<std::size_t>(s);
    StageSummary& summary = t.stages[su];
    int inflight = 0, peak = 0;
    for (std::size_t i = program_begin_[su]; i < program_begin_[su + 1]; ++i) {
      const StageOp& op = program_[i];
      t.ops.push_back({s, op.chunk, op.microbatch, op.kind, start_[i], end_[i]});
      summary.busy_s += end_[i] - start_[i];
      if (op.kind == OpKind::forward) peak = std::max(peak, ++inflight);
      if (op.kind == OpKind::backward) --inflight;
      // The input this op received from another stage.
      const int vs = op.chunk * p + s;
      const bool from_prev = op.kind == OpKind::forward && vs > 0;
      const bool from_next = op.kind == OpKind::backward && vs < p * c.chunks - 1;
      if ((from_prev || from_next) && p > 1) {
        const int from = from_prev ? (vs - 1) % p : (vs + 1) % p;
        const double link = c.p2p_s[static_cast<std::size_t>(from_prev ? from : s)];
        if (link > 0) {
          const std::size_t slot = static_cast<std::size_t>(from_prev ? vs - 1 : vs + 1) * m + op.microbatch;
          const std::int64_t src = from_prev ? f_index_[slot] : b_index_[slot];
          const double sent = end_[static_cast<std::size_t>(src)];
          t.p2p.push_back({from, s, op.microbatch, op.chunk, op.kind, sent, sent + link});
        }
      }
    }
    summary.idle_s = pipeline_end_ - summary.busy_s;
    summary.bubble_fraction = pipeline_end_ > 0 ? summary.idle_s / pipeline_end_ : 0.0;
    summary.peak_inflight = static_cast<double>(peak) / static_cast<double>(c.chunks);
    t.bubble_fraction += summary.bubble_fraction / static_cast<double>(p);
    if (!c.dp_sync_s.empty() && c.dp_sync_s[su] > 0) t.syncs.push_back({s, sync_begin_[su], sync_end_[su]});
  }
  // Critical path: walk binding predecessors back from the op that ends last.
  std::size_t last = 0;
  for (std::size_t i = 0; i < program_.size(); ++i)
    if (end_[i] > end_[last]) last = i;
  for (std::int64_t i = static_cast<std::int64_t>(last); i >= 0; i = pred_[static_cast<std::size_t>(i)])
    t.critical_path.push_back(static_cast<std::size_t>(i));
  std::reverse(t.critical_path.begin(), t.critical_path.end());
  return t;
}

}  // namespace tessera
