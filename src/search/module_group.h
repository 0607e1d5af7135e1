// Module groups of a disaggregated multimodal plan -- an encoder with its projector (one group per
// modality), or the generator -- and what a group costs per micro-batch slot of the backbone.
//
// At slot j the group serves micro-batch j of every backbone replica, its items spread over the
// group's dp ranks whole (longest-processing-time first keeps the busiest rank within one item of
// the mean). A member's time at slot j is its pass over the mean slot share, scaled by the busiest
// rank's forward FLOPs against the mean's: max(w_j / dp, w(largest item)) / (w_mean / dp).
#pragma once

#include <cstdint>
#include <vector>

#include "cost/module_cost.h"
#include "hardware/cluster.h"
#include "model/multimodal_spec.h"
#include "plan/data_mix.h"

namespace tessera {

struct ModuleGroup {
  std::vector<std::size_t> members;  // indices into model.modules, run one after another per slot
  bool before_backbone = true;       // encoders feed the backbone; the generator follows it
  std::int64_t tp_limit = 1;         // largest tensor parallelism tried (within a node)
};

std::vector<ModuleGroup> module_groups(const MultimodalSpec& model, std::int64_t gpus_per_node);

// Per-slot loads of every module when the backbone runs `dp` replicas with micro-batches of `mb`
// sequences: replica r takes the r-th contiguous block of the global batch (Megatron's sampler),
// micro-batch j of it the j-th run of mb sequences; slot j gathers micro-batch j of every replica.
struct SlotLoads {
  std::int64_t slots = 0;
  std::vector<std::vector<ModuleLoad>> per_module;  // [module][slot], summed over replicas
  std::vector<std::vector<double>> weight;          // [module][slot] forward FLOPs
  std::vector<ModuleLoad> mean;                     // [module] mean slot load
  std::vector<double> mean_weight;                  // [module] mean slot forward FLOPs
  std::vector<ModuleLoad> heaviest;                 // [module] the heaviest slot's load
};
SlotLoads slot_loads(const MultimodalSpec& model, const std::vector<PackedSequence>& sequences, std::int64_t dp,
                     std::int64_t mb);

ModuleLoad scaled(const ModuleLoad& load, double factor);  // keeps largest_item_tokens
// Forward FLOPs of a module's load (backbone: its tokens), the weight slot times scale with.
double load_weight(const ModuleSpec& module, const ModuleLoad& load);
bool group_is_idle(const ModuleGroup& group, const SlotLoads& loads);

struct GroupSlotTimes {
  std::vector<double> fwd_s, bwd_s;  // per slot, on the group's busiest rank
};
GroupSlotTimes group_slot_times(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                                const SlotLoads& loads, const ModulePlan& plan);

// One way to run a group: its plan (plan.gpus() GPUs; 0 for a group with nothing to do) and
// what the lower bound of a split needs.
struct GroupOption {
  ModulePlan plan;
  double busy_s = 0;       // sum over slots of forward + backward
  double first_fwd_s = 0;  // slot 0's forward
  double last_bwd_s = 0;   // the last slot's backward
  double sync_s = 0;       // gradient reduce-scatter + parameter all-gather, once per step
  double peak_memory_bytes = 0;
  std::int64_t gpus() const { return plan.gpus(); }
};

GroupOption group_option(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                         const SlotLoads& loads, const ModulePlan& plan, std::int64_t inflight_slots);

// The options on exactly `gpus` GPUs (tp a power of two dividing every member's heads, with or
// without full recompute) that fit in memory. With `drop_dominated`, an option no faster than
// another in any slot, forward or backward, nor in its sync, is left out: the pipeline's makespan
// never decreases when a duration grows, so it cannot win.
std::vector<GroupOption> group_options(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                                       const SlotLoads& loads, std::int64_t gpus, std::int64_t inflight_slots,
                                       double memory_limit_bytes, bool drop_dominated);

}  // namespace tessera
