#include "calibrate/calibration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

// Runs of gpt3-1.7b on one A100 node: layouts that weigh the GEMM, host and NVLink terms differently.
std::vector<RunMeasurement> runs_on(const GpuSpec& catalog) {
  std::vector<RunMeasurement> out;
  const ModelSpec model = builtin_model("gpt3-1.7b");
  const char* plans[] = {"tp=1,pp=1,mb=4,gbs=32,seq=2048", "tp=2,pp=1,mb=2,gbs=32,seq=2048",
                         "tp=4,pp=2,mb=1,gbs=32,seq=2048", "tp=8,pp=1,mb=8,gbs=64,seq=2048",
                         "tp=2,pp=2,mb=1,gbs=16,seq=2048", "tp=1,pp=4,mb=2,gbs=64,seq=2048"};
  for (const char* text : plans) {
    RunMeasurement run;
    run.id = text;
    run.model = model;
    run.gpu = catalog;
    run.shape = {8, 8, 0};
    const PlanRequest request = load_plan(text, model, cluster_for(catalog, run.shape));
    run.plan = request.plan;
    run.workload = request.workload;
    out.push_back(run);
  }
  return out;
}

// Measurements made on a "true" GPU: each run's time is the cost model's with the true values.
CalibrationData measured_on(const GpuSpec& catalog, const GpuSpec& truth) {
  CalibrationData data;
  data.runs = runs_on(catalog);
  for (auto& run : data.runs) run.iteration_time_s = predict_iteration_time_s(run, truth);
  return data;
}

// Synthetic measurements are exact: without the prior the fit must land on the truth.
CalibrationOptions exact() {
  CalibrationOptions o;
  o.prior_sigma = 0;
  return o;
}

const ParameterFit& fit_of(const CalibrationProfile& p, const std::string& name) {
  for (const auto& f : p.parameters)
    if (f.name == name) return f;
  throw std::runtime_error("no parameter " + name);
}

TEST(Calibration, RecoversASlowerGemmRateFromIterationTimes) {
  const GpuSpec catalog = find_gpu("a100-sxm-80gb");
  GpuSpec truth = catalog;
  truth.gemm_efficiency = 0.9 * catalog.gemm_efficiency;  // a power-capped node
  const CalibrationProfile p = calibrate(measured_on(catalog, truth), exact());
  const ParameterFit& gemm = fit_of(p, "gemm_efficiency");
  EXPECT_EQ(gemm.status, ParameterStatus::fitted);
  EXPECT_NEAR(gemm.fitted / truth.gemm_efficiency, 1.0, 0.02);
  EXPECT_GT(p.median_abs_error_before_pct, 3.0);
  EXPECT_LT(p.median_abs_error_after_pct, 0.5);
  for (const auto& row : p.measurements) EXPECT_LT(std::abs(row.error_after_pct()), 1.5) << row.id;
}

TEST(Calibration, NcclBenchmarksAloneMoveOnlyCommunicationParameters) {
  const GpuSpec catalog = find_gpu("h100-sxm-80gb");
  GpuSpec truth = catalog;
  // A slower scale-out network (NICs at 60% of the catalog's bus bandwidth, 3x the latency):
  // single-node rows stay as predicted, 4-node rows are bound by the NICs.
  truth.network_efficiency = 0.6 * catalog.network_efficiency;
  truth.network_latency_s = 3 * catalog.network_latency_s;
  CalibrationData data;
  for (std::int64_t nodes : {1, 4})
    for (double bytes = 1 << 10; bytes <= 1e9; bytes *= 8) {
      CollectiveMeasurement c{"all_reduce", catalog, CollectiveKind::all_reduce, bytes, nodes, 8, 0, 0};
      c.time_s = predict_collective_time_s(c, truth);
      data.collectives.push_back(c);
    }
  const CalibrationProfile p = calibrate(data, exact());
  ASSERT_EQ(p.gpus.size(), 1u);
  for (const auto& def : calibration_parameters()) {
    const ParameterFit& f = fit_of(p, std::string(def.name));
    if (def.term != ParameterTerm::communication)
      EXPECT_EQ(p.gpus[0].*def.field, catalog.*def.field) << def.name;  // exactly the catalog
    else
      EXPECT_NE(f.status, ParameterStatus::not_measured) << def.name;
  }
  EXPECT_NEAR(p.gpus[0].network_latency_s / truth.network_latency_s, 1.0, 0.05);
  EXPECT_NEAR(p.gpus[0].network_efficiency / truth.network_efficiency, 1.0, 0.02);
  EXPECT_LT(p.median_abs_error_after_pct, 1.0);
}

