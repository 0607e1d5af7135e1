// Validation helpers: Spearman rank correlation with average ranks for ties, and the metric
// conversions of ../shared/validation/README.md §2 (percentiles: tests/core/percentile_test.cpp): a
// measured value built in the test from a known iteration time must convert back to that time.
#include "evaluation/validation.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/csv_table.h"

namespace tessera {
namespace {

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

// --- spearman --------------------------------------------------------------------------------

TEST(Spearman, PerfectAndReversedOrder) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4, 5}, {10, 20, 30, 40, 50}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4, 5}, {50, 40, 30, 20, 10}), -1.0);
  // Rank-based: any monotone transform gives 1.
  EXPECT_DOUBLE_EQ(spearman({0.1, 0.5, 0.2, 9.0}, {std::exp(0.1), std::exp(0.5), std::exp(0.2), std::exp(9.0)}), 1.0);
}

// scipy.stats.spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) = 0.8207826816681233 (scipy docs):
// ranks of b with the tie averaged are 1, 2, 3.5, 5, 3.5, so rho = 8 / sqrt(10 * 9.5).
TEST(Spearman, TiesGetAverageRanks) {
  EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 8.0 / std::sqrt(95.0), 1e-15);
  EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 0.8207826816681233, 1e-12);
}

// Without ties rho = 1 - 6 sum d^2 / (n (n^2 - 1)).
TEST(Spearman, NoTiesMatchesTheDSquaredFormula) {
  const std::vector<double> a = {3.1, 1.2, 4.4, 1.5, 9.9, 2.6, 5.3};
  const std::vector<double> b = {2.0, 7.0, 1.0, 8.0, 2.5, 8.5, 3.0};
  // Ranks a: 4 1 5 2 7 3 6; ranks b: 2 5 1 6 3 7 4.
  const double d2 = 4 + 16 + 16 + 16 + 16 + 16 + 4;
  const double n = 7;
  EXPECT_NEAR(spearman(a, b), 1.0 - 6.0 * d2 / (n * (n * n - 1.0)), 1e-12);
}

TEST(Spearman, TiesInBothSeries) {
  // a ranks: 1.5 1.5 3 4; b ranks: 1 2.5 2.5 4.
  // Pearson on ranks: mean 2.5; da = -1 -1 .5 1.5; db = -1.5 0 0 1.5;
  // cov = 1.5 + 0 + 0 + 2.25 = 3.75; va = 1 + 1 + .25 + 2.25 = 4.5; vb = 2.25 + 2.25 = 4.5.
  EXPECT_NEAR(spearman({1, 1, 2, 3}, {1, 2, 2, 3}), 3.75 / 4.5, 1e-12);
}

TEST(Spearman, DegenerateInputsAreZero) {
  EXPECT_EQ(spearman({1}, {2}), 0.0);
  EXPECT_EQ(spearman({}, {}), 0.0);
  EXPECT_EQ(spearman({1, 1, 1}, {1, 2, 3}), 0.0);
  EXPECT_EQ(spearman({1, 2}, {1, 2, 3}), 0.0);
}

// --- metric conversions ----------------------------------------------------------------------

const char* kColumns[] = {"id", "source", "model_name", "n_layers", "hidden", "ffn_hidden", "n_heads",
                          "n_kv_heads", "head_dim", "vocab", "seq_len", "mlp", "n_experts", "top_k",
                          "moe_ffn_hidden", "n_shared_experts", "n_dense_layers", "attention", "gpu",
                          "n_gpus", "gpus_per_node", "inter_node_gbps", "tp", "pp", "dp", "cp", "ep", "vpp",
                          "micro_batch", "global_batch", "sequence_parallel", "recompute", "dist_optimizer",
                          "precision", "measured_metric", "measured_value", "mfu_convention", "confidence",
                          "notes"};

