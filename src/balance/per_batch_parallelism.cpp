#include "balance/per_batch_parallelism.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/core.h>

#include "core/error.h"

namespace tessera {

namespace {

constexpr double kInfeasible = StepDecision::kInfeasible;
// Bisection steps on the makespan: the interval [lower bound, best static] shrinks 2^-24 of its
// width, far below the cost model's accuracy.
constexpr int kBisectionSteps = 24;
// Relative slack when comparing a group's finish time with the target (floating-point sums).
constexpr double kTargetSlack = 1e-12;

int node_size(int gpus, int gpus_per_node) { return std::min(gpus, std::max(1, gpus_per_node)); }

}  // namespace

std::int64_t StepBatch::tokens(std::size_t i) const {
  const auto docs = microbatch(i);
  return std::accumulate(docs.begin(), docs.end(), std::int64_t{0});
}

void StepBatch::add(std::span<const std::int64_t> microbatch_documents) {
  documents.insert(documents.end(), microbatch_documents.begin(), microbatch_documents.end());
  offsets.push_back(documents.size());
}

void StepBatch::clear() {
  documents.clear();
  offsets.assign(1, 0);
}

std::vector<int> allowed_cp_degrees(int gpus, int gpus_per_node) {
  const int node = node_size(gpus, gpus_per_node);
  std::vector<int> out;
  for (int c = 1; c <= gpus; ++c)
    if (c <= node || c % node == 0) out.push_back(c);
  return out;
}

std::vector<int> static_cp_degrees(int gpus, int gpus_per_node) {
  const int node = node_size(gpus, gpus_per_node);
  std::vector<int> out;
  for (int c : allowed_cp_degrees(gpus, gpus_per_node))
    if (gpus % c == 0 && (node % c == 0 || c % node == 0)) out.push_back(c);
  return out;
}

PerBatchCpPlanner::PerBatchCpPlanner(const CpCostModel& model, int gpus) : model_(model), gpus_(gpus) {
  if (gpus < 1 || gpus > kMaxPerBatchGpus)
    throw Error("gpus", fmt::format("got {}", gpus), fmt::format("1 to {}", kMaxPerBatchGpus));
  node_gpus_ = node_size(gpus, static_cast<int>(model.cluster.gpus_per_node));
  if (gpus % node_gpus_ != 0)
    throw Error("gpus", fmt::format("{} GPUs do not fill whole nodes of {}", gpus, node_gpus_),
                fmt::format("a multiple of {}", node_gpus_));
  degrees_ = allowed_cp_degrees(gpus, node_gpus_);
  static_degrees_ = static_cp_degrees(gpus, node_gpus_);
  degree_index_.assign(static_cast<std::size_t>(gpus) + 1, -1);
  for (std::size_t k = 0; k < degrees_.size(); ++k)
    degree_index_[static_cast<std::size_t>(degrees_[k])] = static_cast<int>(k);
  node_free_.resize(static_cast<std::size_t>(gpus / node_gpus_));
}

void PerBatchCpPlanner::cost_step(const StepBatch& batch) {
  const std::size_t D = degrees_.size();
  microbatches_ = batch.size();
  time_.resize(microbatches_ * D);
  least_work_.resize(microbatches_);
  for (std::size_t m = 0; m < microbatches_; ++m) {
    const std::span<const std::int64_t> docs = batch.microbatch(m);
    const int min_degree = model_.min_degree(batch.tokens(m));
    if (min_degree > gpus_)
      throw Error("gpus",
                  fmt::format("micro-batch {} of {} tokens needs {} GPUs' memory ({} tokens per GPU)", m,
                              batch.tokens(m), min_degree, model_.max_tokens_per_gpu),
                  fmt::format("at least {} GPUs, or shorter sequences", min_degree));
    least_work_[m] = kInfeasible;
    for (std::size_t k = 0; k < D; ++k) {
      const double t =
          degrees_[k] < min_degree ? kInfeasible : cp_microbatch_time(model_, docs, degrees_[k], scratch_).total_s;
      time_[m * D + k] = t;
      least_work_[m] = std::min(least_work_[m], degrees_[k] * t);
    }
  }
}

double PerBatchCpPlanner::microbatch_time_s(std::size_t microbatch, int degree) const {
  if (microbatch >= microbatches_ || degree < 1 || degree > gpus_ ||
      degree_index_[static_cast<std::size_t>(degree)] < 0)
    return kInfeasible;
  return time_at(microbatch, static_cast<std::size_t>(degree_index_[static_cast<std::size_t>(degree)]));
}

double PerBatchCpPlanner::Grouping::slowest_s() const {
  double slowest = 0;
  for (double t : time_s) slowest = std::max(slowest, t);
  return slowest;
}

double PerBatchCpPlanner::lower_bound_s() const {
  double work = 0, longest = 0;
  for (std::size_t m = 0; m < microbatches_; ++m) {
    double min_time = kInfeasible;
    for (std::size_t k = 0; k < degrees_.size(); ++k) min_time = std::min(min_time, time_at(m, k));
    work += least_work_[m];
    longest = std::max(longest, min_time);
  }
  return std::max(work / gpus_, longest);
}

void PerBatchCpPlanner::sort_by_least_work() {
  order_.resize(microbatches_);
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](std::size_t a, std::size_t b) { return least_work_[a] > least_work_[b]; });
}

