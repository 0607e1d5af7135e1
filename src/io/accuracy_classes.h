// The validated accuracy classes (search/confidence.h AccuracyClass) as data: computed from a
// `tessera validate` report, read from and written to JSON, and the built-in table
// data/accuracy_classes.json (written by scripts/accuracy_classes.py from `tessera validate
// --json`; tests/io/accuracy_classes_test.cpp checks it equals what validation computes now).
// Also the confidence of one estimate as text and JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/validation.h"
#include "hardware/mixed_cluster.h"
#include "plan/cross_pool_plan.h"
#include "search/confidence.h"

namespace tessera {

// The family a GPU's efficiencies are fitted for (io/validation.h gemm_family), or its own key
// when it belongs to none, so a GPU without validation rows never borrows another's.
std::string confidence_gpu_family(const GpuSpec& gpu);

// One class per class present in the report (summarize_by_class order), with the range its
// rows cover. Descriptions are left empty (data/accuracy_classes.json holds them).
std::vector<AccuracyClass> accuracy_classes_from(const ValidationReport& report);

nlohmann::json accuracy_classes_to_json(const std::vector<AccuracyClass>& classes);
// Error("accuracy_classes", ...) on a malformed document.
std::vector<AccuracyClass> accuracy_classes_from_json(const nlohmann::json& j);
// data/accuracy_classes.json, parsed once.
const std::vector<AccuracyClass>& builtin_accuracy_classes();

// assess_confidence against the built-in classes.
Confidence estimate_confidence(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                               const Workload& workload);

// A pipeline across pools (plan/cross_pool_plan.h): never validated, since no published run puts
// one pipeline on several GPU types; each segment's stages are assessed on their own pool (as a
// pipeline of that segment's stages) and the classes combined: the classes and descriptions
// joined with " + ", the fewest runs, the largest errors, and each segment's extrapolations named
// by its pool after "one pipeline across GPU types".
Confidence cross_pool_confidence(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                                 const Workload& workload);

// {"validated", "class", "description", "runs", "median_error_pct", "p90_error_pct", "extrapolations"}
nlohmann::json confidence_to_json(const Confidence& c);
// "validated: dense, Hopper 16-bit: median 5.3%, p90 15.8% on 10 runs" or
// "extrapolates (2048 GPUs (validated up to 1024)); nearest class moe, Hopper: median 5.4% ...".
std::string confidence_text(const Confidence& c);

}  // namespace tessera
