#include "evaluation/accuracy_classes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/core.h>

#include "catalog/builtin_data.h"
#include "core/error.h"
#include "formats/json_fields.h"

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

namespace {

// "dense 16-bit" etc., followed by the GPU families of the class's rows.
std::string class_description(const std::string& name, const std::vector<std::string>& families) {
  std::string kind = name == "moe"              ? "MoE"
                     : name == "dense-fp8"      ? "dense FP8"
                     : name == "dense-pytorch"  ? "dense, plain PyTorch"
                     : name == "dense-other"    ? "dense"
                                                : "dense 16-bit";
  std::string joined;
  for (std::string f : families) {
    if (!f.empty()) f[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(f[0])));
    joined += (joined.empty() ? "" : "/") + f;
  }
  return kind + ", " + joined;
}

// The MFU a run measured: the model FLOPs over its measured iteration time (README §2.3's F_model,
// as the estimate counts it), against the 16-bit dense peak as every estimate's MFU (estimate.h).
double measured_mfu_pct(const ValidationResult& r) {
  if (r.measured_time_s <= 0) return 0.0;
  const double peak = r.cluster.gpu.peak_flops(false);
  return 100.0 * r.estimate.model_flops / (r.measured_time_s * static_cast<double>(r.cluster.gpus()) * peak);
}

// The range of a class's rows: GPU families, precisions, frameworks, sizes and group spans, MFU.
void add_row_range(const ValidationResult& r, AccuracyClass& k) {
  k.moe = r.model.is_moe();
  add_unique(k.gpu_families, confidence_gpu_family(r.cluster.gpu));
  add_unique(k.precisions, r.plan_value.precision);
  add_unique(k.frameworks, r.plan_value.framework);
  k.max_gpus = std::max(k.max_gpus, r.cluster.gpus());
  k.max_seq = std::max(k.max_seq, r.workload.seq_len);
  if (r.plan_value.ep > 1) k.max_ep_nodes = std::max(k.max_ep_nodes, expert_group_nodes(r.plan_value, r.cluster));
  if (r.plan_value.cp > 1) k.max_cp_nodes = std::max(k.max_cp_nodes, context_group_nodes(r.plan_value, r.cluster));
  k.max_tp_nodes = std::max(k.max_tp_nodes, nodes_spanned(r.plan_value.tp, r.cluster));
  k.tp_comm_overlap = k.tp_comm_overlap || r.plan_value.overlap_tp_comm;
  k.max_mfu_pct = std::max(k.max_mfu_pct, measured_mfu_pct(r));
}

// Per model shape in the class: its held-out runs' mean error in iteration time.
std::vector<ModelBias> model_biases(const std::string& name, const ValidationReport& report,
                                    const LeaveOneSourceOut& held_out) {
  std::vector<ModelBias> out;
  for (const HeldOutRow& h : held_out.rows) {
    if (h.accuracy_class != name) continue;
    const auto row = std::find_if(report.rows.begin(), report.rows.end(), [&](const auto& r) { return r.id == h.id; });
    if (row == report.rows.end()) continue;
    const std::string shape = model_shape_key(row->model);
    auto b = std::find_if(out.begin(), out.end(), [&](const ModelBias& x) { return x.shape == shape; });
    if (b == out.end()) b = out.insert(out.end(), ModelBias{shape, row->model_name, 0, 0.0});
    b->mean_time_error_pct += h.time_error_pct;
    ++b->runs;
  }
  for (ModelBias& b : out) b.mean_time_error_pct /= static_cast<double>(b.runs);
  return out;
}

