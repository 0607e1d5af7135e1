#include <gtest/gtest.h>

#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "model/parameter_count.h"
#include "reliability/checkpoint_cost.h"

namespace tessera {
namespace {

Plan layout(std::int64_t tp, std::int64_t pp, std::int64_t dp, OptimizerSharding zero) {
  Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.zero = zero;
  return p;
}

// 14 bytes per parameter: bf16 weights + fp32 master + two fp32 Adam moments. Llama 3 405B on
// 16,384 GPUs: ~5.7 TB, ~350 MB per GPU, inside the 1 MB - 4 GB per GPU the Llama 3 paper gives
// (arXiv 2407.21783, section 3.3.1); at 2 TB/s a fully parallel save takes total / 2 TB/s.
TEST(CheckpointCost, FullyParallelSaveSpreadsTheBytesOverEveryGpu) {
  const ModelSpec m = load_model("llama3.1-405b");
  const double params = count_parameters(m).total();
  const CheckpointCost c = checkpoint_cost(m, layout(8, 16, 128, OptimizerSharding::zero1), 8, StorageSpec{}, {});
  EXPECT_DOUBLE_EQ(c.total_bytes, 14.0 * params);
  EXPECT_DOUBLE_EQ(c.weight_bytes + c.optimizer_bytes, c.total_bytes);
  EXPECT_EQ(c.writers, 16384);
  EXPECT_DOUBLE_EQ(c.max_rank_bytes * 16384, c.total_bytes);
  EXPECT_GT(c.max_rank_bytes, 1e6);
  EXPECT_LT(c.max_rank_bytes, 4e9);
  EXPECT_NEAR(c.write_s, c.total_bytes / 2e12, 1e-9);
  EXPECT_DOUBLE_EQ(c.blocking_s, c.write_s);
  EXPECT_NEAR(c.load_s, c.total_bytes / 2e12, 1e-9);
}

// Without fully parallel save the first replica's tp x pp ranks write the weights: more
// model-parallel ranks, more writers, less on the busiest node; the distributed optimizer
// spreads the optimizer state over every GPU, so zero1 writes less per writer than no sharding.
TEST(CheckpointCost, FirstReplicaWritesWithoutFullyParallelSave) {
  const ModelSpec m = load_model("llama3-70b");
  const CheckpointSave first_replica{false, false};
  const StorageSpec s;
  const auto narrow = checkpoint_cost(m, layout(8, 1, 128, OptimizerSharding::zero1), 8, s, first_replica);
  const auto wide = checkpoint_cost(m, layout(8, 8, 16, OptimizerSharding::zero1), 8, s, first_replica);
  EXPECT_EQ(narrow.writers, 8);
  EXPECT_EQ(wide.writers, 64);
  // One node holds all of narrow's weight writers: its write is the node's bandwidth bound.
  EXPECT_NEAR(narrow.max_node_bytes, narrow.weight_bytes + 8 * narrow.optimizer_bytes / 1024, 1.0);
  EXPECT_NEAR(narrow.write_s, narrow.max_node_bytes / 25e9, 1e-9);
  EXPECT_GT(narrow.write_s, 4 * wide.write_s);
  const auto unsharded = checkpoint_cost(m, layout(8, 8, 16, OptimizerSharding::none), 8, s, first_replica);
  EXPECT_NEAR(unsharded.max_rank_bytes, unsharded.total_bytes / 64, 1.0);
  EXPECT_GT(unsharded.write_s, wide.write_s);
}

// An asynchronous save blocks only for the device-to-host copy; the write takes as long.
TEST(CheckpointCost, AsyncSaveBlocksOnlyForTheCopy) {
  const ModelSpec m = load_model("llama3-70b");
  const auto sync = checkpoint_cost(m, layout(8, 4, 32, OptimizerSharding::zero1), 8, StorageSpec{}, {true, false});
  const auto async = checkpoint_cost(m, layout(8, 4, 32, OptimizerSharding::zero1), 8, StorageSpec{}, {true, true});
  EXPECT_DOUBLE_EQ(async.write_s, sync.write_s);
  EXPECT_NEAR(async.blocking_s, async.max_rank_bytes / 64e9, 1e-12);
  EXPECT_LT(async.blocking_s, sync.blocking_s);
}

TEST(CheckpointCost, BadStorageNamesTheField) {
  const ModelSpec m = load_model("llama3-8b");
  StorageSpec s;
  s.write_gbps = 0;
  EXPECT_EQ(testing::thrown_field([&] { checkpoint_cost(m, layout(1, 1, 8, OptimizerSharding::none), 8, s, {}); }),
            "storage.write_gbps");
  s = StorageSpec{};
  s.device_to_host_gbps = 1e300;
  EXPECT_EQ(testing::thrown_field([&] { checkpoint_cost(m, layout(1, 1, 8, OptimizerSharding::none), 8, s, {}); }),
            "storage.device_to_host_gbps");
}

}  // namespace
}  // namespace tessera
