// What a change of configuration costs a running job.
//   - Global batch only (same plan): Megatron-LM changes the number of micro-batches per step
//     between two steps with no restart (what its --rampup-batch-size does), so it is free.
//   - Any other plan change: save a checkpoint, restart with the new layout, load (resharding) it:
//     checkpoint bytes / storage bandwidth twice, plus the restart itself.
// The checkpoint holds what a restart needs: 16-bit weights, fp32 master weights and the two Adam
// moments (cost/memory_model.h: 2 + 12 bytes per parameter; Rajbhandari et al. 2020 section 3.1).
#pragma once

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Checkpoint storage bandwidth per GPU. Llama 3 (arXiv 2407.21783, section 3.3.1): Meta's Tectonic
// file system serves 2 TB/s sustained to the training job of up to 16,384 GPUs, 122 MB/s per GPU;
// distributed checkpoints write and read one shard per rank, so a job gets this times its GPUs.
inline constexpr double kCheckpointBytesPerSPerGpu = 2.0e12 / 16384.0;
// Relaunch, communicator setup, data-loader start and warm-up steps, checkpoint I/O excluded. A
// documented assumption: TrainMover (Lao et al., arXiv 2412.12636) measures about 20 s of downtime
// with standby machines at 1,024 GPUs and checkpoint-restart baselines up to ~70x slower; we take
// 5 minutes, the low end of that range.
inline constexpr double kRestartTimeS = 300.0;
// A batch-size-only change between two steps.
inline constexpr double kBatchChangeTimeS = 0.0;

struct ReconfigurationCost {
  double batch_change_s = kBatchChangeTimeS;
  double plan_change_s = 0;     // checkpoint save + restart + load
  double checkpoint_bytes = 0;  // whole job
};

ReconfigurationCost reconfiguration_cost(const ModelSpec& model, const Cluster& cluster);

// 0 for the same plan and batch, batch_change_s for the same plan at another batch, else
// plan_change_s.
double switch_time_s(const ReconfigurationCost& cost, const Plan& from, std::int64_t from_batch, const Plan& to,
                     std::int64_t to_batch);

}  // namespace tessera