// Longest processing time over gpus / degree equal groups (Graham 1969).
void PerBatchCpPlanner::place_static(int degree, Grouping& out) {
  const auto k = static_cast<std::size_t>(degree_index_[static_cast<std::size_t>(degree)]);
  const std::size_t groups = static_cast<std::size_t>(gpus_ / degree);
  out.degree.assign(groups, degree);
  out.time_s.assign(groups, 0.0);
  out.first_gpu.resize(groups);
  for (std::size_t g = 0; g < groups; ++g) out.first_gpu[g] = static_cast<int>(g) * degree;
  out.group_of.resize(microbatches_);
  order_.resize(microbatches_);
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(),
                   [&](std::size_t a, std::size_t b) { return time_at(a, k) > time_at(b, k); });
  for (std::size_t m : order_) {
    const auto least =
        static_cast<std::size_t>(std::min_element(out.time_s.begin(), out.time_s.end()) - out.time_s.begin());
    out.group_of[m] = least;
    out.time_s[least] += time_at(m, k);
  }
}

void PerBatchCpPlanner::materialize(const Grouping& grouping, int static_degree, StepDecision& out) const {
  out.groups.resize(grouping.degree.size());
  for (std::size_t g = 0; g < out.groups.size(); ++g) {
    out.groups[g].degree = grouping.degree[g];
    out.groups[g].first_gpu = grouping.first_gpu[g];
    out.groups[g].time_s = grouping.time_s[g];
    out.groups[g].microbatches.clear();
  }
  for (std::size_t m = 0; m < microbatches_; ++m) out.groups[grouping.group_of[m]].microbatches.push_back(m);
  out.step_time_s = grouping.slowest_s();
  out.static_degree = static_degree;
  out.lower_bound_s = lower_bound_s();
}

const StepDecision& PerBatchCpPlanner::static_decision(int degree) {
  if (degree < 1 || degree > gpus_ || gpus_ % degree != 0 || degree_index_[static_cast<std::size_t>(degree)] < 0)
    throw Error("cp", fmt::format("got {}", degree), "a degree dividing the GPUs, within a node or whole nodes");
  place_static(degree, static_grouping_);
  materialize(static_grouping_, degree, decision_);
  return decision_;
}