TEST(Calibration, GemmSweepRecoversTheShapeCurve) {
  const GpuSpec catalog = find_gpu("h100-sxm-80gb");
  GpuSpec truth = catalog;
  truth.gemm_efficiency = 0.66;
  truth.gemm_half_dim = 1.5 * catalog.gemm_half_dim;
  CalibrationData data;
  for (double d : {256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0}) {
    GemmMeasurement g{"gemm", catalog, d, d, d, false, 0};
    g.tflops = predict_gemm_tflops(g, truth);
    data.gemms.push_back(g);
  }
  const CalibrationProfile p = calibrate(data, exact());
  EXPECT_NEAR(p.gpus[0].gemm_efficiency / 0.66, 1.0, 0.02);
  EXPECT_NEAR(p.gpus[0].gemm_half_dim / truth.gemm_half_dim, 1.0, 0.05);
  EXPECT_EQ(fit_of(p, "nvlink_efficiency").status, ParameterStatus::not_identified);
}

// The profile keeps the dense GEMMs it measured: a shape the curve misprices (one cuBLAS pick
// slower than its neighbours) is priced at its measurement, the runs fitted after the GEMM stage
// see that price, and grouped GEMM rows stay with the curve.
TEST(Calibration, DenseGemmRowsBecomeTheProfilesMeasuredTable) {
  const GpuSpec catalog = find_gpu("h100-sxm-80gb");
  CalibrationData data;
  for (double d : {1024.0, 2048.0, 4096.0, 8192.0}) {
    GemmMeasurement g{"gemm", catalog, d, d, d, false, 0};
    g.tflops = predict_gemm_tflops(g, catalog);
    data.gemms.push_back(g);
  }
  data.gemms[2].tflops *= 0.8;  // 4096^3 runs 20% below the curve
  GemmMeasurement grouped{"grouped", catalog, 1024, 4096, 4096, false, 0, 8};
  grouped.tflops = predict_gemm_tflops(grouped, catalog);
  data.gemms.push_back(grouped);
  const CalibrationProfile p = calibrate(data);
  const GpuSpec& fitted = p.gpus.at(0);
  ASSERT_EQ(fitted.measured_gemms.size(), 4u);  // the grouped row is not in the table
  GemmMeasurement slow = data.gemms[2];
  EXPECT_NEAR(predict_gemm_tflops(slow, fitted) / slow.tflops, 1.0, 0.01);
  // The report's "after" is the curve's: the table would hide how well the curve fits.
  const auto slow_row = std::find_if(p.measurements.begin(), p.measurements.end(), [&](const MeasurementFit& row) {
    return row.id == "gemm" && row.measured == slow.tflops;
  });
  ASSERT_NE(slow_row, p.measurements.end());
  EXPECT_GT(slow_row->after / slow_row->measured, 1.05);
}

TEST(Calibration, KernelTimingsRecoverHbmRateKernelCostAndHostDispatch) {
  // Memory-bound calls from 64 KiB (launch-bound) to 1 GiB (bandwidth-bound) and a dispatch row: each
  // term is seen where it dominates, so all three come back, and nothing a GEMM sets moves. The
  // dispatch row fixes the host's time first (its own stage); alone, the host's share of small
  // calls would be confounded with the launches and with how the two overlap.
  const GpuSpec catalog = find_gpu("h200");
  GpuSpec truth = catalog;
  truth.hbm_efficiency = 0.70;
  truth.kernel_overhead_s = 7e-6;
  truth.host_op_dispatch_s = 12e-6;
  CalibrationData data;
  for (double bytes = 65536; bytes <= 1.1e9; bytes *= 4)
    for (double kernels : {1.0, 6.0}) {
      KernelMeasurement k{"k", catalog, bytes, kernels, false, 0};
      k.time_s = predict_kernel_time_s(k, truth);
      data.kernels.push_back(k);
    }
  KernelMeasurement dispatch{"dispatch", catalog, 0, 1, true, 0};
  dispatch.time_s = predict_kernel_time_s(dispatch, truth);
  data.kernels.push_back(dispatch);
  const CalibrationProfile p = calibrate(data, exact());
  EXPECT_NEAR(p.gpus[0].hbm_efficiency / 0.70, 1.0, 0.02);
  EXPECT_NEAR(p.gpus[0].kernel_overhead_s / 7e-6, 1.0, 0.05);
  EXPECT_NEAR(p.gpus[0].host_op_dispatch_s / 12e-6, 1.0, 0.02);
  EXPECT_EQ(fit_of(p, "gemm_efficiency").status, ParameterStatus::not_identified);
  EXPECT_EQ(p.gpus[0].gemm_efficiency, catalog.gemm_efficiency);
}

