// Python bindings of the data balancer (balance/): tessera.Balancer, which costs samples with the
// cost model and places them on data-parallel ranks x micro-batches (one step, or a stream of
// steps with carry-over), and the algorithms on their own (lpt, karmarkar_karp,
// order_microbatches, cp_sharding), plus the pinned synthetic mixes and the seeded permutation
// the torch sampler shuffles with; tessera.PerBatchCp, the per-step context-parallel degrees and
// grouping of one step's micro-batches (balance/per_batch_parallelism.h).
//
// Samples come as text_tokens (per sample a token count, or a list of counts for several packed
// documents), optional image_tokens (per sample a list of per-image token counts) and optional
// generated_tokens (per sample a count). Slot s of a step is micro-batch s / dp on rank s % dp.
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "balance/context_parallel_sharding.h"
#include "balance/largest_differencing.h"
#include "balance/longest_processing_time.h"
#include "balance/microbatch_order.h"
#include "balance/per_batch_parallelism.h"
#include "balance/sample_cost.h"
#include "balance/stream_balancer.h"
#include "balance/stream_metrics.h"
#include "balance/synthetic_mix.h"
#include "bindings.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/checks.h"
#include "core/error.h"
#include "core/seeded_random.h"

namespace tessera::python {

namespace py = pybind11;

namespace {

constexpr const char* kDefaultModel = "llama3-8b";
constexpr const char* kDefaultGpu = "h100-sxm-80gb";

// Where a value sits in the input, for error messages: name[sample] or name[sample][entry].
struct Where {
  const char* name;
  std::size_t sample;
  std::ptrdiff_t entry = -1;
  std::string text() const {
    return entry < 0 ? fmt::format("{}[{}]", name, sample) : fmt::format("{}[{}][{}]", name, sample, entry);
  }
};

std::int64_t token_count(py::handle value, const Where& where) {
  std::int64_t t = 0;
  // pybind11 would read True as 1: a bool is no token count.
  if (py::isinstance<py::bool_>(value))
    throw Error(where.text(), "expected a token count, got " + std::string(py::str(value)), "an integer");
  try {
    t = py::cast<std::int64_t>(value);
  } catch (const py::cast_error&) {
    throw Error(where.text(), "expected a token count, got " + std::string(py::str(value)), "an integer");
  }
  if (t < 0 || t > kMaxSampleTokens)
    throw Error(where.text(), fmt::format("got {}", t), fmt::format("an integer from 0 to {}", kMaxSampleTokens));
  return t;
}

std::vector<std::int64_t> token_counts(py::handle value, Where where, bool number_allowed) {
  if (number_allowed && !py::isinstance<py::sequence>(value)) return {token_count(value, where)};
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value))
    throw Error(where.text(), "expected a list of token counts, got " + std::string(py::str(value)), "[n, ...]");
  std::vector<std::int64_t> out;
  for (py::handle item : value) {
    where.entry = static_cast<std::ptrdiff_t>(out.size());
    out.push_back(token_count(item, where));
  }
  return out;
}

std::size_t sequence_length(const py::object& value, const char* field) {
  if (!py::isinstance<py::sequence>(value) || py::isinstance<py::str>(value))
    throw Error(field, "expected a list with one entry per sample", "a list");
  return py::len(value);
}

