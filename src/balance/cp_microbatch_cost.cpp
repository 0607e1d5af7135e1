#include "balance/cp_microbatch_cost.h"

#include <algorithm>

#include "balance/context_parallel_sharding.h"
#include "balance/sample_cost.h"
#include "core/error.h"
#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "cost/memory_model.h"

namespace tessera {

namespace {

constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
// Upper end of the cap's binary search: 2^30 tokens per GPU (kMaxSampleTokens).
constexpr std::int64_t kMaxCapTokens = kMaxSampleTokens;

// Training-time multipliers of GEMMs and attention when the backward re-runs part of the forward:
// full recompute re-runs every forward GEMM (one of kGemmTrainingOverForward passes) and the
// attention forward (one of kFlashTrainingOverForward); selective re-runs the attention core only
// (Korthikanti et al. 2022, §5).
double linear_recompute_factor(Recompute r) {
  return r == Recompute::full ? (kGemmTrainingOverForward + 1.0) / kGemmTrainingOverForward : 1.0;
}
double attention_recompute_factor(Recompute r) {
  return r == Recompute::none ? 1.0 : (kFlashTrainingOverForward + 1.0) / kFlashTrainingOverForward;
}
// Forward passes the ring runs per training step of a layer: forward, and again under recompute.
double ring_forward_passes(Recompute r) { return r == Recompute::full ? 2.0 : 1.0; }

bool stage_fits(const ModelSpec& model, const GpuSpec& gpu, std::int64_t gpus, Recompute recompute,
                std::int64_t tokens) {
  Plan plan;
  plan.dp = gpus;  // cp = 1 with `tokens` per sequence: the same per-GPU shape as cp c with c x tokens
  plan.zero = OptimizerSharding::zero1;
  plan.recompute = recompute;
  const Workload workload{gpus, tokens};
  StageShape stage;
  stage.layers = model.layers;
  stage.has_embedding = true;
  stage.has_output_head = true;
  stage.inflight_microbatches = 1;
  return stage_memory(model, plan, workload, stage, gpu).total() <= gpu.usable_memory_gib * kBytesPerGib;
}

// Rounds every document up to a multiple of `multiple` tokens (THD format under cp).
void pad_documents(std::span<const std::int64_t> documents, std::int64_t multiple, std::vector<std::int64_t>& out) {
  out.clear();
  for (std::int64_t d : documents) out.push_back((d + multiple - 1) / multiple * multiple);
}

}  // namespace

SpanCost CpCostModel::span_cost(double tokens_per_gpu) const {
  const double h = static_cast<double>(hidden);
  const double m = std::max(1.0, tokens_per_gpu);
  const double ratio = gemm_efficiency(static_cast<double>(reference_tokens), h, h, cluster.gpu, kSampleCostFp8) /
                       gemm_efficiency(m, h, h, cluster.gpu, kSampleCostFp8);
  SpanCost cost = reference;
  cost.linear_s_per_token *= ratio * linear_recompute_factor(recompute);
  cost.attention_s_per_pair *= attention_recompute_factor(recompute);
  return cost;
}

int CpCostModel::min_degree(std::int64_t tokens) const {
  return static_cast<int>(std::max<std::int64_t>(1, (tokens + max_tokens_per_gpu - 1) / max_tokens_per_gpu));
}

std::int64_t max_tokens_per_gpu(const ModelSpec& model, const GpuSpec& gpu, std::int64_t gpus, Recompute recompute) {
  if (!stage_fits(model, gpu, gpus, recompute, kMinCapTokens))
    throw Error("gpus", "the model's weights, gradients and optimizer state leave no room for activations",
                "more GPUs (ZeRO-1 shards the optimizer over them) or a smaller model");
  std::int64_t lo = kMinCapTokens, hi = kMaxCapTokens;  // fits(lo), and hi is the search's ceiling
  if (stage_fits(model, gpu, gpus, recompute, hi)) return hi;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (stage_fits(model, gpu, gpus, recompute, mid) ? lo : hi) = mid;
  }
  return lo;
}