// Measured peaks per framework of the runs: |error| median and max, verdicts right.
std::vector<MemoryAccuracy> memory_accuracy(const ValidationReport& report, const MemoryCheck& check) {
  std::vector<MemoryAccuracy> out;
  const auto run_of = [&](const std::string& id) -> const ValidationResult* {
    for (const auto* rows : {&report.rows, &report.configurations})
      for (const ValidationResult& r : *rows)
        if (r.id == id) return &r;
    return nullptr;
  };
  for (TrainingFramework f : {TrainingFramework::megatron, TrainingFramework::megatron_deepspeed,
                              TrainingFramework::deepspeed, TrainingFramework::torchtitan,
                              TrainingFramework::nemo_automodel, TrainingFramework::pytorch}) {
    MemoryAccuracy m;
    m.framework = f;
    std::vector<double> errors;
    std::set<std::string> sources;
    for (const MemoryCheckRow& row : check.rows) {
      const ValidationResult* run = run_of(row.id);
      if (run == nullptr || run->plan_value.framework != f) continue;
      ++m.verdicts;
      m.verdicts_right += row.verdict_right() ? 1 : 0;
      sources.insert(source_key(run->source));
      if (row.measured_gib >= 0) errors.push_back(std::fabs(row.error_pct));
    }
    if (m.verdicts == 0) continue;
    const ClassSummary s = abs_error_summary("memory", errors);
    m.runs = static_cast<std::int64_t>(errors.size());
    m.sources = static_cast<std::int64_t>(sources.size());
    m.median_error_pct = s.median_abs_error_pct;
    m.max_error_pct = s.max_abs_error_pct;
    out.push_back(m);
  }
  return out;
}

}  // namespace

AccuracyTable accuracy_table_from(const ValidationReport& report, const LeaveOneSourceOut& held_out,
                                  const MemoryCheck* memory) {
  AccuracyTable table;
  for (const ClassSummary& s : summarize_by_class(report)) {
    AccuracyClass k;
    k.name = s.name;
    k.runs = static_cast<std::int64_t>(s.n);
    k.in_sample_median_error_pct = s.median_abs_error_pct;
    k.in_sample_p90_error_pct = s.p90_abs_error_pct;
    for (const HeldOutClass& h : held_out.classes)
      if (h.name == s.name) {
        k.sources = static_cast<std::int64_t>(h.sources);
        k.median_error_pct = h.median_abs_error_pct;
        k.p90_error_pct = h.p90_abs_error_pct;
        k.max_error_pct = h.max_abs_error_pct;
        k.median_time_error_pct = h.median_time_error_pct;
      }
    for (const ValidationResult& r : report.rows)
      if (accuracy_class(r) == s.name) add_row_range(r, k);
    std::sort(k.gpu_families.begin(), k.gpu_families.end());
    std::sort(k.precisions.begin(), k.precisions.end());
    std::sort(k.frameworks.begin(), k.frameworks.end());
    k.description = class_description(k.name, k.gpu_families);
    k.model_biases = model_biases(k.name, report, held_out);
    table.classes.push_back(std::move(k));
  }
  if (memory != nullptr) table.memory = memory_accuracy(report, *memory);
  return table;
}

namespace {
// Figures in the file are rounded to two decimals (stable diffs; the test allows for it).
double rounded(double x) { return std::round(x * 100.0) / 100.0; }
}  // namespace

nlohmann::json accuracy_table_to_json(const AccuracyTable& table) {
  nlohmann::json out = nlohmann::json::array();
  for (const AccuracyClass& k : table.classes) {
    nlohmann::json precisions = nlohmann::json::array(), frameworks = nlohmann::json::array();
    nlohmann::json biases = nlohmann::json::array();
    for (Precision p : k.precisions) precisions.push_back(to_string(p));
    for (TrainingFramework f : k.frameworks) frameworks.push_back(framework_key(f));
    for (const ModelBias& b : k.model_biases)
      biases.push_back({{"shape", b.shape}, {"name", b.name}, {"runs", b.runs},
                        {"mean_time_error_pct", rounded(b.mean_time_error_pct)}});
    out.push_back({{"class", k.name},
                   {"description", k.description},
                   {"moe", k.moe},
                   {"gpu_families", k.gpu_families},
                   {"precisions", precisions},
                   {"frameworks", frameworks},
                   {"runs", k.runs},
                   {"sources", k.sources},
                   {"median_error_pct", rounded(k.median_error_pct)},
                   {"p90_error_pct", rounded(k.p90_error_pct)},
                   {"max_error_pct", rounded(k.max_error_pct)},
                   {"median_time_error_pct", rounded(k.median_time_error_pct)},
                   {"in_sample_median_error_pct", rounded(k.in_sample_median_error_pct)},
                   {"in_sample_p90_error_pct", rounded(k.in_sample_p90_error_pct)},
                   {"max_mfu_pct", rounded(k.max_mfu_pct)},
                   {"max_gpus", k.max_gpus},
                   {"max_seq", k.max_seq},
                   {"max_tp_nodes", k.max_tp_nodes},
                   {"max_ep_nodes", k.max_ep_nodes},
                   {"max_cp_nodes", k.max_cp_nodes},
                   {"tp_comm_overlap", k.tp_comm_overlap},
                   {"model_biases", biases}});
  }
  nlohmann::json memory = nlohmann::json::array();
  for (const MemoryAccuracy& m : table.memory)
    memory.push_back({{"framework", framework_key(m.framework)},
                      {"runs", m.runs},
                      {"sources", m.sources},
                      {"median_error_pct", rounded(m.median_error_pct)},
                      {"max_error_pct", rounded(m.max_error_pct)},
                      {"verdicts", m.verdicts},
                      {"verdicts_right", m.verdicts_right}});
  return {{"classes", out}, {"memory", memory}};
}

