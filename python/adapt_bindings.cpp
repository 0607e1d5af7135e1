// Python bindings of the goodput controller (adapt/): the gradient-noise-scale estimator
// (tessera.GnsEstimator, unbiased_noise_estimate), the sharded squared norm (SquaredNormShare,
// model_squared_norm), statistical efficiency and goodput, the batch grid, the Megatron-LM
// `--step-batch-size-schedule` text (megatron_batch_schedule, parse_megatron_batch_schedule,
// format_count, parse_count), and tessera.Controller: a GoodputController built from a model, a
// cluster, a sequence length, batch bounds and a token budget, for a training loop to drive
// (observe_gradients / observe_step after each step, decide, switch_to). Built from a model and a
// cluster, it refits the cost model's GPU to the step times it measures (refit_count,
// refitted_parameters, each candidate's model_step_time_s).
//
// Batch sizes and noise scales are in sequences; thresholds and budgets in tokens.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "adapt/batch_grid.h"
#include "adapt/batch_schedule.h"
#include "adapt/candidate_set.h"
#include "adapt/goodput_controller.h"
#include "adapt/gradient_noise_scale.h"
#include "adapt/plan_family.h"
#include "adapt/reconfiguration_cost.h"
#include "adapt/sharded_squared_norm.h"
#include "adapt/statistical_efficiency.h"
#include "bindings.h"
#include "calibrate/calibration.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "formats/model_json.h"
#include "formats/plan_constraints_text.h"
#include "formats/plan_text.h"

namespace tessera::python {

namespace py = pybind11;

namespace {

// A model argument: a zoo name or a model / config.json path (load_model), or a dict in Tessera's
// model JSON format (what a script describing its own model passes).
ModelSpec model_from(const py::object& model) {
  if (py::isinstance<py::str>(model)) return load_model(py::cast<std::string>(model));
  if (py::isinstance<py::dict>(model)) {
    const std::string text = py::cast<std::string>(py::module_::import("json").attr("dumps")(model));
    return model_from_json(nlohmann::json::parse(text), "model");
  }
  throw Error("model", "expected a name, a path or a dict, got " + std::string(py::str(model.get_type())),
              "a zoo name, a model JSON / config.json path, or a model dict");
}

std::vector<BatchScheduleEntry> schedule_entries(const std::vector<std::pair<double, std::int64_t>>& pairs) {
  std::vector<BatchScheduleEntry> out;
  for (const auto& [threshold, batch] : pairs) out.push_back(BatchScheduleEntry{threshold, batch});
  return out;
}

std::vector<std::pair<double, std::int64_t>> schedule_pairs(const std::vector<BatchScheduleEntry>& entries) {
  std::vector<std::pair<double, std::int64_t>> out;
  for (const BatchScheduleEntry& e : entries) out.emplace_back(e.threshold, e.global_batch);
  return out;
}

struct ControllerArgs {
  std::int64_t seq_len = 0, min_batch = 0, max_batch = 0;
  std::string fix;
  std::vector<std::size_t> allowed;
  int threads = 0;
  std::size_t families_per_batch = kFamiliesPerBatch;
  double batch_ratio = kBatchGridRatio;
};

// GoodputController plus what it was built from, so that Python sees plans as text.
class Controller {
 public:
  Controller(GoodputController controller, std::string model_name, std::int64_t gpus)
      : controller_(std::move(controller)), model_name_(std::move(model_name)), gpus_(gpus) {}

  // Candidates from the planner and the cost model: the model on the cluster.
  static Controller planned(const ModelSpec& model, const Cluster& cluster, const ControllerArgs& args,
                            ControllerOptions options) {
    if (args.seq_len < 1 || args.seq_len > model.max_context)
      throw Error("seq_len", fmt::format("got {}", args.seq_len),
                  fmt::format("1 to the model's context, {}", model.max_context));
    if (args.families_per_batch < 1) throw Error("families_per_batch", "got 0", "an integer >= 1");
    if (options.reference_batch == 0) options.reference_batch = static_cast<double>(args.min_batch);
    options.validate();
    const std::vector<std::int64_t> grid = batch_grid(args.min_batch, args.max_batch, args.batch_ratio);
    CandidateOptions candidate_options;
    candidate_options.constraints = parse_constraints(args.fix);
    candidate_options.threads = args.threads;
    candidate_options.families_per_batch = args.families_per_batch;
    CandidateSet set;
    {
      py::gil_scoped_release unlocked;  // the planner runs once per grid batch
      set = build_candidates(model, cluster, args.seq_len, grid, candidate_options);
    }
    return Controller(GoodputController(std::move(set), reconfiguration_cost(model, cluster), options, args.allowed),
                      model.name, cluster.gpus());
  }