std::vector<SampleTokens> samples_from(const py::object& text, const py::object& images,
                                       const py::object& generated) {
  const std::size_t n = sequence_length(text, "text_tokens");
  if (!images.is_none() && sequence_length(images, "image_tokens") != n)
    throw Error("image_tokens", fmt::format("has {} entries for {} samples", py::len(images), n), "one list per sample");
  if (!generated.is_none() && sequence_length(generated, "generated_tokens") != n)
    throw Error("generated_tokens", fmt::format("has {} entries for {} samples", py::len(generated), n),
                "one count per sample");
  std::vector<SampleTokens> samples(n);
  for (std::size_t i = 0; i < n; ++i) {
    SampleTokens& s = samples[i];
    s.text_tokens = token_counts(text[py::int_(i)], {"text_tokens", i}, true);
    if (!images.is_none()) s.image_tokens = token_counts(images[py::int_(i)], {"image_tokens", i}, false);
    if (!generated.is_none()) s.generated_tokens = token_count(generated[py::int_(i)], {"generated_tokens", i});
    if (s.backbone_tokens() > kMaxSampleTokens || (s.backbone_tokens() == 0 && s.generated_tokens == 0))
      throw Error(Where{"text_tokens", i}.text(), fmt::format("a sample needs 1 to {} tokens", kMaxSampleTokens),
                  "positive token counts");
  }
  return samples;
}

std::vector<double> finite_costs(const std::vector<double>& costs) {
  for (std::size_t i = 0; i < costs.size(); ++i)
    if (!std::isfinite(costs[i]) || costs[i] < 0)
      throw Error(fmt::format("costs[{}]", i), fmt::format("got {}", costs[i]), "a finite number >= 0");
  return costs;
}

std::vector<std::int64_t> checked_tokens(const std::vector<std::int64_t>& tokens) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] > kMaxSampleTokens)
      throw Error(fmt::format("tokens[{}]", i), fmt::format("got {}", tokens[i]),
                  fmt::format("an integer from 0 to {}", kMaxSampleTokens));
  return tokens;
}

// One step: which samples each slot holds.
struct StepPlan {
  int dp = 1, microbatches = 1;
  std::vector<std::vector<std::int64_t>> slots;
  std::vector<double> slot_time_s;
  std::vector<std::int64_t> carried;
  double imbalance = 1, lower_bound = 1;

  std::vector<std::vector<std::int64_t>> rank_microbatches(int rank) const {
    if (rank < 0 || rank >= dp) throw Error("rank", fmt::format("got {}", rank), fmt::format("0 to {}", dp - 1));
    std::vector<std::vector<std::int64_t>> out;
    for (int mb = 0; mb < microbatches; ++mb) out.push_back(slots[static_cast<std::size_t>(mb * dp + rank)]);
    return out;
  }
};

struct StreamPlan {
  std::vector<StepPlan> steps;
  std::vector<std::int64_t> carried;
  std::int64_t n_in = 0, n_assigned = 0, n_carried = 0;
  double mean_delay_steps = 0;
  int max_delay_steps = 0, outlier_queues = 0;
  double imbalance = 1, lower_bound = 1;
};

StepPlan step_plan(const StreamSettings& st, const StepResult& step) {
  StepPlan p;
  p.dp = st.dp;
  p.microbatches = st.microbatches;
  p.slots.resize(static_cast<std::size_t>(st.slots()));
  for (const SlotPlacement& placed : step.placements) p.slots[static_cast<std::size_t>(placed.slot)].push_back(placed.item);
  p.slot_time_s = step.slot_time_s;
  const LoadBalance b = load_balance(step.slot_time_s, step.largest_item_s);
  p.imbalance = b.imbalance;
  p.lower_bound = b.lower_bound;
  return p;
}

class Balancer {
 public:
  Balancer(int dp, int microbatches, std::int64_t max_tokens, const std::string& method, const std::string& model,
           const std::string& gpu, bool equal_count)
      : model_(load_model(model)), gpu_(find_gpu(gpu)) {
    settings_.dp = dp;
    settings_.microbatches = microbatches;
    settings_.max_tokens = max_tokens;
    settings_.method = parse_balance_method(method);
    settings_.count = equal_count ? CountMode::equal : CountMode::free;
    settings_.one_step = true;
    settings_.validate();
    cost_ = make_sample_cost_model(model_, gpu_, max_tokens > 0 ? max_tokens : model_.max_context);
    settings_.filler_s_per_token = cost_.backbone.linear_s_per_token;
  }

