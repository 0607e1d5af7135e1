// How far to trust an estimate: whether a (model, cluster, plan, workload) lies inside a class
// of published runs that `tessera validate` measured (with that class's error), and what it
// extrapolates from. The class table is a plain value (evaluation/accuracy_classes.h loads the built-in
// data/accuracy_classes.json, written from `tessera validate` by scripts/accuracy_classes.py);
// this layer reads no files. Every extrapolation is decided by the table's rows (which GPU
// families, precisions, frameworks, sizes and group spans were validated), not by a list of
// GPU names, so a GPU added later without validation rows is reported as assumed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// The validated runs of one model shape in a class, and how far off they were on average.
struct ModelBias {
  std::string shape;  // model_shape_key
  std::string name;   // a published name of the model
  std::int64_t runs = 0;
  double mean_time_error_pct = 0;  // held out, in iteration time: negative = predicted faster than it ran
};

// "L61-h7168-a128-E256": layers, hidden, heads, routed experts (0 for dense).
std::string model_shape_key(const ModelSpec& model);

// One validated class of published runs (evaluation/validation.h accuracy_class) and the range its
// rows cover. Its error figures are out of sample: each source's rows predicted by constants
// refitted without that source (evaluation/leave_one_source_out.h); the in-sample ones are kept beside.
struct AccuracyClass {
  std::string name;         // "dense-h100"
  std::string description;  // "dense 16-bit, Hopper"
  bool moe = false;
  std::vector<std::string> gpu_families;  // evaluation/validation.h gemm_family (or the GPU key)
  std::vector<Precision> precisions;
  std::vector<TrainingFramework> frameworks;
  std::int64_t runs = 0;
  std::int64_t sources = 0;     // publishers of the class's rows
  double median_error_pct = 0;  // leave-one-source-out |predicted - measured| / measured
  double p90_error_pct = 0;
  double max_error_pct = 0;
  // Out of sample too, signed, in iteration time: the median of (predicted - measured) / measured
  // over the class's rows; negative when its runs took longer than predicted.
  double median_time_error_pct = 0;
  double in_sample_median_error_pct = 0;  // the same with the constants as fitted
  double in_sample_p90_error_pct = 0;
  double max_mfu_pct = 0;         // the highest MFU any of its runs measured
  std::int64_t max_tp_nodes = 0;  // the most nodes a tensor-parallel group spanned
  std::vector<ModelBias> model_biases;
  std::int64_t max_gpus = 0;
  std::int64_t max_seq = 0;
  // The most nodes one expert-parallel (etp x ep) or context-parallel (tp x cp) group spanned.
  std::int64_t max_ep_nodes = 0;
  std::int64_t max_cp_nodes = 0;
  // Whether any run overlapped TP communication with GEMMs (--tp-comm-overlap).
  bool tp_comm_overlap = false;
};

// Peak memory against measured peaks (validate --memory) for one framework.
struct MemoryAccuracy {
  TrainingFramework framework = TrainingFramework::megatron;
  std::int64_t runs = 0;     // measured peaks
  std::int64_t sources = 0;  // publishers of those runs
  double median_error_pct = 0;
  double max_error_pct = 0;
  std::int64_t verdicts = 0, verdicts_right = 0;  // fits / does not fit, out-of-memory runs included
};

// A class needs runs from this many publishers before its error can be measured out of sample.
inline constexpr std::int64_t kMinClassSources = 2;
// The issue 29 envelope: a collective the estimate assumes hidden beyond this fraction has no
// validated run behind it (the published runs that overlap EP or ZeRO-3 traffic still show some).
inline constexpr double kMaxValidatedHiddenFraction = 0.9;

struct Confidence {
  // Inside a validated class of at least 5 runs from 2 sources and extrapolating from nothing.
  bool validated = false;
  // The class the estimate belongs to (or the nearest one: same dense / MoE kind); empty if none.
  std::string class_name;
  std::string class_description;
  std::int64_t runs = 0;
  std::int64_t sources = 0;
  double median_error_pct = 0;  // the class's leave-one-source-out error
  double p90_error_pct = 0;
  double median_time_error_pct = 0;  // its signed median in iteration time (AccuracyClass)
  // What lies outside the validated runs, one phrase each ("2048 GPUs (validated up to 1024)").
  std::vector<std::string> extrapolations;
  // Memory: the measured peak error of the plan's framework, and the margin to the usable memory.
  bool memory_measured = false;
  std::int64_t memory_runs = 0, memory_sources = 0;
  double memory_median_error_pct = 0, memory_max_error_pct = 0;
  double memory_margin_pct = 0;             // (usable - predicted peak) / usable
  double memory_margin_gib = 0;             // usable - predicted peak
  bool memory_margin_inside_error = false;  // |margin| within the measured max error: the verdict may flip
  bool too_few_sources() const { return !class_name.empty() && sources < kMinClassSources; }
};

// Nodes spanned by one group of `group_gpus` consecutive ranks (groups are laid out tp
// innermost, then cp, dp; expert groups etp innermost, then ep: Megatron-Core parallel_state).
std::int64_t nodes_spanned(std::int64_t group_gpus, const Cluster& cluster);
std::int64_t expert_group_nodes(const Plan& plan, const Cluster& cluster);
std::int64_t context_group_nodes(const Plan& plan, const Cluster& cluster);

// `gpu_family`: the family whose efficiencies the cost model shares (evaluation/accuracy_classes.h
// confidence_gpu_family). The class is the first in `classes` with the model's kind (dense /
// MoE), the GPU family and the plan's precision; else the nearest of the same kind.
// With the estimate, its envelope too: MFU above every validated run of the class, EP or ZeRO-3
// traffic more than kMaxValidatedHiddenFraction hidden, tensor parallelism across more nodes than
// validated, a model whose own validated runs are biased beyond the class median; and its memory
// against `memory` (measured peaks per framework).
Confidence assess_confidence(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                             const Workload& workload, const std::string& gpu_family,
                             const std::vector<AccuracyClass>& classes, const Estimate* estimate = nullptr,
                             const std::vector<MemoryAccuracy>& memory = {});

}  // namespace tessera