  // Candidates whose step times the caller predicts (hardware the cost model does not describe, a
  // CPU run, a measured profile): one data-parallel plan over dp ranks at every batch, so every
  // switch is a batch-size-only change; the refit still scales the given times online.
  static Controller from_step_times(std::int64_t seq_len, const std::vector<std::int64_t>& batches,
                                    const std::vector<double>& step_time_s, std::int64_t dp,
                                    ControllerOptions options) {
    if (seq_len < 1) throw Error("seq_len", fmt::format("got {}", seq_len), "an integer >= 1");
    if (dp < 1) throw Error("dp", fmt::format("got {}", dp), "an integer >= 1");
    if (batches.empty()) throw Error("batches", "empty", "increasing global batch sizes");
    if (step_time_s.size() != batches.size())
      throw Error("step_time_s", fmt::format("has {} entries for {} batches", step_time_s.size(), batches.size()),
                  "one step time per batch");
    CandidateSet set;
    set.seq_len = seq_len;
    Plan plan;
    plan.dp = dp;
    set.plans.push_back(plan);
    for (std::size_t i = 0; i < batches.size(); ++i) {
      if (batches[i] < 1 || (i > 0 && batches[i] <= batches[i - 1]))
        throw Error(fmt::format("batches[{}]", i), fmt::format("got {}", batches[i]),
                    "increasing global batch sizes >= 1");
      if (!std::isfinite(step_time_s[i]) || step_time_s[i] <= 0.0)
        throw Error(fmt::format("step_time_s[{}]", i), fmt::format("got {}", step_time_s[i]), "seconds > 0");
      set.batches.push_back(batches[i]);
      set.candidates.push_back(Candidate{batches[i], 0, step_time_s[i]});
      set.planner_best.push_back(i);
    }
    if (options.reference_batch == 0) options.reference_batch = static_cast<double>(batches.front());
    options.validate();
    return Controller(GoodputController(std::move(set), ReconfigurationCost{}, options), "", dp);
  }

  GoodputController& get() { return controller_; }
  const GoodputController& get() const { return controller_; }
  const std::string& model_name() const { return model_name_; }
  std::int64_t gpus() const { return gpus_; }

  void check_index(std::size_t i) const {
    const std::size_t n = controller_.candidates().candidates.size();
    if (i >= n) throw Error("candidate", fmt::format("got {}", i), fmt::format("0 to {}", n - 1));
  }

  py::dict candidate(std::size_t i) const {
    check_index(i);
    const CandidateSet& set = controller_.candidates();
    const Candidate& c = set.candidates[i];
    py::dict d;
    d["index"] = i;
    d["global_batch"] = c.global_batch;
    d["plan"] = plan_to_shorthand(set.plan(c), set.workload(c));
    d["family"] = to_string(family_of(set.plan(c)));
    d["predicted_step_time_s"] = c.predicted_step_time_s;
    d["model_step_time_s"] = controller_.model_step_time_s(i);
    d["refit_scale"] = controller_.refit().scale(family_of(set.plan(c)));
    d["expected_step_time_s"] = controller_.predicted_step_time_s(i);
    return d;
  }

  // The GPU parameters the last cost-model refit fitted (name -> value, only those it moved), or
  // None before the first refit and for a controller from step times.
  py::object refitted_parameters() const {
    const CalibrationProfile* profile = controller_.refit_profile();
    if (!profile) return py::none();
    py::dict d;
    for (const ParameterFit& fit : profile->parameters)
      if (fit.status == ParameterStatus::fitted || fit.status == ParameterStatus::at_bound) d[fit.name.c_str()] = fit.fitted;
    return d;
  }