  std::vector<double> sample_costs(const py::object& text, const py::object& images, const py::object& generated) const {
    std::vector<double> out;
    for (const SampleTokens& s : samples_from(text, images, generated)) out.push_back(sample_cost(cost_, s).total_s());
    return out;
  }

  StepPlan balance(const py::object& text, const py::object& images, const py::object& generated) const {
    const auto samples = samples_from(text, images, generated);
    std::vector<std::int64_t> tokens;
    std::vector<double> time;
    for (const SampleTokens& s : samples) {
      tokens.push_back(s.backbone_tokens());
      time.push_back(sample_cost(cost_, s).total_s());
    }
    return balance_costs(time, tokens);
  }

  StepPlan balance_costs(const std::vector<double>& costs, std::vector<std::int64_t> tokens) const {
    const std::vector<double> time = finite_costs(costs);
    if (tokens.empty() && settings_.max_tokens == 0) tokens.assign(time.size(), 1);
    if (tokens.size() != time.size())
      throw Error("tokens", fmt::format("has {} entries for {} costs", tokens.size(), time.size()),
                  "one token count per cost (required with max_tokens)");
    checked_tokens(tokens);
    StreamResult r;
    {
      py::gil_scoped_release unlocked;
      r = balance_stream(tokens, time, settings_);
    }
    StepPlan p = step_plan(settings_, r.steps.front());
    p.carried = r.carried;
    return p;
  }

  // Each sample's predicted time and backbone tokens, what balance_costs and stream_costs take:
  // a sampler converts and checks its samples once, then balances steps of them by index.
  std::pair<std::vector<double>, std::vector<std::int64_t>> costs_and_tokens(const py::object& text,
                                                                             const py::object& images,
                                                                             const py::object& generated) const {
    std::pair<std::vector<double>, std::vector<std::int64_t>> out;
    for (const SampleTokens& s : samples_from(text, images, generated)) {
      out.first.push_back(sample_cost(cost_, s).total_s());
      out.second.push_back(s.backbone_tokens());
    }
    return out;
  }

  StreamPlan stream(const py::object& text, const py::object& images, const py::object& generated, int steps) const {
    const auto [time, tokens] = costs_and_tokens(text, images, generated);
    return stream_costs(time, tokens, steps);
  }

  StreamPlan stream_costs(const std::vector<double>& costs, const std::vector<std::int64_t>& tokens, int steps) const {
    StreamSettings st = settings_;
    st.one_step = false;
    st.steps = steps;
    const std::vector<double> time = finite_costs(costs);
    if (tokens.size() != time.size())
      throw Error("tokens", fmt::format("has {} entries for {} costs", tokens.size(), time.size()),
                  "one token count per cost");
    checked_tokens(tokens);
    StreamResult r;
    {
      py::gil_scoped_release unlocked;
      r = balance_stream(tokens, time, st);
    }
    StreamPlan plan;
    for (const StepResult& step : r.steps) plan.steps.push_back(step_plan(st, step));
    plan.carried = r.carried;
    plan.n_in = r.n_in;
    plan.n_assigned = r.n_assigned;
    plan.n_carried = r.n_carried;
    plan.mean_delay_steps = r.mean_delay_steps;
    plan.max_delay_steps = r.max_delay_steps;
    plan.outlier_queues = r.outlier_queues;
    const LoadBalance b = mean_load_balance(r, time, st.slots());
    plan.imbalance = b.imbalance;
    plan.lower_bound = b.lower_bound;
    return plan;
  }

  const StreamSettings& settings() const { return settings_; }
  const std::string& model_name() const { return model_.name; }
  const std::string& gpu_key() const { return gpu_.key; }

 private:
  ModelSpec model_;
  GpuSpec gpu_;
  SampleCostModel cost_;
  StreamSettings settings_;
};

