// Peak memory against torchtitan's published peaks (pytorch/torchtitan 9dec370,
// benchmarks/llama3_h100_202412_torchtitan.md: Grand Teton H100 96 GB hosts, the caching
// allocator's peak reserved memory, maximum over GPUs). The plans are those of
// scripts/memory_validation.py, which prints the same comparison.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/units.h"
#include "cost/cost_model.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

struct PublishedPeak {
  const char* label;
  const char* model;
  int gpus;
  const char* plan;
  double published_gib;
};

double predicted_gib(const PublishedPeak& run) {
  const ModelSpec m = builtin_model(run.model);
  const Cluster c = make_cluster(find_gpu("h100-96gb-500w"), run.gpus);
  const PlanRequest r = load_plan(std::string(run.plan) + ",framework=torchtitan", m, c);
  return estimate(m, c, r.plan, r.workload).peak_memory_bytes / units::kGiB;
}

// Tables 1-4: FSDP2 alone and with context parallelism (tp 1), and FSDP2 x TP 8, whose loss runs
// under loss parallel (16 bytes per logit of the vocabulary shard: memory_model.cpp).
TEST(TorchtitanPublishedMemory, FsdpCpAndTensorParallelRunsWithinFivePercent) {
  const PublishedPeak runs[] = {
      {"T1 8B FSDP8 sel-AC", "llama3-8b", 8, "tp=1,mb=2,gbs=16,seq=8192,recompute=selective,zero=3", 82.4},
      {"T3 8B FSDP128 sel-AC", "llama3-8b", 128, "tp=1,mb=2,gbs=256,seq=8192,recompute=selective,zero=3", 67.0},
      {"T2 8B CP1 32K", "llama3-8b", 8, "tp=1,cp=1,mb=1,gbs=8,seq=32768,recompute=full,zero=3,precision=fp8", 83.9},
      {"T2 8B CP4 128K", "llama3-8b", 8, "tp=1,cp=4,mb=1,gbs=2,seq=131072,recompute=full,zero=3,precision=fp8", 84.0},
      {"T4 70B FSDP32 TP8", "llama3-70b", 256,
       "tp=8,sp=1,mb=16,gbs=512,seq=8192,recompute=full,zero=3,precision=fp8", 71.9},
  };
  for (const PublishedPeak& run : runs) {
    const double got = predicted_gib(run);
    EXPECT_LT(std::fabs(got - run.published_gib) / run.published_gib, 0.05) << run.label << ": " << got << " GiB";
  }
}

// Table 5, 405B over FSDP 8 x TP 8 x PP 8 (1F1B, 8 micro-batches of 4): the last stage holds the
// loss-parallel logits and every micro-batch's output logits (output_chunks). What the model
// counts is established from the code and is a lower bound; the published 82.5 GiB is still
// about 17% above it (the same run interleaved measured 72.7 GiB, less, where the in-flight
// micro-batches say more: not a tensor of the schedule; README "Peak memory").
TEST(TorchtitanPublishedMemory, PipelinedFourHundredFiveBillionIsALowerBound) {
  const PublishedPeak t5{"T5 405B FSDP8 TP8 PP8", "llama3.1-405b", 512,
                         "tp=8,sp=1,pp=8,mb=4,gbs=256,seq=8192,recompute=full,zero=3,reshard=0,precision=fp8", 82.5};
  const double got = predicted_gib(t5);
  EXPECT_LT(got, t5.published_gib);
  EXPECT_GT(got, 0.8 * t5.published_gib);
}

}  // namespace
}  // namespace tessera
