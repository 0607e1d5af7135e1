#include "io/accuracy_classes.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "core/error.h"
#include "io/builtin_data.h"
#include "io/json_fields.h"

namespace tessera {

namespace {

constexpr const char* kFile = "accuracy_classes.json";

const char* framework_key(TrainingFramework f) { return to_string(f); }

TrainingFramework parse_framework_key(const std::string& s) {
  try {
    return parse_training_framework(s);
  } catch (const Error& e) {
    throw Error("accuracy_classes.frameworks", "unknown framework '" + s + "'", e.allowed());
  }
}

template <typename T>
void add_unique(std::vector<T>& values, const T& v) {
  if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
}

}  // namespace

std::string confidence_gpu_family(const GpuSpec& gpu) {
  // The catalog's (or a GPU file's) family first: a custom GPU is "custom" unless its file
  // asserts a family; the key's family for GPUs built without one.
  if (!gpu.family.empty()) return gpu.family;
  const std::string family = gemm_family(gpu.key);
  return family.empty() ? gpu.key : family;
}

std::vector<AccuracyClass> accuracy_classes_from(const ValidationReport& report) {
  std::vector<AccuracyClass> out;
  for (const ClassSummary& s : summarize_by_class(report)) {
    AccuracyClass k;
    k.name = s.name;
    k.runs = static_cast<std::int64_t>(s.n);
    k.median_error_pct = s.median_abs_error_pct;
    k.p90_error_pct = s.p90_abs_error_pct;
    k.max_error_pct = s.max_abs_error_pct;
    for (const ValidationResult& r : report.rows) {
      if (accuracy_class(r) != s.name) continue;
      k.moe = r.model.is_moe();
      add_unique(k.gpu_families, confidence_gpu_family(r.cluster.gpu));
      add_unique(k.precisions, r.plan_value.precision);
      add_unique(k.frameworks, r.plan_value.framework);
      k.max_gpus = std::max(k.max_gpus, r.cluster.gpus());
      k.max_seq = std::max(k.max_seq, r.workload.seq_len);
      if (r.plan_value.ep > 1) k.max_ep_nodes = std::max(k.max_ep_nodes, expert_group_nodes(r.plan_value, r.cluster));
      if (r.plan_value.cp > 1) k.max_cp_nodes = std::max(k.max_cp_nodes, context_group_nodes(r.plan_value, r.cluster));
      k.tp_comm_overlap = k.tp_comm_overlap || r.plan_value.overlap_tp_comm;
    }
    std::sort(k.gpu_families.begin(), k.gpu_families.end());
    std::sort(k.precisions.begin(), k.precisions.end());
    std::sort(k.frameworks.begin(), k.frameworks.end());
    out.push_back(std::move(k));
  }
  return out;
}

nlohmann::json accuracy_classes_to_json(const std::vector<AccuracyClass>& classes) {
  nlohmann::json out = nlohmann::json::array();
  for (const AccuracyClass& k : classes) {
    nlohmann::json precisions = nlohmann::json::array(), frameworks = nlohmann::json::array();
    for (Precision p : k.precisions) precisions.push_back(to_string(p));
    for (TrainingFramework f : k.frameworks) frameworks.push_back(framework_key(f));
    out.push_back({{"class", k.name},
                   {"description", k.description},
                   {"moe", k.moe},
                   {"gpu_families", k.gpu_families},
                   {"precisions", precisions},
                   {"frameworks", frameworks},
                   {"runs", k.runs},
                   {"median_error_pct", k.median_error_pct},
                   {"p90_error_pct", k.p90_error_pct},
                   {"max_error_pct", k.max_error_pct},
                   {"max_gpus", k.max_gpus},
                   {"max_seq", k.max_seq},
                   {"max_ep_nodes", k.max_ep_nodes},
                   {"max_cp_nodes", k.max_cp_nodes},
                   {"tp_comm_overlap", k.tp_comm_overlap}});
  }
  return {{"classes", out}};
}

std::vector<AccuracyClass> accuracy_classes_from_json(const nlohmann::json& j) {
  std::vector<AccuracyClass> out;
  try {
    for (const auto& c : j.at("classes")) {
      using json_fields::get_int;
      using json_fields::get_number;
      const std::string path = "accuracy_classes.classes[" + std::to_string(out.size()) + "]";
      AccuracyClass k;
      k.name = c.at("class").get<std::string>();
      k.description = c.value("description", std::string{});
      k.moe = c.at("moe").get<bool>();
      k.gpu_families = c.at("gpu_families").get<std::vector<std::string>>();
      for (const auto& p : c.at("precisions")) k.precisions.push_back(parse_precision(p.get<std::string>()));
      for (const auto& f : c.at("frameworks")) k.frameworks.push_back(parse_framework_key(f.get<std::string>()));
      k.runs = get_int(c, "runs", path);
      k.median_error_pct = get_number(c, "median_error_pct", path);
      k.p90_error_pct = get_number(c, "p90_error_pct", path);
      k.max_error_pct = get_number(c, "max_error_pct", path);
      k.max_gpus = get_int(c, "max_gpus", path);
      k.max_seq = get_int(c, "max_seq", path);
      k.max_ep_nodes = get_int(c, "max_ep_nodes", path);
      k.max_cp_nodes = get_int(c, "max_cp_nodes", path);
      k.tp_comm_overlap = c.at("tp_comm_overlap").get<bool>();
      out.push_back(std::move(k));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error("accuracy_classes", e.what(), "data/accuracy_classes.json's format (scripts/accuracy_classes.py)");
  }
  return out;
}

const std::vector<AccuracyClass>& builtin_accuracy_classes() {
  static const std::vector<AccuracyClass> classes = [] {
    const BuiltinFile* file = find_builtin_file(kFile);
    if (file == nullptr) throw Error(kFile, "missing from the build", "data/accuracy_classes.json");
    return accuracy_classes_from_json(json_fields::parse(std::string(file->text), kFile));
  }();
  return classes;
}

Confidence estimate_confidence(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                               const Workload& workload) {
  return assess_confidence(model, cluster, plan, workload, confidence_gpu_family(cluster.gpu),
                           builtin_accuracy_classes());
}

Confidence cross_pool_confidence(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                                 const Workload& workload) {
  Confidence out;
  out.extrapolations.push_back("one pipeline across GPU types (no measured run)");
  for (std::size_t g = 0; g < plan.segments.size(); ++g) {
    const PipelineSegment& seg = plan.segments[g];
    const Cluster& pool = cluster.pools[seg.pool];
    Plan local = segment_plan(plan, seg);
    local.pp = seg.stages;  // the pool's own view: its stages, its GPUs
    const Confidence c = estimate_confidence(model, pool, local, workload);
    const auto join = [](std::string& into, const std::string& part) {
      if (into.find(part) == std::string::npos) into += (into.empty() ? "" : " + ") + part;
    };
    join(out.class_name, c.class_name);
    join(out.class_description, c.class_description);
    out.runs = g == 0 ? c.runs : std::min(out.runs, c.runs);
    out.median_error_pct = std::max(out.median_error_pct, c.median_error_pct);
    out.p90_error_pct = std::max(out.p90_error_pct, c.p90_error_pct);
    for (const auto& x : c.extrapolations)
      out.extrapolations.push_back("pool " + std::to_string(seg.pool) + " (" + pool.gpu.key + "): " + x);
  }
  return out;
}

nlohmann::json confidence_to_json(const Confidence& c) {
  return {{"validated", c.validated},
          {"class", c.class_name},
          {"description", c.class_description},
          {"runs", c.runs},
          {"median_error_pct", c.median_error_pct},
          {"p90_error_pct", c.p90_error_pct},
          {"extrapolations", c.extrapolations}};
}

std::string confidence_text(const Confidence& c) {
  const std::string measured =
      c.class_name.empty() ? std::string("no validated class")
                           : fmt::format("{}: median {:.1f}%, p90 {:.1f}% on {} runs",
                                         c.class_description.empty() ? c.class_name : c.class_description,
                                         c.median_error_pct, c.p90_error_pct, c.runs);
  if (c.validated) return "validated: " + measured;
  std::string what;
  for (const std::string& x : c.extrapolations) what += (what.empty() ? "" : "; ") + x;
  return fmt::format("extrapolates: {} (nearest validated class {})", what, measured);
}

}  // namespace tessera
