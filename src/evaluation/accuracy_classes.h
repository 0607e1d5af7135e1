// The validated accuracy classes (search/confidence.h AccuracyClass) and the measured memory
// errors per framework (MemoryAccuracy) as data: computed from `tessera validate` over the
// validation files (in sample), their leave-one-source-out check (the figures a confidence
// prints) and their measured peaks, read from and written to JSON, and the built-in table
// data/accuracy_classes.json (written by scripts/accuracy_classes.py from `tessera validate
// --accuracy-classes`; tests/evaluation/accuracy_classes_test.cpp checks it equals what validation
// computes now). Also the confidence of one estimate as text and JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluation/leave_one_source_out.h"
#include "evaluation/memory_check.h"
#include "evaluation/validation.h"
#include "hardware/mixed_cluster.h"
#include "plan/cross_pool_plan.h"
#include "search/confidence.h"

namespace tessera {

// The family a GPU's efficiencies are fitted for (evaluation/validation.h gemm_family), or its own key
// when it belongs to none, so a GPU without validation rows never borrows another's.
std::string confidence_gpu_family(const GpuSpec& gpu);

struct AccuracyTable {
  std::vector<AccuracyClass> classes;
  std::vector<MemoryAccuracy> memory;
};

// One class per class present in the report (kAccuracyClassOrder), with the range its rows cover,
// their in-sample errors, and the held-out errors of `held_out` (the same rows); memory accuracy
// per framework from `memory` (the report's measured peaks), when given.
AccuracyTable accuracy_table_from(const ValidationReport& report, const LeaveOneSourceOut& held_out,
                                  const MemoryCheck* memory = nullptr);

nlohmann::json accuracy_table_to_json(const AccuracyTable& table);
// Error("accuracy_classes", ...) on a malformed document.
AccuracyTable accuracy_table_from_json(const nlohmann::json& j);
// data/accuracy_classes.json, parsed once.
const AccuracyTable& builtin_accuracy_table();
const std::vector<AccuracyClass>& builtin_accuracy_classes();

// assess_confidence against the built-in table; with the estimate, its envelope and memory too.
Confidence estimate_confidence(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                               const Workload& workload, const Estimate* estimate = nullptr);

// A pipeline across pools (plan/cross_pool_plan.h): never validated, since no published run puts
// one pipeline on several GPU types; each segment's stages are assessed on their own pool (as a
// pipeline of that segment's stages) and the classes combined: the classes and descriptions
// joined with " + ", the fewest runs, the largest errors, and each segment's extrapolations named
// by its pool after "one pipeline across GPU types".
Confidence cross_pool_confidence(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                                 const Workload& workload);

// {"validated", "class", "description", "runs", "sources", "median_error_pct", "p90_error_pct",
//  "median_time_error_pct", "out_of_sample", "extrapolations", "memory": {...}}
nlohmann::json confidence_to_json(const Confidence& c);
// "validated: dense 16-bit, Hopper: median 3.1%, p90 13.1% out of sample, runs took 2.6% longer
// than predicted at the median (10 runs, 2 sources)" or
// "extrapolates: 2048 GPUs (validated up to 1024) (nearest validated class ...)"; a class of one
// source says so instead of an error figure. A second line for memory when its framework's
// peaks were measured, or when the margin is inside that error.
std::string confidence_text(const Confidence& c);

}  // namespace tessera
