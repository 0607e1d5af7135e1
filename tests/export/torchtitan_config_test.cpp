#include "export/torchtitan_config.h"

#include <gtest/gtest.h>

#include "io/gpu_catalog.h"
#include "io/model_source.h"
#include "io/plan_text.h"

namespace tessera {
namespace {

TEST(TorchtitanToml, ShardsWithFsdpAndNamesTheSchedule) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:256");
  const PlanRequest r = load_plan("tp=8,pp=4,vpp=2,mb=1,gbs=512,seq=8192,recompute=full,zero=3", model, cluster);
  const std::string toml = torchtitan_toml(model, r.plan, r.workload);
  EXPECT_NE(toml.find("data_parallel_shard_degree = 8"), std::string::npos) << toml;
  EXPECT_NE(toml.find("data_parallel_replicate_degree = 1"), std::string::npos);
  EXPECT_NE(toml.find("tensor_parallel_degree = 8"), std::string::npos);
  EXPECT_NE(toml.find("pipeline_parallel_degree = 4"), std::string::npos);
  EXPECT_NE(toml.find("\"Interleaved1F1B\""), std::string::npos);
  EXPECT_NE(toml.find("mode = \"full\""), std::string::npos);
  EXPECT_NE(toml.find("local_batch_size = 64"), std::string::npos);
}

}  // namespace
}  // namespace tessera