using Fields = std::map<std::string, std::string>;

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string csv(const std::vector<Fields>& rows) {
  std::string text;
  for (const char* c : kColumns) text += std::string(text.empty() ? "" : ",") + c;
  text += "\n";
  for (const auto& r : rows) {
    std::string line;
    bool first = true;
    for (const char* c : kColumns) {
      if (!first) line += ",";
      first = false;
      const auto it = r.find(c);
      if (it != r.end()) line += it->second;
    }
    text += line + "\n";
  }
  return text;
}

// A GPT-style 1.7B model (SC'21 Table 1 first row shape) on one 8-GPU A100 node, every knob given.
Fields gpt_row(const std::string& id) {
  return {{"id", id},          {"source", "https://example.org"}, {"model_name", "gpt-1.7b"},
          {"n_layers", "24"},  {"hidden", "2304"},                {"ffn_hidden", "9216"},
          {"n_heads", "24"},   {"n_kv_heads", "24"},              {"vocab", "51200"},
          {"seq_len", "2048"}, {"mlp", "gelu"},                   {"attention", "mha"},
          {"gpu", "a100-sxm-80gb"}, {"n_gpus", "8"},              {"gpus_per_node", "8"},
          {"inter_node_gbps", "200"}, {"tp", "2"},                {"pp", "1"},
          {"dp", "4"},         {"cp", "1"},                       {"ep", "1"},
          {"vpp", "1"},        {"micro_batch", "1"},              {"global_batch", "64"},
          {"sequence_parallel", "yes"}, {"recompute", "full"},    {"dist_optimizer", "none"},
          {"precision", "bf16"}, {"confidence", "derived"},       {"notes", "\"synthetic, for tests\""}};
}

// A Llama-3-8B-shaped SwiGLU + GQA model on one 8-GPU H100 node.
Fields llama_row(const std::string& id, const std::string& precision) {
  Fields f = gpt_row(id);
  f["model_name"] = "llama-8b";
  f["n_layers"] = "32";
  f["hidden"] = "4096";
  f["ffn_hidden"] = "14336";
  f["n_heads"] = "32";
  f["n_kv_heads"] = "8";
  f["vocab"] = "128256";
  f["seq_len"] = "8192";
  f["mlp"] = "swiglu";
  f["attention"] = "gqa";
  f["gpu"] = "h100-sxm-80gb";
  f["inter_node_gbps"] = "400";
  f["global_batch"] = "32";
  f["precision"] = precision;
  return f;
}

// A Mixtral-8x7B-shaped MoE: every layer MoE, k = 2 of 8 experts of width 14336.
Fields moe_row(const std::string& id) {
  Fields f = llama_row(id, "bf16");
  f["model_name"] = "moe-8x7b";
  f["ffn_hidden"] = "";
  f["vocab"] = "32000";
  f["seq_len"] = "4096";
  f["n_experts"] = "8";
  f["top_k"] = "2";
  f["moe_ffn_hidden"] = "14336";
  f["ep"] = "4";
  return f;
}

// README §2.2: F_sc21 = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double sc21(double B, double s, double l, double h, double V) {
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}
// README §2.3 (mcore): F = 12 B s l h^2 [(1 + g/a + s/h)(a d/h) + (f/h) k m + V/(2 l h)], d = h/a.
double mcore(double B, double s, double l, double h, double a, double g, double f, double k, double m, double V) {
  const double d = h / a;
  return 12.0 * B * s * l * h * h * ((1.0 + g / a + s / h) * (a * d / h) + (f / h) * k * m + V / (2.0 * l * h));
}

constexpr double kT = 7.25;  // the known iteration time, seconds

struct MetricCase {
  Fields row;
  std::string metric;
  std::function<double(double)> value_of_time;  // README §2: metric value for an iteration time T
};