// One step's decision for Python: groups of GPUs, each with its cp degree and micro-batches.
class PerBatchCp {
 public:
  PerBatchCp(int gpus, const std::string& model, const std::string& gpu, const std::string& recompute)
      : cost_(make_cp_cost_model(load_model(model), make_cluster(find_gpu(gpu), gpus), gpus, parse_recompute(recompute))),
        planner_(cost_, gpus) {}

  py::dict decide(const py::object& microbatches) {
    const std::size_t n = sequence_length(microbatches, "microbatches");
    StepBatch batch;
    for (std::size_t i = 0; i < n; ++i)
      batch.add(token_counts(microbatches[py::int_(i)], {"microbatches", i}, true));
    planner_.cost_step(batch);
    py::dict statics;
    for (int c : planner_.static_degrees()) {
      const double t = planner_.static_decision(c).step_time_s;
      statics[py::int_(c)] = std::isfinite(t) ? py::object(py::float_(t)) : py::object(py::none());
    }
    const StepDecision& d = planner_.per_batch_decision();
    py::list groups;
    for (const CpGroup& g : d.groups) {
      py::dict group;
      group["cp"] = g.degree;
      group["first_gpu"] = g.first_gpu;
      group["microbatches"] = g.microbatches;
      group["time_s"] = g.time_s;
      groups.append(group);
    }
    py::dict out;
    out["groups"] = groups;
    out["step_time_s"] = d.step_time_s;
    out["static_cp"] = d.static_degree;
    out["lower_bound_s"] = d.lower_bound_s;
    out["static_time_s"] = statics;
    return out;
  }
  int gpus() const { return planner_.gpus(); }
  std::vector<int> degrees() const { return planner_.degrees(); }
  std::int64_t max_tokens_per_gpu() const { return cost_.max_tokens_per_gpu; }

 private:
  CpCostModel cost_;
  PerBatchCpPlanner planner_;
};

}  // namespace