bool PerBatchCpPlanner::lay_out(Grouping& out) {
  group_order_.resize(out.degree.size());
  std::iota(group_order_.begin(), group_order_.end(), std::size_t{0});
  std::stable_sort(group_order_.begin(), group_order_.end(),
                   [&](std::size_t a, std::size_t b) { return out.degree[a] > out.degree[b]; });
  out.first_gpu.resize(out.degree.size());
  std::fill(node_free_.begin(), node_free_.end(), node_gpus_);
  for (std::size_t g : group_order_) {
    const int degree = out.degree[g];
    if (degree >= node_gpus_) {  // whole nodes, consecutive
      const int nodes = degree / node_gpus_;
      int run = 0, start = -1;
      for (int n = 0; n < static_cast<int>(node_free_.size()) && start < 0; ++n) {
        run = node_free_[static_cast<std::size_t>(n)] == node_gpus_ ? run + 1 : 0;
        if (run == nodes) start = n - nodes + 1;
      }
      if (start < 0) return false;
      for (int n = start; n < start + nodes; ++n) node_free_[static_cast<std::size_t>(n)] = 0;
      out.first_gpu[g] = start * node_gpus_;
      continue;
    }
    const auto node = std::find_if(node_free_.begin(), node_free_.end(), [&](int free) { return free >= degree; });
    if (node == node_free_.end()) return false;
    out.first_gpu[g] = static_cast<int>(node - node_free_.begin()) * node_gpus_ + (node_gpus_ - *node);
    *node -= degree;
  }
  return true;
}

bool PerBatchCpPlanner::build_groups(double target_s, Grouping& out) {
  const std::size_t D = degrees_.size();
  out.clear();
  out.group_of.resize(microbatches_);
  const double limit = target_s * (1.0 + kTargetSlack);
  int used_gpus = 0;
  for (std::size_t m : order_) {  // sort_by_least_work
    // The open group of the smallest degree (then the fullest) that still finishes by the target.
    std::size_t host = out.degree.size();
    for (std::size_t g = 0; g < out.degree.size(); ++g) {
      if (out.time_s[g] + microbatch_time_s(m, out.degree[g]) > limit) continue;
      if (host == out.degree.size() || out.degree[g] < out.degree[host] ||
          (out.degree[g] == out.degree[host] && out.time_s[g] > out.time_s[host]))
        host = g;
    }
    if (host == out.degree.size()) {  // a new group of the smallest degree that runs it in time
      std::size_t k = 0;
      while (k < D && time_at(m, k) > limit) ++k;
      if (k == D || used_gpus + degrees_[k] > gpus_) return false;
      used_gpus += degrees_[k];
      out.degree.push_back(degrees_[k]);
      out.time_s.push_back(0.0);
    }
    out.group_of[m] = host;
    out.time_s[host] += microbatch_time_s(m, out.degree[host]);
  }
  return lay_out(out);
}

// With the groups' degrees fixed, longest first to the group that finishes it earliest (list
// scheduling on unrelated machines); spare GPUs first become 1-GPU groups where the layout allows.
void PerBatchCpPlanner::reschedule_earliest_finish(Grouping& out) {
  int used = std::accumulate(out.degree.begin(), out.degree.end(), 0);
  for (; used < gpus_; ++used) {
    out.degree.push_back(1);
    if (!lay_out(out)) {
      out.degree.pop_back();
      break;
    }
  }
  lay_out(out);  // the layout of the groups kept
  std::fill(out.time_s.begin(), out.time_s.end(), 0.0);
  out.time_s.resize(out.degree.size(), 0.0);
  for (std::size_t m : order_) {
    std::size_t best = 0;
    double best_finish = kInfeasible;
    for (std::size_t g = 0; g < out.degree.size(); ++g) {
      const double finish = out.time_s[g] + microbatch_time_s(m, out.degree[g]);
      if (finish < best_finish) {
        best_finish = finish;
        best = g;
      }
    }
    out.group_of[m] = best;
    out.time_s[best] = best_finish;
  }
}