std::vector<MetricCase> metric_cases() {
  const double n = 8;
  // GPT: B = 64, s = 2048, l = 24, h = 2304, V = 51200; A100 peak 312 TFLOP/s (README §3).
  const double gB = 64, gs = 2048, gl = 24, gh = 2304, gV = 51200;
  // Llama: B = 32, s = 8192, l = 32, h = 4096, a = 32, g = 8, f = 14336, m = 1.5, V = 128256;
  // H100 peaks 989.4 (bf16) and 1978.9 (fp8) TFLOP/s.
  const double F_llama = mcore(32, 8192, 32, 4096, 32, 8, 14336, 1, 1.5, 128256);
  // MoE: f = 14336, k = 2, V = 32000, s = 4096.
  const double F_moe = mcore(32, 4096, 32, 4096, 32, 8, 14336, 2, 1.5, 32000);
  const double F_gpt = mcore(gB, gs, gl, gh, 24, 24, 9216, 1, 1.0, gV);
  std::vector<MetricCase> cases;
  cases.push_back({gpt_row("iter"), "iter_time_s", [](double T) { return T; }});
  cases.push_back({gpt_row("sc21"), "tflops_per_gpu_megatron",
                   [=](double T) { return sc21(gB, gs, gl, gh, gV) / (T * n) / 1e12; }});
  cases.push_back({gpt_row("mfu-gpt"), "mfu_pct", [=](double T) { return 100.0 * F_gpt / (T * n * 312e12); }});
  cases.push_back({gpt_row("tokens"), "tokens_per_s_per_gpu", [=](double T) { return gB * gs / (T * n); }});
  cases.push_back({llama_row("mfu-llama", "bf16"), "mfu_pct",
                   [=](double T) { return 100.0 * F_llama / (T * n * 989.4e12); }});
  cases.push_back({llama_row("mfu-llama-fp8", "fp8"), "mfu_pct",
                   [=](double T) { return 100.0 * F_llama / (T * n * 1978.9e12); }});
  cases.push_back({llama_row("tokens-llama", "bf16"), "tokens_per_s_per_gpu",
                   [=](double T) { return 32.0 * 8192.0 / (T * n); }});
  cases.push_back({moe_row("mfu-moe"), "mfu_pct", [=](double T) { return 100.0 * F_moe / (T * n * 989.4e12); }});
  for (auto& c : cases) {
    c.row["measured_metric"] = c.metric;
    c.row["measured_value"] = number(c.value_of_time(kT));
    if (c.metric == "mfu_pct") c.row["mfu_convention"] = "mcore";
  }
  return cases;
}

TEST(ValidationMetrics, MeasuredValueConvertsBackToItsIterationTime) {
  for (const auto& c : metric_cases()) {
    const ValidationReport r = validate_runs(parse_csv(csv({c.row}), "runs.csv"));
    ASSERT_EQ(r.rows.size(), 1u) << c.row.at("id") << (r.skipped.empty() ? "" : ": " + r.skipped[0].reason);
    const ValidationResult& v = r.rows[0];
    EXPECT_EQ(v.metric, c.metric);
    EXPECT_LT(rel_err(v.measured_time_s, kT), 1e-12) << c.row.at("id") << " measured_time_s " << v.measured_time_s;
  }
}

TEST(ValidationMetrics, PredictedValueIsTheMetricOfThePredictedTime) {
  for (const auto& c : metric_cases()) {
    const ValidationReport r = validate_runs(parse_csv(csv({c.row}), "runs.csv"));
    ASSERT_EQ(r.rows.size(), 1u) << c.row.at("id");
    const ValidationResult& v = r.rows[0];
    EXPECT_GT(v.predicted_time_s, 0.0);
    EXPECT_DOUBLE_EQ(v.predicted_time_s, v.estimate.iteration_time_s);
    EXPECT_LT(rel_err(v.predicted, c.value_of_time(v.predicted_time_s)), 1e-12) << c.row.at("id");
    EXPECT_LT(rel_err(v.measured, c.value_of_time(kT)), 1e-15) << c.row.at("id");
    EXPECT_NEAR(v.error_pct, 100.0 * (v.predicted - v.measured) / v.measured, 1e-9);
    // Throughput metrics are inversely proportional to time: error = 100 (T / T_pred - 1).
    const double expected_error = c.metric == "iter_time_s" ? 100.0 * (v.predicted_time_s / kT - 1.0)
                                                            : 100.0 * (kT / v.predicted_time_s - 1.0);
    EXPECT_NEAR(v.error_pct, expected_error, 1e-9) << c.row.at("id");
  }
}

