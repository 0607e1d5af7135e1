// Per-batch context parallelism (DHP, 2026: parallel degrees and groups re-chosen for every batch,
// not restricted to powers of two): one step's micro-batches (packed sequences) run on the plan's
// G GPUs of a stage, regrouped for this step into cp groups of possibly different degrees (e.g. one
// group of 6 for a long video and two of 1 for captions). A group runs its micro-batches one after
// another; the step ends with the data-parallel gradient sync, so the step takes as long as the
// slowest group. Micro-batch times come from balance/cp_microbatch_cost.h.
//
// Degrees: c <= gpus_per_node (a group inside one node, NVLink) or a multiple of it (whole nodes);
// any such c, not only divisors or powers of two, the micro-batch padded to a multiple of 2c
// (cp_microbatch_cost.h). Groups are laid out on nodes first fit decreasing, never straddling.
// The static plan uses one degree c dividing G whose G / c groups (dp = G / c, Megatron's
// contiguous cp ranks) straddle no node: c divides the node size or is a multiple of it;
// micro-batches placed by longest processing time.
//
// The per-batch decision takes the fastest of (a) every feasible static grouping and (b) a
// heterogeneous grouping: the smallest makespan T (bisection) for which a greedy builds groups
// that fit the GPUs -- each micro-batch, longest work first, joins the open group of the smallest
// degree that still finishes by T, or opens a group of the smallest degree that runs it within T --
// then re-placed by earliest finish time on those groups with spare GPUs as extra 1-GPU groups.
// Since (a) is in the choice set, no step is slower than the static plan at the same degree.
//
// Lower bound of any grouping (disjoint groups, each micro-batch on one group for t(m, c) at c
// GPUs): max(sum_m min_c c t(m, c) / G, max_m min_c t(m, c)).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "balance/cp_microbatch_cost.h"

namespace tessera {

// One step's micro-batches: micro-batch i holds documents[offsets[i] .. offsets[i + 1]).
struct StepBatch {
  std::vector<std::int64_t> documents;
  std::vector<std::size_t> offsets{0};

  std::size_t size() const { return offsets.size() - 1; }
  std::span<const std::int64_t> microbatch(std::size_t i) const {
    return {documents.data() + offsets[i], offsets[i + 1] - offsets[i]};
  }
  std::int64_t tokens(std::size_t i) const;
  void add(std::span<const std::int64_t> microbatch_documents);
  void clear();
};

struct CpGroup {
  int degree = 1;
  int first_gpu = 0;  // the group holds GPUs [first_gpu, first_gpu + degree)
  std::vector<std::size_t> microbatches;
  double time_s = 0;  // its micro-batches, one after another
};

struct StepDecision {
  std::vector<CpGroup> groups;
  double step_time_s = kInfeasible;  // slowest group (without the gradient sync, the same for all)
  int static_degree = 0;             // > 0: a uniform grouping of this degree; 0: heterogeneous
  double lower_bound_s = 0;          // the bound above for this step

  static constexpr double kInfeasible = std::numeric_limits<double>::infinity();
};

// Degrees a group may take on `gpus` GPUs in nodes of `gpus_per_node` (see above), ascending.
std::vector<int> allowed_cp_degrees(int gpus, int gpus_per_node);
// Of those, the ones a static plan may use (dividing gpus, groups within nodes or whole nodes).
std::vector<int> static_cp_degrees(int gpus, int gpus_per_node);

class PerBatchCpPlanner {
 public:
  // Throws Error("gpus", ...) unless 1 <= gpus <= kMaxPerBatchGpus and gpus is a multiple of the
  // node size (or below one node).
  PerBatchCpPlanner(const CpCostModel& model, int gpus);

  int gpus() const { return gpus_; }
  const std::vector<int>& degrees() const { return degrees_; }
  const std::vector<int>& static_degrees() const { return static_degrees_; }
  int node_gpus() const { return node_gpus_; }

  // Costs the step's micro-batches at every allowed degree; the decisions below read that table.
  // Throws Error("gpus", ...) when a micro-batch does not fit the memory of all the GPUs.
  void cost_step(const StepBatch& batch);
  // The static plan at `degree` (one of static_degrees()); step_time_s is infinite when a
  // micro-batch does not fit its memory at that degree.
  const StepDecision& static_decision(int degree);
  // The per-batch choice (the fastest of every static grouping and the heterogeneous one). Both
  // decisions return the planner's one decision, valid until the next call.
  const StepDecision& per_batch_decision();
  // t(m, c) of the last cost_step; infinite below the memory's minimum degree.
  double microbatch_time_s(std::size_t microbatch, int degree) const;

 private:
  // A grouping under construction, in flat arrays reused from step to step (no allocation once
  // grown): group g has degree[g], time_s[g], first_gpu[g]; micro-batch m runs on group_of[m].
  struct Grouping {
    std::vector<int> degree, first_gpu;
    std::vector<double> time_s;
    std::vector<std::size_t> group_of;
    void clear() {
      degree.clear();
      first_gpu.clear();
      time_s.clear();
    }
    double slowest_s() const;
  };

  double time_at(std::size_t m, std::size_t k) const { return time_[m * degrees_.size() + k]; }
  void place_static(int degree, Grouping& out);
  bool build_groups(double target_s, Grouping& out);  // the greedy at makespan target_s
  void reschedule_earliest_finish(Grouping& out);
  bool lay_out(Grouping& out);  // sets first_gpu; false when the groups do not fit the nodes
  void sort_by_least_work();    // order_: micro-batches, most GPU-seconds first
  void materialize(const Grouping& grouping, int static_degree, StepDecision& out) const;
  double lower_bound_s() const;

  CpCostModel model_;
  int gpus_ = 0;
  int node_gpus_ = 0;
  std::vector<int> degrees_, static_degrees_;
  std::vector<int> degree_index_;  // degree -> index in degrees_, -1 if not allowed
  // Per step: time_[m * D + k], each micro-batch's least GPU-seconds, and the greedy's scratch.
  std::size_t microbatches_ = 0;
  std::vector<double> time_, least_work_;
  std::vector<std::size_t> order_, group_order_;
  std::vector<int> node_free_;
  CpCostScratch scratch_;
  Grouping static_grouping_, trial_, candidate_, best_grouping_;
  StepDecision decision_;
};

inline constexpr int kMaxPerBatchGpus = 4096;

// Empty when `decision` places each of `microbatches` micro-batches in exactly one group, every
// group has an allowed degree at least the memory's minimum of its micro-batches, groups hold
// disjoint GPUs inside [0, gpus) without straddling nodes, and times add up; else what is wrong.
std::vector<std::string> decision_violations(const StepDecision& decision, const PerBatchCpPlanner& planner,
                                             std::size_t microbatches);

}  // namespace tessera