void bind_balance(py::module_& m) {
  py::class_<StepPlan>(m, "StepPlan", "One step's placement: slots[mb * dp + rank] lists sample indices")
      .def_readonly("dp", &StepPlan::dp)
      .def_readonly("microbatches", &StepPlan::microbatches)
      .def_readonly("slots", &StepPlan::slots)
      .def_readonly("slot_time_s", &StepPlan::slot_time_s, "predicted time of each slot")
      .def_readonly("carried", &StepPlan::carried, "samples that fit in no slot (token cap) or wait as outliers")
      .def_readonly("imbalance", &StepPlan::imbalance, "slowest slot x slots / total")
      .def_readonly("lower_bound", &StepPlan::lower_bound, "max(largest sample, total / slots) x slots / total")
      .def("rank_microbatches", &StepPlan::rank_microbatches, py::arg("rank"),
           "This rank's micro-batches in order: a list of sample-index lists");

  py::class_<StreamPlan>(m, "StreamPlan", "Steps of a balanced stream, with carry-over and outlier delay")
      .def_readonly("steps", &StreamPlan::steps)
      .def_readonly("carried", &StreamPlan::carried, "samples still waiting after the last step")
      .def_readonly("n_in", &StreamPlan::n_in)
      .def_readonly("n_assigned", &StreamPlan::n_assigned)
      .def_readonly("n_carried", &StreamPlan::n_carried)
      .def_readonly("mean_delay_steps", &StreamPlan::mean_delay_steps)
      .def_readonly("max_delay_steps", &StreamPlan::max_delay_steps)
      .def_readonly("outlier_queues", &StreamPlan::outlier_queues)
      .def_readonly("imbalance", &StreamPlan::imbalance, "mean over steps")
      .def_readonly("lower_bound", &StreamPlan::lower_bound, "mean over steps");

  py::class_<Balancer>(m, "Balancer",
                       "Balances samples over dp ranks x micro-batches by their predicted time on `gpu` for "
                       "`model` (a ViT-H/14 encoder for image tokens, a DiT-XL/2 generator for generated tokens).")
      .def(py::init<int, int, std::int64_t, const std::string&, const std::string&, const std::string&, bool>(),
           py::arg("dp"), py::arg("microbatches") = 1, py::arg("max_tokens") = 0, py::arg("method") = "lpt",
           py::arg("model") = kDefaultModel, py::arg("gpu") = kDefaultGpu, py::arg("equal_count") = false)
      .def("sample_costs", &Balancer::sample_costs, py::arg("text_tokens"), py::arg("image_tokens") = py::none(),
           py::arg("generated_tokens") = py::none(), "Predicted training time of each sample, seconds")
      .def("balance", &Balancer::balance, py::arg("text_tokens"), py::arg("image_tokens") = py::none(),
           py::arg("generated_tokens") = py::none(), "One step over all the samples given")
      .def("balance_costs", &Balancer::balance_costs, py::arg("costs"), py::arg("tokens") = std::vector<std::int64_t>{},
           "One step over samples with the given costs (and token counts, needed with max_tokens)")
      .def("costs_and_tokens", &Balancer::costs_and_tokens, py::arg("text_tokens"),
           py::arg("image_tokens") = py::none(), py::arg("generated_tokens") = py::none(),
           "(predicted time of each sample in seconds, its backbone tokens): what balance_costs / stream_costs take")
      .def("stream_costs", &Balancer::stream_costs, py::arg("costs"), py::arg("tokens"), py::arg("steps"),
           "stream over samples given by their costs and backbone tokens (as costs_and_tokens returns them)")
      .def("stream", &Balancer::stream, py::arg("text_tokens"), py::arg("image_tokens") = py::none(),
           py::arg("generated_tokens") = py::none(), py::arg("steps"),
           "Steps of dp x microbatches x max_tokens tokens each, carrying over what does not fit")
      .def_property_readonly("dp", [](const Balancer& b) { return b.settings().dp; })
      .def_property_readonly("microbatches", [](const Balancer& b) { return b.settings().microbatches; })
      .def_property_readonly("slots", [](const Balancer& b) { return b.settings().slots(); })
      .def_property_readonly("max_tokens", [](const Balancer& b) { return b.settings().max_tokens; })
      .def_property_readonly("method", [](const Balancer& b) { return std::string(to_string(b.settings().method)); })
      .def_property_readonly("equal_count", [](const Balancer& b) { return b.settings().count == CountMode::equal; })
      .def_property_readonly("model", &Balancer::model_name)
      .def_property_readonly("gpu", &Balancer::gpu_key);

  py::class_<PerBatchCp>(m, "PerBatchCp",
                         "Per-step context parallelism on `gpus` GPUs of a stage: cp degrees, groups and micro-batch "
                         "placement for each step, costed for `model` on `gpu` (memory cap from the memory model)")
      .def(py::init<int, const std::string&, const std::string&, const std::string&>(), py::arg("gpus"),
           py::arg("model") = kDefaultModel, py::arg("gpu") = kDefaultGpu, py::arg("recompute") = "full")
      .def("decide", &PerBatchCp::decide, py::arg("microbatches"),
           "One step: microbatches[i] lists micro-batch i's document token counts (or is one count). Returns "
           "{groups: [{cp, first_gpu, microbatches, time_s}], step_time_s, static_cp (0: heterogeneous), "
           "lower_bound_s, static_time_s: {cp: seconds or None}}")
      .def_property_readonly("gpus", &PerBatchCp::gpus)
      .def_property_readonly("degrees", &PerBatchCp::degrees, "cp degrees a group may take")
      .def_property_readonly("max_tokens_per_gpu", &PerBatchCp::max_tokens_per_gpu,
                             "memory cap: a micro-batch of T tokens needs cp >= ceil(T / cap)");

  m.def(
      "lpt",
      [](const std::vector<double>& costs, int slots, bool equal_count) {
        require_positive("slots", slots, kMaxSlots);
        return assign_longest_processing_time(finite_costs(costs), slots,
                                              equal_count ? CountMode::equal : CountMode::free);
      },
      py::arg("costs"), py::arg("slots"), py::arg("equal_count") = false,
      "Longest processing time: the slot of each item (Graham's (4/3 - 1/(3m)) bound)");
  m.def(
      "karmarkar_karp",
      [](const std::vector<double>& costs, int slots) {
        require_positive("slots", slots, kMaxSlots);
        return assign_largest_differencing(finite_costs(costs), slots);
      },
      py::arg("costs"), py::arg("slots"), "Largest differencing (Karmarkar-Karp): the slot of each item");
  m.def(
      "order_microbatches",
      [](const std::vector<double>& time_s, int stages) {
        PipelineSimulator simulator;
        const MicrobatchOrder o = order_microbatches(finite_costs(time_s), stages, simulator);
        py::dict d;
        d["order"] = o.order;
        d["makespan_s"] = o.makespan_s;
        d["given_makespan_s"] = o.given_makespan_s;
        return d;
      },
      py::arg("time_s"), py::arg("stages"), "1F1B order of one step's micro-batches, scored by the pipeline simulator");
  m.def(
      "cp_sharding",
      [](const std::vector<std::int64_t>& documents, int cp, const std::string& model, const std::string& gpu) {
        require_positive("cp", cp, kMaxSlots);
        for (std::size_t i = 0; i < documents.size(); ++i)
          if (documents[i] < 0 || documents[i] > kMaxSampleTokens)
            throw Error(fmt::format("documents[{}]", i), fmt::format("got {}", documents[i]),
                        fmt::format("a token count from 0 to {}", kMaxSampleTokens));
        const ModelSpec spec = load_model(model);
        const std::int64_t packed = std::accumulate(documents.begin(), documents.end(), std::int64_t{0});
        const SpanCost cost = backbone_span_cost(spec, find_gpu(gpu), std::max<std::int64_t>(1, packed / cp));
        const CpShardingChoice c = choose_cp_sharding(documents, cp, cost);
        py::dict d;
        d["sharding"] = to_string(c.sharding);
        d["per_sequence_s"] = c.per_sequence_s;
        d["per_document_s"] = c.per_document_s;
        d["per_sequence_rank_s"] = cp_rank_times(documents, cp, CpSharding::per_sequence, cost);
        d["per_document_rank_s"] = cp_rank_times(documents, cp, CpSharding::per_document, cost);
        return d;
      },
      py::arg("documents"), py::arg("cp"), py::arg("model") = kDefaultModel, py::arg("gpu") = kDefaultGpu,
      "Context-parallel sharding of one packed sequence: per-sequence or per-document, by predicted time");
  m.def(
      "synthetic_samples",
      [](const std::string& mix, std::int64_t n, std::uint64_t seed) {
        const auto samples = synthetic_samples(parse_synthetic_mix(mix), n, seed);
        py::list text, images, generated;
        for (const SampleTokens& s : samples) {
          text.append(py::cast(s.text_tokens));
          images.append(py::cast(s.image_tokens));
          generated.append(s.generated_tokens);
        }
        py::dict d;
        d["text_tokens"] = text;
        d["image_tokens"] = images;
        d["generated_tokens"] = generated;
        return d;
      },
      py::arg("mix"), py::arg("n"), py::arg("seed") = 0,
      "The pinned wlb-like or mllm-like samples, as keyword arguments for Balancer.balance");
  m.def(
      "permutation",
      [](std::int64_t n, std::uint64_t seed) {
        require_non_negative("n", n, kMaxSyntheticSamples);
        std::vector<std::int64_t> order(static_cast<std::size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        SeededRandom(seed).shuffle(std::span<std::int64_t>(order));
        return order;
      },
      py::arg("n"), py::arg("seed"), "0..n-1 shuffled by the balancer's seeded generator (the same everywhere)");
}

}  // namespace tessera::python