  py::list candidates() const {
    py::list out;
    for (std::size_t i = 0; i < controller_.candidates().candidates.size(); ++i) out.append(candidate(i));
    return out;
  }

  // The schedule with thresholds in tokens, or in samples (tokens / seq_len) for Megatron runs
  // whose schedule counts consumed samples.
  std::vector<BatchScheduleEntry> schedule(const std::string& unit) const {
    std::vector<BatchScheduleEntry> entries = controller_.batch_schedule();
    if (unit == "samples") {
      for (BatchScheduleEntry& e : entries) e.threshold /= static_cast<double>(controller_.candidates().seq_len);
    } else if (unit != "tokens") {
      throw Error("unit", "got '" + unit + "'", "tokens, samples");
    }
    return entries;
  }

 private:
  GoodputController controller_;
  std::string model_name_;
  std::int64_t gpus_ = 0;
};

ControllerOptions controller_options(double token_budget, double reference_batch, double initial_noise_scale,
                                     double batch_hysteresis, double plan_hysteresis, double horizon_per_progress,
                                     std::int64_t min_noise_scale_steps, double gns_ema_decay,
                                     double refit_ema_decay) {
  ControllerOptions o;
  o.token_budget = token_budget;
  o.reference_batch = reference_batch;
  o.initial_noise_scale = initial_noise_scale;
  o.batch_hysteresis = batch_hysteresis;
  o.plan_hysteresis = plan_hysteresis;
  o.horizon_per_progress = horizon_per_progress;
  o.min_noise_scale_steps = min_noise_scale_steps;
  o.gns_ema_decay = gns_ema_decay;
  o.refit_ema_decay = refit_ema_decay;
  return o;
}

}  // namespace

void bind_adapt(py::module_& m) {
  py::class_<NoiseEstimate>(m, "NoiseEstimate", "One step's unbiased estimates of |G|^2 and tr(Sigma)")
      .def_readonly("gradient_sq_norm", &NoiseEstimate::gradient_sq_norm, "|G|^2, the true gradient's squared norm")
      .def_readonly("trace_covariance", &NoiseEstimate::trace_covariance, "tr(Sigma), per example")
      .def("__repr__", [](const NoiseEstimate& e) {
        return fmt::format("NoiseEstimate(gradient_sq_norm={}, trace_covariance={})", e.gradient_sq_norm,
                           e.trace_covariance);
      });
  m.def("unbiased_noise_estimate", &unbiased_noise_estimate, py::arg("small_sq_norm"), py::arg("small_batch"),
        py::arg("big_sq_norm"), py::arg("big_batch"),
        "McCandlish et al. 2018 appendix A.1: |G|^2 and tr(Sigma) from the squared gradient norms at a small "
        "batch (or the mean over several small batches) and at the big batch containing it");

  py::class_<GnsEstimator>(m, "GnsEstimator",
                           "Gradient noise scale B_simple = EMA[tr Sigma] / EMA[|G|^2] (bias-corrected moving "
                           "averages of the per-step unbiased estimates)")
      .def(py::init<double>(), py::arg("ema_decay") = kGnsEmaDecay)
      .def("update", &GnsEstimator::update, py::arg("small_sq_norm"), py::arg("small_batch"), py::arg("big_sq_norm"),
           py::arg("big_batch"), py::arg("steps") = 1,
           "One step's squared norms (steps > 1: averages over that many steps at the same batch sizes)")
      .def_property_readonly("steps", &GnsEstimator::steps)
      .def_property_readonly("gradient_sq_norm", &GnsEstimator::gradient_sq_norm, "moving average of |G|^2")
      .def_property_readonly("trace_covariance", &GnsEstimator::trace_covariance, "moving average of tr(Sigma)")
      .def_property_readonly("has_noise_scale", &GnsEstimator::has_noise_scale)
      .def_property_readonly("noise_scale", &GnsEstimator::noise_scale,
                             "B_simple in the batch sizes' units; TesseraError before it exists");

  py::class_<SquaredNormShare>(m, "SquaredNormShare",
                               "One rank's share of a model's squared gradient norm under tp / pp sharding")
      .def(py::init<>())
      .def("add", &SquaredNormShare::add, py::arg("squared_norm"), py::arg("replicas") = 1,
           "A parameter piece's squared norm; replicas: ranks of the model-parallel group holding the same piece")
      .def_property_readonly("value", &SquaredNormShare::value);
  m.def(
      "model_squared_norm", [](const std::vector<double>& shares) { return model_squared_norm(shares); },
      py::arg("rank_shares"), "The model's squared norm from every rank's share (an all-reduce sum)");

  m.def("statistical_efficiency", &statistical_efficiency, py::arg("batch"), py::arg("noise_scale"),
        py::arg("reference_batch"), "E(B) = (B_noise + B0) / (B_noise + B) (Pollux section 3.1)");
  m.def("goodput", &goodput, py::arg("throughput"), py::arg("batch"), py::arg("noise_scale"),
        py::arg("reference_batch"), "throughput x statistical_efficiency(batch, noise_scale, reference_batch)");
  m.def("batch_grid", &batch_grid, py::arg("min_batch"), py::arg("max_batch"), py::arg("ratio") = kBatchGridRatio,
        "Candidate global batch sizes: a geometric grid from min_batch to max_batch (both included)");

  m.def("format_count", &format_count, py::arg("count"), "250e9 -> '250B' (3 significant digits, K/M/B/T)");
  m.def("parse_count", &parse_count, py::arg("text"), "'250B' -> 250e9");
  m.def(
      "megatron_batch_schedule",
      [](const std::vector<std::pair<double, std::int64_t>>& entries) {
        return megatron_batch_schedule(schedule_entries(entries));
      },
      py::arg("entries"),
      "Megatron-LM --step-batch-size-schedule text from (threshold, global_batch) pairs, e.g. "
      "'0:768 250B:1536 500B:3072'");
  m.def(
      "parse_megatron_batch_schedule",
      [](const std::string& text) { return schedule_pairs(parse_megatron_batch_schedule(text)); }, py::arg("text"),
      "(threshold, global_batch) pairs of a --step-batch-size-schedule text");

  py::class_<ControllerDecision>(m, "ControllerDecision", "What Controller.decide() recommends")
      .def_readonly("switch_now", &ControllerDecision::switch_now)
      .def_readonly("candidate", &ControllerDecision::candidate, "the one to switch to; the current one when staying")
      .def_readonly("noise_scale", &ControllerDecision::noise_scale, "sequences, as used")
      .def_readonly("current_goodput", &ControllerDecision::current_goodput, "tokens of progress per second")
      .def_readonly("candidate_goodput", &ControllerDecision::candidate_goodput)
      .def_readonly("horizon_tokens", &ControllerDecision::horizon_tokens)
      .def_readonly("predicted_saving_s", &ControllerDecision::predicted_saving_s)
      .def_readonly("switch_cost_s", &ControllerDecision::switch_cost_s)
      .def("__repr__", [](const ControllerDecision& d) {
        return fmt::format("ControllerDecision(switch_now={}, candidate={}, noise_scale={:.4g}, "
                           "predicted_saving_s={:.4g})",
                           d.switch_now ? "True" : "False", d.candidate, d.noise_scale, d.predicted_saving_s);
      });

  py::class_<Controller>(m, "Controller",
                         "Goodput controller: co-selects the global batch size and the parallel plan from measured "
                         "gradient norms and step times (adapt/goodput_controller.h)")
      .def(py::init([](const py::object& model, const std::string& cluster, std::int64_t seq_len,
                       std::int64_t min_batch, std::int64_t max_batch, double token_budget, double reference_batch,
                       double initial_noise_scale, const std::string& fix, std::vector<std::size_t> allowed,
                       double batch_hysteresis, double plan_hysteresis, double horizon_per_progress,
                       std::int64_t min_noise_scale_steps, double gns_ema_decay, double refit_ema_decay,
                       double batch_ratio, std::size_t families_per_batch, int threads) {
             ControllerArgs args;
             args.seq_len = seq_len;
             args.min_batch = min_batch;
             args.max_batch = max_batch;
             args.fix = fix;
             args.allowed = std::move(allowed);
             args.threads = threads;
             args.families_per_batch = families_per_batch;
             args.batch_ratio = batch_ratio;
             return Controller::planned(
                 model_from(model), load_cluster(cluster), args,
                 controller_options(token_budget, reference_batch, initial_noise_scale, batch_hysteresis,
                                    plan_hysteresis, horizon_per_progress, min_noise_scale_steps, gns_ema_decay,
                                    refit_ema_decay));
           }),
           py::arg("model"), py::arg("cluster"), py::arg("seq_len"), py::arg("min_batch"), py::arg("max_batch"),
           py::arg("token_budget"), py::kw_only(), py::arg("reference_batch") = 0.0,
           py::arg("initial_noise_scale") = 0.0, py::arg("fix") = "", py::arg("allowed") = std::vector<std::size_t>{},
           py::arg("batch_hysteresis") = kBatchSwitchHysteresis, py::arg("plan_hysteresis") = kPlanSwitchHysteresis,
           py::arg("horizon_per_progress") = kHorizonPerProgress,
           py::arg("min_noise_scale_steps") = kMinNoiseScaleSteps, py::arg("gns_ema_decay") = kGnsEmaDecay,
           py::arg("refit_ema_decay") = kRefitEmaDecay, py::arg("batch_ratio") = kBatchGridRatio,
           py::arg("families_per_batch") = kFamiliesPerBatch, py::arg("threads") = 0,
           "model: zoo name, model JSON / config.json path or model dict; cluster: 'gpu-key:count' or a cluster "
           "JSON path; candidates: batch_grid(min_batch, max_batch, batch_ratio), each with the planner's best "
           "plans (pinned by fix, e.g. 'tp=1,pp=1,mb=2'); token_budget: tokens of progress to the target; "
           "reference_batch: B0 (0 = min_batch); initial_noise_scale: assumed until min_noise_scale_steps steps "
           "of gradient norms were seen (0 = reference_batch)")
      .def_static(
          "from_step_times",
          [](std::int64_t seq_len, const std::vector<std::int64_t>& batches, const std::vector<double>& step_time_s,
             double token_budget, std::int64_t dp, double reference_batch, double initial_noise_scale,
             double batch_hysteresis, double horizon_per_progress, std::int64_t min_noise_scale_steps,
             double gns_ema_decay, double refit_ema_decay) {
            return Controller::from_step_times(
                seq_len, batches, step_time_s, dp,
                controller_options(token_budget, reference_batch, initial_noise_scale, batch_hysteresis,
                                   kPlanSwitchHysteresis, horizon_per_progress, min_noise_scale_steps, gns_ema_decay,
                                   refit_ema_decay));
          },
          py::arg("seq_len"), py::arg("batches"), py::arg("step_time_s"), py::arg("token_budget"), py::kw_only(),
          py::arg("dp") = 1, py::arg("reference_batch") = 0.0, py::arg("initial_noise_scale") = 0.0,
          py::arg("batch_hysteresis") = kBatchSwitchHysteresis, py::arg("horizon_per_progress") = kHorizonPerProgress,
          py::arg("min_noise_scale_steps") = kMinNoiseScaleSteps, py::arg("gns_ema_decay") = kGnsEmaDecay,
          py::arg("refit_ema_decay") = kRefitEmaDecay,
          "A controller over batch sizes only, with step times the caller predicts (hardware the cost model does "
          "not describe, such as a CPU run, or a measured profile): one data-parallel plan over dp ranks, every "
          "switch free; the measured step times still refit the given ones online. reference_batch: 0 = batches[0]")
      .def("observe_step",
           [](Controller& c, double measured_step_time_s, std::int64_t steps) {
             c.get().observe_step(measured_step_time_s, steps);
           },
           py::arg("measured_step_time_s"), py::arg("steps") = 1,
           "steps ran on the current candidate, taking measured_step_time_s each on average")
      .def("observe_gradients",
           [](Controller& c, double small_sq_norm, double small_batch, double big_sq_norm, double big_batch,
              std::int64_t steps) { c.get().observe_gradients(small_sq_norm, small_batch, big_sq_norm, big_batch, steps); },
           py::arg("small_sq_norm"), py::arg("small_batch"), py::arg("big_sq_norm"), py::arg("big_batch"),
           py::arg("steps") = 1, "Squared gradient norms of those steps (see GnsEstimator.update)")
      .def("decide", [](const Controller& c) { return c.get().decide(); })
      .def("switch_to",
           [](Controller& c, std::size_t candidate) {
             c.check_index(candidate);
             c.get().switch_to(candidate);
           },
           py::arg("candidate"), "The job now runs this candidate (after a decision, or to override it)")
      .def("start_candidate", [](const Controller& c) { return c.get().start_candidate(); })
      .def("predicted_goodput",
           [](const Controller& c, std::size_t candidate, double noise_scale) {
             c.check_index(candidate);
             return c.get().predicted_goodput(candidate, noise_scale);
           },
           py::arg("candidate"), py::arg("noise_scale"), "tokens of progress per second, with the current refit")
      .def("candidate", &Controller::candidate, py::arg("index"),
           "dict: index, global_batch, plan (shorthand), family, predicted_step_time_s (the cost model with the "
           "catalog GPU), model_step_time_s (with the GPU refitted to the measured steps), refit_scale (the "
           "family's residual, measured / model), expected_step_time_s (model x residual: what goodput uses)")
      .def_property_readonly("refits_cost_model", [](const Controller& c) { return c.get().refits_cost_model(); },
                             "True when built from a model and a cluster: measured step times refit the GPU's "
                             "compute and host parameters (tessera.calibrate's fit) and every candidate is priced "
                             "again; False from step times (each family's scale only)")
      .def_property_readonly("refit_count", [](const Controller& c) { return c.get().refit_count(); },
                             "cost-model refits so far: one per (plan, batch) first run, or per mean step time "
                             "that moved by more than 1%")
      .def_property_readonly("refitted_parameters", &Controller::refitted_parameters,
                             "dict of the GPU parameters the last refit moved (name -> value), None before one")
      .def_property_readonly("candidates", &Controller::candidates, "every candidate, as candidate(i)")
      .def_property_readonly("allowed", [](const Controller& c) { return c.get().allowed(); })
      .def_property_readonly("current", [](const Controller& c) { return c.get().current(); })
      .def_property_readonly("global_batch", [](const Controller& c) { return c.get().current_candidate().global_batch; },
                             "the current candidate's global batch (sequences)")
      .def_property_readonly("plan",
                             [](const Controller& c) {
                               const CandidateSet& set = c.get().candidates();
                               const Candidate& cur = c.get().current_candidate();
                               return plan_to_shorthand(set.plan(cur), set.workload(cur));
                             },
                             "the current candidate's plan as --plan shorthand")
      .def_property_readonly("batches", [](const Controller& c) { return c.get().candidates().batches; },
                             "grid batches with at least one plan that fits")
      .def_property_readonly("seq_len", [](const Controller& c) { return c.get().candidates().seq_len; })
      .def_property_readonly("noise_scale", [](const Controller& c) { return c.get().noise_scale(); },
                             "the measured one once trusted, else the initial guess (sequences)")
      .def_property_readonly("noise_estimator", [](const Controller& c) { return c.get().noise_estimator(); },
                             "a copy of the controller's GnsEstimator")
      .def_property_readonly("consumed_tokens", [](const Controller& c) { return c.get().consumed_tokens(); })
      .def_property_readonly("progress_tokens", [](const Controller& c) { return c.get().progress_tokens(); },
                             "estimated progress, tokens at the reference batch")
      .def_property_readonly("model", &Controller::model_name, "the model's name ('' from from_step_times)")
      .def_property_readonly("gpus", &Controller::gpus, "the cluster's GPUs (dp from from_step_times)")
      .def("batch_schedule",
           [](const Controller& c, const std::string& unit) { return schedule_pairs(c.schedule(unit)); },
           py::arg("unit") = "tokens", "(threshold, global_batch) pairs so far; unit: tokens or samples")
      .def("megatron_schedule",
           [](const Controller& c, const std::string& unit) { return megatron_batch_schedule(c.schedule(unit)); },
           py::arg("unit") = "tokens", "the schedule so far as --step-batch-size-schedule text");
}

}  // namespace tessera::python
