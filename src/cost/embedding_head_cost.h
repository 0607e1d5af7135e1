// The two ends of a decoder's pipeline for one micro-batch: the token embedding on the first stage
// and the output layer with its loss on the last.
#pragma once

#include "cost/layer_cost.h"
#include "cost/stage_cost.h"

namespace tessera {

// Bytes per element of the (vocab / tp) x hidden embedding table that each micro-batch's backward
// moves besides the scatter-add: PyTorch's dense embedding backward (F.embedding,
// aten/src/ATen/native/cuda/Embedding.cu embedding_dense_backward_cuda) returns a zero-filled
// gradient of the whole table in the gradient's dtype (fp32 for plain PyTorch's fp32 parameters,
// 16-bit otherwise); Megatron-Core then adds it into the fp32 main gradient, and plain PyTorch with
// tied embeddings sums it with the output layer's gradient. What DeepSpeed's engines do with the
// 16-bit gradient next is not modelled (megatron-deepspeed, deepspeed: the zero fill only).
double dense_embedding_gradient_bytes_per_element(TrainingFramework framework, bool tied);
// Embedding: a lookup (memory-bound), vocab-parallel all-reduce (`tp_one_s`, one all-reduce of the
// micro-batch's hidden states), gradient scatter-add in fp32, and the dense gradient above.
StageCost embedding_cost(const LayerContext& context, double tp_one_s);
// Output layer: final norm, logit GEMM (forward + two backward; one under LoRA, whose head is
// frozen), cross-entropy.
StageCost output_head_cost(const LayerContext& context, double tp_one_s);

}  // namespace tessera