CpCostModel make_cp_cost_model(const ModelSpec& model, const Cluster& cluster, std::int64_t gpus, Recompute recompute) {
  CpCostModel m;
  m.reference_tokens = model.max_context;
  m.reference = backbone_span_cost(model, cluster.gpu, m.reference_tokens);
  m.cluster = cluster;
  m.hidden = model.hidden;
  m.layers = model.layers;
  m.kv_bytes_per_token_layer = kKvBytesPerElement * 2.0 * static_cast<double>(model.kv_heads * model.head_dim);
  m.recompute = recompute;
  m.max_tokens_per_gpu = max_tokens_per_gpu(model, cluster.gpu, gpus, recompute);
  return m;
}

CpMicrobatchTime cp_microbatch_time(const CpCostModel& model, std::span<const std::int64_t> documents, int cp,
                                    CpCostScratch& scratch) {
  const std::int64_t multiple = 2LL * cp;  // Megatron / TE: seq % (2 cp) == 0
  std::int64_t tokens = 0;
  for (std::int64_t d : documents) tokens += d;
  const std::int64_t padded_tokens = (tokens + multiple - 1) / multiple * multiple;
  const double tokens_per_gpu = static_cast<double>(padded_tokens) / cp;
  const SpanCost cost = model.span_cost(tokens_per_gpu);
  scratch.rank_s.resize(static_cast<std::size_t>(cp));
  // Per sequence: the packed sequence padded at its end (the pad is one more document).
  scratch.padded.assign(documents.begin(), documents.end());
  if (padded_tokens > tokens) scratch.padded.push_back(padded_tokens - tokens);
  cp_rank_times_into(scratch.padded, CpSharding::per_sequence, cost, scratch.rank_s);
  double slowest_s = *std::max_element(scratch.rank_s.begin(), scratch.rank_s.end());
  pad_documents(documents, multiple, scratch.padded);
  std::int64_t doc_padded_tokens = 0;
  for (std::int64_t d : scratch.padded) doc_padded_tokens += d;
  cp_rank_times_into(scratch.padded, CpSharding::per_document, cost, scratch.rank_s);
  double rank_tokens = tokens_per_gpu;
  const double per_document_s = *std::max_element(scratch.rank_s.begin(), scratch.rank_s.end());
  if (per_document_s < slowest_s) {
    slowest_s = per_document_s;
    rank_tokens = static_cast<double>(doc_padded_tokens) / cp;
  }
  CpMicrobatchTime t;
  t.compute_s = slowest_s;
  const double layers = static_cast<double>(model.layers);
  if (cp > 1) {
    // Both splits give every rank the same tokens, so the slowest rank's attention is its time
    // less its GEMMs; per layer and pass it hides the ring (layer_cost.cpp's overlap rule).
    const double attention_s = std::max(0.0, slowest_s - cost.linear_s_per_token * rank_tokens);
    const double attention_fwd_layer_s =
        attention_s / (layers * kFlashTrainingOverForward * attention_recompute_factor(model.recompute));
    const double attention_bwd_layer_s = attention_fwd_layer_s * (kFlashTrainingOverForward - 1.0);
    const GroupLink link = group_link(model.cluster, 1, cp);
    const double ring_fwd_s =
        static_cast<double>(cp - 1) * p2p_time_s(model.kv_bytes_per_token_layer * rank_tokens, link);
    const double per_layer_s =
        ring_forward_passes(model.recompute) * std::max(0.0, ring_fwd_s - attention_fwd_layer_s) +
        std::max(0.0, kRingBackwardOverForward * ring_fwd_s - attention_bwd_layer_s);
    t.exposed_ring_s = layers * per_layer_s;
    const double passes = ring_forward_passes(model.recompute) + 1.0;
    t.launch_s = layers * passes * static_cast<double>(cp - 1) * kRingStepKernels * model.cluster.gpu.kernel_overhead_s;
  }
  const double host_layer_fwd_s = kHostOpsPerLayerForward * model.cluster.gpu.host_op_dispatch_s;
  const double host_ring_s = kRingStepHostOps * static_cast<double>(cp - 1) * model.cluster.gpu.host_op_dispatch_s;
  t.host_s =
      layers * ((host_layer_fwd_s + host_ring_s) * (ring_forward_passes(model.recompute) + kHostBackwardOverForward));
  t.total_s = std::max(t.compute_s + t.exposed_ring_s + t.launch_s, t.host_s);
  return t;
}

}  // namespace tessera