TEST(Calibration, AttentionTimingsRecoverTheAttentionRate) {
  // Causal calls of 2K-16K tokens forward and forward + backward (the shapes of h200/attention.csv).
  const GpuSpec catalog = find_gpu("h200");
  GpuSpec truth = catalog;
  truth.attention_efficiency = 0.85 * catalog.attention_efficiency;
  CalibrationData data;
  for (double seq : {2048.0, 4096.0, 8192.0, 16384.0})
    for (bool backward : {false, true}) {
      AttentionMeasurement a{"a", catalog, 16384.0 / seq, 32, seq, 128, true, backward, 0};
      a.time_s = predict_attention_time_s(a, truth);
      data.attention.push_back(a);
    }
  const CalibrationProfile p = calibrate(data, exact());
  EXPECT_NEAR(p.gpus[0].attention_efficiency / truth.attention_efficiency, 1.0, 0.01);
  EXPECT_EQ(fit_of(p, "gemm_efficiency").status, ParameterStatus::not_identified);
  // Forward + backward is 3.5 forwards (FlashAttention-2's five matmuls against two).
  AttentionMeasurement forward = data.attention[0], both = data.attention[1];
  EXPECT_NEAR(predict_attention_time_s(both, catalog) / predict_attention_time_s(forward, catalog), 3.5, 1e-12);
  // Causal halves the work (up to the diagonal): 2 b h s (s + 1) d FLOPs.
  forward.causal = false;
  EXPECT_GT(predict_attention_time_s(forward, catalog), 1.9 * predict_attention_time_s(data.attention[0], catalog));
}

TEST(Calibration, NothingIdentifiedWhenTheDataCannotMoveAParameter) {
  // The catalog's own predictions: nothing to move, and identified_parameters says so.
  const GpuSpec catalog = find_gpu("h200");
  CalibrationData data;
  for (double d : {1024.0, 4096.0}) {
    GemmMeasurement g{"gemm", catalog, d, d, d, false, 0};
    g.tflops = predict_gemm_tflops(g, catalog);
    data.gemms.push_back(g);
  }
  EXPECT_TRUE(identified_parameters(calibrate(data)).empty());
  data.gemms[0].tflops *= 0.8;
  data.gemms[1].tflops *= 0.8;
  EXPECT_EQ(identified_parameters(calibrate(data)), std::vector<std::string>{"h200.gemm_efficiency"});
}

TEST(Calibration, PeakMemoryFitsTheReserveAsTheMedianGap) {
  const GpuSpec catalog = find_gpu("a100-sxm-80gb");
  CalibrationData data = measured_on(catalog, catalog);
  const double gaps[] = {2.0, 2.5, 1.5, 9.0, 2.0, 2.25};  // one odd run (9 GiB) does not move the median
  for (std::size_t i = 0; i < data.runs.size(); ++i)
    data.runs[i].peak_memory_gib = predict_peak_memory_gib(data.runs[i], catalog) + gaps[i];
  const CalibrationProfile p = calibrate(data);
  EXPECT_NEAR(p.gpus[0].memory_reserve_gib, 2.125, 1e-9);  // median of the gaps
  EXPECT_EQ(fit_of(p, "memory_reserve_gib").status, ParameterStatus::fitted);
}

TEST(Calibration, WithoutPeaksTheReserveIsNotMeasured) {
  const GpuSpec catalog = find_gpu("a100-sxm-80gb");
  const CalibrationProfile p = calibrate(measured_on(catalog, catalog));
  EXPECT_EQ(fit_of(p, "memory_reserve_gib").status, ParameterStatus::not_measured);
  EXPECT_EQ(p.gpus[0].memory_reserve_gib, catalog.memory_reserve_gib);
  EXPECT_LT(p.median_abs_error_after_pct, 1e-6);  // the catalog is the truth: nothing to move
}

TEST(Calibration, RejectsEmptyAndNonPositiveMeasurements) {
  EXPECT_THROW(calibrate(CalibrationData{}), Error);
  const GpuSpec catalog = find_gpu("a100-sxm-80gb");
  CalibrationData data = measured_on(catalog, catalog);
  data.runs[2].iteration_time_s = -1.0;
  try {
    calibrate(data);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(data.runs[2].id), std::string::npos);
  }
}

TEST(Calibration, OnlineTermsRestrictWhatMoves) {
  const GpuSpec catalog = find_gpu("a100-sxm-80gb");
  GpuSpec truth = catalog;
  truth.gemm_efficiency *= 0.9;
  truth.nvlink_efficiency *= 0.7;
  CalibrationOptions options;
  options.terms = {ParameterTerm::compute, ParameterTerm::host};
  const CalibrationProfile p = calibrate(measured_on(catalog, truth), options);
  EXPECT_EQ(p.gpus[0].nvlink_efficiency, catalog.nvlink_efficiency);
  EXPECT_NE(p.gpus[0].gemm_efficiency, catalog.gemm_efficiency);
}

}  // namespace
}  // namespace tessera
