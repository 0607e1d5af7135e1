// The two ends of a decoder's pipeline for one micro-batch: the token embedding on the first stage
// and the output layer with its loss on the last.
#pragma once

#include "cost/layer_cost.h"
#include "cost/stage_cost.h"

namespace tessera {

// Embedding: a lookup (memory-bound), vocab-parallel all-reduce (`tp_one_s`, one all-reduce of the
// micro-batch's hidden states), gradient scatter-add in fp32.
StageCost embedding_cost(const LayerContext& context, double tp_one_s);
// Output layer: final norm, logit GEMM (forward + two backward; one under LoRA, whose head is
// frozen), cross-entropy.
StageCost output_head_cost(const LayerContext& context, double tp_one_s);

}  // namespace tessera