// The same run given in every metric predicts the same time, so all four rows agree.
TEST(ValidationMetrics, AllMetricsOfOneRunAgree) {
  std::vector<Fields> rows;
  const auto cases = metric_cases();
  for (std::size_t i = 0; i < 4; ++i) rows.push_back(cases[i].row);  // the four GPT rows
  const ValidationReport r = validate_runs(parse_csv(csv(rows), "runs.csv"));
  ASSERT_EQ(r.rows.size(), 4u);
  for (const auto& v : r.rows) {
    EXPECT_LT(rel_err(v.predicted_time_s, r.rows[0].predicted_time_s), 1e-12) << v.id;
    EXPECT_LT(rel_err(v.measured_time_s, kT), 1e-12) << v.id;
  }
  // Summary over the four: n, max and median of |error|.
  std::vector<double> abs_errors;
  double max_abs = 0;
  for (const auto& v : r.rows) {
    abs_errors.push_back(std::fabs(v.error_pct));
    max_abs = std::max(max_abs, std::fabs(v.error_pct));
  }
  EXPECT_EQ(r.summary.n, 4u);
  EXPECT_DOUBLE_EQ(r.summary.max_abs_error_pct, max_abs);
  EXPECT_DOUBLE_EQ(r.summary.median_abs_error_pct, percentile(abs_errors, 50));
  EXPECT_DOUBLE_EQ(r.summary.p90_abs_error_pct, percentile(abs_errors, 90));
  // One group (same model, GPUs, batch) of 4 rows with identical predicted times: Spearman of a
  // constant series is 0 by definition.
  EXPECT_EQ(r.summary.spearman_groups, 1u);
}

TEST(ValidationMetrics, UnknownKnobsAreFilledAndReported) {
  Fields row = metric_cases()[0].row;
  for (const char* knob : {"micro_batch", "vpp", "recompute", "sequence_parallel", "dist_optimizer"}) row[knob] = "";
  const ValidationReport r = validate_runs(parse_csv(csv({row}), "runs.csv"));
  ASSERT_EQ(r.rows.size(), 1u);
  for (const char* knob : {"micro_batch", "vpp", "recompute", "sequence_parallel", "dist_optimizer"})
    EXPECT_EQ(r.rows[0].assumed.count(knob), 1u) << knob;
  EXPECT_FALSE(r.rows[0].plan.empty());
}

TEST(ValidationMetrics, BadRowsAreSkippedWithTheirId) {
  Fields bad_gpu = metric_cases()[0].row;
  bad_gpu["id"] = "bad-gpu";
  bad_gpu["gpu"] = "no-such-gpu";
  Fields bad_metric = metric_cases()[0].row;
  bad_metric["id"] = "bad-metric";
  bad_metric["measured_metric"] = "furlongs";
  Fields bad_product = metric_cases()[0].row;
  bad_product["id"] = "bad-product";
  bad_product["dp"] = "2";  // tp*pp*dp*cp = 4 != 8 GPUs
  const ValidationReport r = validate_runs(parse_csv(csv({bad_gpu, metric_cases()[0].row, bad_metric, bad_product}), "x"));
  EXPECT_EQ(r.rows.size(), 1u);
  ASSERT_EQ(r.skipped.size(), 3u);
  EXPECT_EQ(r.skipped[0].id, "bad-gpu");
  EXPECT_NE(r.skipped[0].reason.find("gpu"), std::string::npos) << r.skipped[0].reason;
  EXPECT_EQ(r.skipped[1].id, "bad-metric");
  EXPECT_NE(r.skipped[1].reason.find("measured_metric"), std::string::npos) << r.skipped[1].reason;
  EXPECT_EQ(r.skipped[2].id, "bad-product");
}

}  // namespace
}  // namespace tessera