const StepDecision& PerBatchCpPlanner::per_batch_decision() {
  int best_static = 0;
  double best_s = kInfeasible;
  for (int c : static_degrees_) {
    place_static(c, static_grouping_);
    const double t = static_grouping_.slowest_s();
    if (t < best_s) {
      best_s = t;
      best_static = c;
      best_grouping_ = static_grouping_;
    }
  }
  sort_by_least_work();
  double lo = lower_bound_s(), hi = best_s;
  if (!std::isfinite(hi)) {  // no static degree fits: every micro-batch in turn on all GPUs bounds it
    hi = 0;
    for (std::size_t m = 0; m < microbatches_; ++m) hi += time_at(m, degrees_.size() - 1);
  }
  bool found = false;
  if (std::isfinite(hi) && microbatches_ > 0) {
    for (int i = 0; i < kBisectionSteps; ++i) {
      const double mid = 0.5 * (lo + hi);
      if (build_groups(mid, trial_)) {
        hi = mid;
        found = true;
        candidate_ = trial_;
      } else {
        lo = mid;
      }
    }
    if (!found && build_groups(hi, trial_)) {
      found = true;
      candidate_ = trial_;
    }
  }
  if (found) {
    trial_ = candidate_;
    reschedule_earliest_finish(trial_);
    const Grouping& better = trial_.slowest_s() < candidate_.slowest_s() ? trial_ : candidate_;
    if (better.slowest_s() < best_s) {
      best_s = better.slowest_s();
      best_static = 0;
      best_grouping_ = better;
    }
  }
  if (!std::isfinite(best_s)) {
    decision_.groups.clear();
    decision_.step_time_s = kInfeasible;
    decision_.static_degree = 0;
    decision_.lower_bound_s = lower_bound_s();
    return decision_;
  }
  materialize(best_grouping_, best_static, decision_);
  return decision_;
}

std::vector<std::string> decision_violations(const StepDecision& decision, const PerBatchCpPlanner& planner,
                                             std::size_t microbatches) {
  std::vector<std::string> out;
  std::vector<int> seen(microbatches, 0);
  std::vector<int> gpu_owner(static_cast<std::size_t>(planner.gpus()), -1);
  const std::vector<int>& degrees = planner.degrees();
  const int node = planner.node_gpus();
  double slowest = 0;
  for (std::size_t g = 0; g < decision.groups.size(); ++g) {
    const CpGroup& group = decision.groups[g];
    if (std::find(degrees.begin(), degrees.end(), group.degree) == degrees.end())
      out.push_back(fmt::format("group {} has degree {}, not allowed", g, group.degree));
    if (group.first_gpu < 0 || group.first_gpu + group.degree > planner.gpus()) {
      out.push_back(fmt::format("group {} holds GPUs outside [0, {})", g, planner.gpus()));
      continue;
    }
    const bool within_node = group.first_gpu / node == (group.first_gpu + group.degree - 1) / node;
    const bool whole_nodes = group.first_gpu % node == 0 && group.degree % node == 0;
    if (!within_node && !whole_nodes) out.push_back(fmt::format("group {} straddles a node boundary", g));
    for (int gpu = group.first_gpu; gpu < group.first_gpu + group.degree; ++gpu) {
      if (gpu_owner[static_cast<std::size_t>(gpu)] >= 0) out.push_back(fmt::format("GPU {} is in two groups", gpu));
      gpu_owner[static_cast<std::size_t>(gpu)] = static_cast<int>(g);
    }
    double sum = 0;
    for (std::size_t m : group.microbatches) {
      if (m >= microbatches) {
        out.push_back(fmt::format("group {} holds micro-batch {} of {}", g, m, microbatches));
        continue;
      }
      ++seen[m];
      const double t = planner.microbatch_time_s(m, group.degree);
      if (!std::isfinite(t)) out.push_back(fmt::format("micro-batch {} does not fit degree {}", m, group.degree));
      sum += t;
    }
    if (std::fabs(sum - group.time_s) > 1e-9 * std::max(1.0, sum))
      out.push_back(fmt::format("group {} time {} != its micro-batches' {}", g, group.time_s, sum));
    slowest = std::max(slowest, group.time_s);
  }
  for (std::size_t m = 0; m < microbatches; ++m)
    if (seen[m] != 1) out.push_back(fmt::format("micro-batch {} placed {} times", m, seen[m]));
  if (std::fabs(slowest - decision.step_time_s) > 1e-9 * std::max(1.0, slowest))
    out.push_back(fmt::format("step time {} != slowest group {}", decision.step_time_s, slowest));
  return out;
}

}  // namespace tessera