AccuracyTable accuracy_table_from_json(const nlohmann::json& j) {
  AccuracyTable table;
  try {
    using json_fields::get_int;
    using json_fields::get_number;
    for (const auto& c : j.at("classes")) {
      const std::string path = "accuracy_classes.classes[" + std::to_string(table.classes.size()) + "]";
      AccuracyClass k;
      k.name = c.at("class").get<std::string>();
      k.description = c.value("description", std::string{});
      k.moe = c.at("moe").get<bool>();
      k.gpu_families = c.at("gpu_families").get<std::vector<std::string>>();
      for (const auto& p : c.at("precisions")) k.precisions.push_back(parse_precision(p.get<std::string>()));
      for (const auto& f : c.at("frameworks")) k.frameworks.push_back(parse_framework_key(f.get<std::string>()));
      k.runs = get_int(c, "runs", path);
      k.sources = get_int(c, "sources", path);
      k.median_error_pct = get_number(c, "median_error_pct", path);
      k.p90_error_pct = get_number(c, "p90_error_pct", path);
      k.max_error_pct = get_number(c, "max_error_pct", path);
      k.median_time_error_pct = get_number(c, "median_time_error_pct", path);
      k.in_sample_median_error_pct = get_number(c, "in_sample_median_error_pct", path);
      k.in_sample_p90_error_pct = get_number(c, "in_sample_p90_error_pct", path);
      k.max_mfu_pct = get_number(c, "max_mfu_pct", path);
      k.max_gpus = get_int(c, "max_gpus", path);
      k.max_seq = get_int(c, "max_seq", path);
      k.max_tp_nodes = get_int(c, "max_tp_nodes", path);
      k.max_ep_nodes = get_int(c, "max_ep_nodes", path);
      k.max_cp_nodes = get_int(c, "max_cp_nodes", path);
      k.tp_comm_overlap = c.at("tp_comm_overlap").get<bool>();
      for (const auto& b : c.at("model_biases"))
        k.model_biases.push_back({b.at("shape").get<std::string>(), b.at("name").get<std::string>(),
                                  get_int(b, "runs", path), get_number(b, "mean_time_error_pct", path)});
      table.classes.push_back(std::move(k));
    }
    for (const auto& m : j.at("memory")) {
      const std::string path = "accuracy_classes.memory[" + std::to_string(table.memory.size()) + "]";
      MemoryAccuracy a;
      a.framework = parse_framework_key(m.at("framework").get<std::string>());
      a.runs = get_int(m, "runs", path);
      a.sources = get_int(m, "sources", path);
      a.median_error_pct = get_number(m, "median_error_pct", path);
      a.max_error_pct = get_number(m, "max_error_pct", path);
      a.verdicts = get_int(m, "verdicts", path);
      a.verdicts_right = get_int(m, "verdicts_right", path);
      table.memory.push_back(a);
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error("accuracy_classes", e.what(), "data/accuracy_classes.json's format (scripts/accuracy_classes.py)");
  }
  return table;
}

const AccuracyTable& builtin_accuracy_table() {
  static const AccuracyTable table = [] {
    const BuiltinFile* file = find_builtin_file(kFile);
    if (file == nullptr) throw Error(kFile, "missing from the build", "data/accuracy_classes.json");
    return accuracy_table_from_json(json_fields::parse(std::string(file->text), kFile));
  }();
  return table;
}

const std::vector<AccuracyClass>& builtin_accuracy_classes() { return builtin_accuracy_table().classes; }

Confidence estimate_confidence(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                               const Workload& workload, const Estimate* estimate) {
  const AccuracyTable& table = builtin_accuracy_table();
  return assess_confidence(model, cluster, plan, workload, confidence_gpu_family(cluster.gpu), table.classes,
                           estimate, table.memory);
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
    out.sources = g == 0 ? c.sources : std::min(out.sources, c.sources);
    out.median_error_pct = std::max(out.median_error_pct, c.median_error_pct);
    out.p90_error_pct = std::max(out.p90_error_pct, c.p90_error_pct);
    // The pools' most optimistic class: the pipeline runs at the pace of its slowest pool.
    out.median_time_error_pct = g == 0 ? c.median_time_error_pct : std::min(out.median_time_error_pct, c.median_time_error_pct);
    for (const auto& x : c.extrapolations)
      out.extrapolations.push_back("pool " + std::to_string(seg.pool) + " (" + pool.gpu.key + "): " + x);
  }
  return out;
}

