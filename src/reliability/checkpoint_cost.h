// What one checkpoint of a Megatron-LM job costs: its bytes, how they are spread over the ranks
// that write them, the time a save blocks training, the time until it is durable, and the load.
//
// Bytes (Megatron-LM bf16 / fp8 mixed precision with Adam; cost/memory_model.h): the 16-bit
// model weights (2 B/param) and the optimizer state: fp32 master weights and two fp32 Adam
// moments (12 B/param; Rajbhandari et al. 2020, ZeRO section 3.1). Gradients are not saved.
//
// Who writes (Megatron-Core dist_checkpointing, ckpt-format torch_dist, Megatron-LM d98e8a64
// training_config.py `fully_parallel_save`, default on):
//   - fully parallel save (default): replicated tensors are deduplicated and their writes spread
//     over the data-parallel replicas, so every GPU writes total / GPUs;
//   - without it (--no-ckpt-fully-parallel-save): a replicated tensor is written by its first
//     replica: the weights by the tp x pp ranks of data-parallel rank 0 (cp rank 0); the
//     optimizer state is sharded over the data-parallel (x cp) ranks by the distributed optimizer
//     (zero >= 1: every GPU writes its shard), else written by those same tp x pp ranks.
// A save's write time is the slower of the file system (total / aggregate write bandwidth) and
// the busiest node (its bytes / one node's write bandwidth). Asynchronous save
// (--async-save): training blocks only for the device-to-host copy of the busiest GPU's bytes;
// the write runs in the background and must finish before the next save starts.
// Load: every rank reads its part, the file system's aggregate read bandwidth bound.
#pragma once

#include <cstdint>

#include "model/model_spec.h"
#include "plan/plan.h"
#include "reliability/storage_spec.h"

namespace tessera {

struct CheckpointSave {
  bool fully_parallel = true;  // Megatron's default; false = --no-ckpt-fully-parallel-save
  bool async = false;          // --async-save (with --use-persistent-ckpt-worker)
};

struct CheckpointCost {
  double total_bytes = 0;
  double weight_bytes = 0;
  double optimizer_bytes = 0;
  std::int64_t writers = 0;        // ranks that write weights
  double max_rank_bytes = 0;       // the busiest rank's bytes
  double max_node_bytes = 0;       // the busiest node's bytes
  double write_s = 0;              // until durable
  double blocking_s = 0;           // training stalled per save (write_s unless async)
  double load_s = 0;
};

CheckpointCost checkpoint_cost(const ModelSpec& model, const Plan& plan, std::int64_t gpus_per_node,
                               const StorageSpec& storage, const CheckpointSave& save);

}  // namespace tessera
