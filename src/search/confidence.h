// How far to trust an estimate: whether a (model, cluster, plan, workload) lies inside a class
// of published runs that `tessera validate` measured (with that class's error), and what it
// extrapolates from. The class table is a plain value (io/accuracy_classes.h loads the built-in
// data/accuracy_classes.json, written from `tessera validate` by scripts/accuracy_classes.py);
// this layer reads no files. Every extrapolation is decided by the table's rows (which GPU
// families, precisions, frameworks, sizes and group spans were validated), not by a list of
// GPU names, so a GPU added later without validation rows is reported as assumed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// One validated class of published runs (io/validation.h accuracy_class) and the range its
// rows cover.
struct AccuracyClass {
  std::string name;         // "dense-h100"
  std::string description;  // "dense, Hopper 16-bit"
  bool moe = false;
  std::vector<std::string> gpu_families;  // io/validation.h gemm_family (or the GPU key)
  std::vector<Precision> precisions;
  std::vector<TrainingFramework> frameworks;
  std::int64_t runs = 0;
  double median_error_pct = 0;  // |predicted - measured| / measured over the class's rows
  double p90_error_pct = 0;
  double max_error_pct = 0;
  std::int64_t max_gpus = 0;
  std::int64_t max_seq = 0;
  // The most nodes one expert-parallel (etp x ep) or context-parallel (tp x cp) group spanned.
  std::int64_t max_ep_nodes = 0;
  std::int64_t max_cp_nodes = 0;
  // Whether any run overlapped TP communication with GEMMs (--tp-comm-overlap).
  bool tp_comm_overlap = false;
};

struct Confidence {
  // Inside a validated class of at least 5 runs and extrapolating from nothing.
  bool validated = false;
  // The class the estimate belongs to (or the nearest one: same dense / MoE kind); empty if none.
  std::string class_name;
  std::string class_description;
  std::int64_t runs = 0;
  double median_error_pct = 0;
  double p90_error_pct = 0;
  // What lies outside the validated runs, one phrase each ("2048 GPUs (validated up to 1024)").
  std::vector<std::string> extrapolations;
};

// Nodes spanned by one group of `group_gpus` consecutive ranks (groups are laid out tp
// innermost, then cp, dp; expert groups etp innermost, then ep: Megatron-Core parallel_state).
std::int64_t nodes_spanned(std::int64_t group_gpus, const Cluster& cluster);
std::int64_t expert_group_nodes(const Plan& plan, const Cluster& cluster);
std::int64_t context_group_nodes(const Plan& plan, const Cluster& cluster);

// `gpu_family`: the family whose efficiencies the cost model shares (io/accuracy_classes.h
// confidence_gpu_family). The class is the first in `classes` with the model's kind (dense /
// MoE), the GPU family and the plan's precision; else the nearest of the same kind.
Confidence assess_confidence(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                             const Workload& workload, const std::string& gpu_family,
                             const std::vector<AccuracyClass>& classes);

}  // namespace tessera