nlohmann::json confidence_to_json(const Confidence& c) {
  nlohmann::json memory = {{"measured", c.memory_measured},
                           {"margin_pct", c.memory_margin_pct},
                           {"margin_gib", c.memory_margin_gib},
                           {"margin_inside_error", c.memory_margin_inside_error}};
  if (c.memory_measured) {
    memory["runs"] = c.memory_runs;
    memory["sources"] = c.memory_sources;
    memory["median_error_pct"] = c.memory_median_error_pct;
    memory["max_error_pct"] = c.memory_max_error_pct;
  }
  return {{"validated", c.validated},
          {"class", c.class_name},
          {"description", c.class_description},
          {"runs", c.runs},
          {"sources", c.sources},
          {"median_error_pct", c.median_error_pct},
          {"p90_error_pct", c.p90_error_pct},
          {"median_time_error_pct", c.median_time_error_pct},
          {"out_of_sample", !c.class_name.empty() && !c.too_few_sources()},
          {"extrapolations", c.extrapolations},
          {"memory", memory}};
}

namespace {
// Which way the class's runs went, at the median: "runs took 2.1% longer than predicted".
std::string time_bias_text(double median_time_error_pct) {
  const double pct = std::fabs(median_time_error_pct);
  if (pct < 0.05) return "runs took as long as predicted at the median";
  return fmt::format("runs took {:.1f}% {} than predicted at the median", pct,
                     median_time_error_pct < 0 ? "longer" : "less time");
}

// The class's error as measured out of sample, or why it cannot be.
std::string class_error_text(const Confidence& c) {
  if (c.class_name.empty()) return "no validated class";
  const std::string name = c.class_description.empty() ? c.class_name : c.class_description;
  if (c.too_few_sources())
    return fmt::format("{}: {} runs from {} source, too few to say out of sample", name, c.runs, c.sources);
  return fmt::format("{}: median {:.1f}%, p90 {:.1f}% out of sample, {} ({} runs, {} sources)", name,
                     c.median_error_pct, c.p90_error_pct, time_bias_text(c.median_time_error_pct), c.runs, c.sources);
}

// "memory: measured peaks median 0.1%, max 0.4% (9 runs, 1 source); margin 12.3%", with a mark
// when the margin is inside the measured error.
std::string memory_text(const Confidence& c) {
  if (!c.memory_measured) return "";
  std::string text = fmt::format("memory: measured peaks of this framework median {:.1f}%, max {:.1f}% ({} runs, {} "
                                 "source{}); margin {:.1f}%",
                                 c.memory_median_error_pct, c.memory_max_error_pct, c.memory_runs, c.memory_sources,
                                 c.memory_sources == 1 ? "" : "s", c.memory_margin_pct);
  if (c.memory_margin_inside_error) text += " -- inside the measured error: the fit verdict could go either way";
  return text;
}
}  // namespace

std::string confidence_text(const Confidence& c) {
  std::string text;
  if (c.validated) {
    text = "validated: " + class_error_text(c);
  } else {
    std::string what;
    for (const std::string& x : c.extrapolations) what += (what.empty() ? "" : "; ") + x;
    text = fmt::format("extrapolates: {} (nearest validated class {})", what, class_error_text(c));
  }
  const std::string memory = memory_text(c);
  return memory.empty() ? text : text + "\n            " + memory;
}

}  // namespace tessera
