// The data-parallel collectives that overlap cannot hide: the bucket that holds the embedding.
// Buckets fill in backprop order (params[::-1] in Megatron-Core's param_and_grad_buffer.py,
// _compute_default_per_buffer_param_layout, at d98e8a64; PyTorch DDP's reducer likewise), so the
// embedding, registered first, is in the last bucket: its gradient is complete only when the
// backward ends, so its reduction has nothing left to hide under, and the next forward needs its
// weights first, so its all-gather is dispatched and waited on at that forward's first module
// (finish_param_sync: "first AG bucket in first model chunk"). Under ZeRO-3 it is likewise the
// unit gathered first and reduced last, every micro-batch.
#pragma once

#include <cstdint>

#include "cost/collective_cost.h"
#include "plan/plan.h"

namespace tessera {

struct EmbeddingBucket {
  double reduce_s = 0;  // the fp32 gradients' all-reduce (no sharding) or reduce-scatter
  double gather_s = 0;  // the 16-bit weights' all-gather
};

// `params`: the embedding's parameters on one GPU (vocab-parallel: / tp); 0 when it is frozen
// (LoRA trains only the adapters), which exposes nothing.
EmbeddingBucket embedding_bucket(double params, OptimizerSharding zero, std::int64_t ranks, const GroupLink& link);

}  // namespace tessera
