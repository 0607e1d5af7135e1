// The built-in GPU catalog against the published figures of ../shared/validation/README.md §3,
// the --cluster shorthand / cluster JSON (inline GPU objects too), forgiving GPU names, and the
// user-GPU registry behind --gpu-file (clashes, idempotence, the B200-like example end to end).
#include "catalog/gpu_catalog.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "catalog/model_source.h"
#include "core/error.h"
#include "cost/cost_model.h"
#include "evaluation/validation.h"
#include "formats/json_fields.h"
#include "search/planner.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tessera {
namespace {

using i64 = std::int64_t;

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

using testing::thrown_field;

TEST(GpuCatalog, EveryGpuValidatesAndKeysAreUnique) {
  std::set<std::string> keys;
  ASSERT_FALSE(gpu_catalog().empty());
  for (const auto& g : gpu_catalog()) {
    EXPECT_NO_THROW(g.validate()) << g.key;
    EXPECT_TRUE(keys.insert(g.key).second) << "duplicate " << g.key;
    EXPECT_LE(g.usable_memory_gib, g.hbm_gib) << g.key;
    if (g.fp8_tflops > 0) {
      EXPECT_GT(g.fp8_tflops, g.bf16_tflops) << g.key;
    }
    EXPECT_EQ(&find_gpu(g.key), &g);
  }
}

TEST(GpuCatalog, RequiredKeysPresent) {
  for (const char* key : {"a100-sxm-80gb", "a100-class", "h100-sxm-80gb", "h100-96gb-500w", "h800", "h200",
                          "b200", "mi210", "mi250x", "mi300x"})
    EXPECT_NO_THROW(find_gpu(key)) << key;
}

// Issue 17's memory-poor pool: the A100 40 GB is the 80 GB part's chip with less and slower HBM,
// so it shares every efficiency constant (they are physical, per chip) and differs only there.
TEST(GpuCatalog, A100FortyGigabytesIsTheEightyWithLessHbm) {
  const GpuSpec& small = find_gpu("a100-sxm-40gb");
  const GpuSpec& big = find_gpu("a100-sxm-80gb");
  EXPECT_DOUBLE_EQ(small.bf16_tflops, 312.0);
  EXPECT_DOUBLE_EQ(small.hbm_gib, 40.0);
  EXPECT_DOUBLE_EQ(small.hbm_tbps, 1.555);
  EXPECT_DOUBLE_EQ(small.nvlink_gbps, big.nvlink_gbps);
  EXPECT_LT(small.usable_memory_gib, small.hbm_gib);
  EXPECT_NEAR(big.hbm_gib - big.usable_memory_gib, small.hbm_gib - small.usable_memory_gib, 0.25);
  EXPECT_EQ(small.family, big.family);
  EXPECT_DOUBLE_EQ(small.gemm_efficiency, big.gemm_efficiency);
  EXPECT_DOUBLE_EQ(small.attention_efficiency, big.attention_efficiency);
  EXPECT_DOUBLE_EQ(small.hbm_efficiency, big.hbm_efficiency);
  EXPECT_DOUBLE_EQ(small.network_efficiency, big.network_efficiency);
}

// README §3: dense peaks (TFLOP/s), HBM (GiB), HBM TB/s, NVLink GB/s.
TEST(GpuCatalog, PublishedFiguresOfValidationReadme) {
  const GpuSpec& a100 = find_gpu("a100-sxm-80gb");
  EXPECT_DOUBLE_EQ(a100.bf16_tflops, 312.0);
  EXPECT_EQ(a100.fp8_tflops, 0.0);  // n/a
  EXPECT_DOUBLE_EQ(a100.hbm_gib, 80.0);
  EXPECT_DOUBLE_EQ(a100.hbm_tbps, 2.039);
  EXPECT_DOUBLE_EQ(a100.nvlink_gbps, 600.0);

  const GpuSpec& a100_class = find_gpu("a100-class");
  EXPECT_DOUBLE_EQ(a100_class.bf16_tflops, 312.0);
  EXPECT_EQ(a100_class.fp8_tflops, 0.0);

  for (const char* key : {"h100-sxm-80gb", "h800"}) {
    const GpuSpec& h = find_gpu(key);
    EXPECT_DOUBLE_EQ(h.bf16_tflops, 989.4) << key;
    EXPECT_DOUBLE_EQ(h.fp8_tflops, 1978.9) << key;
    EXPECT_DOUBLE_EQ(h.hbm_gib, 80.0) << key;
    EXPECT_DOUBLE_EQ(h.hbm_tbps, 3.35) << key;
  }
  EXPECT_DOUBLE_EQ(find_gpu("h100-sxm-80gb").nvlink_gbps, 900.0);
  EXPECT_DOUBLE_EQ(find_gpu("h800").nvlink_gbps, 400.0);

  // H100 peak derivation: 132 SMs x 4096 FLOP/clock x 1.83 GHz = 989.4 TFLOP/s (to 0.01%).
  EXPECT_LT(rel_err(132.0 * 4096.0 * 1.83e9, find_gpu("h100-sxm-80gb").peak_flops(false)), 1e-4);
  // A100: 108 SMs x 2048 x 1.41 GHz ~ 312 TFLOP/s.
  EXPECT_LT(rel_err(108.0 * 2048.0 * 1.41e9, a100.peak_flops(false)), 1e-3);

  // The 500 W H100 part: peak not published, below the SXM figures.
  const GpuSpec& h96 = find_gpu("h100-96gb-500w");
  EXPECT_LT(h96.bf16_tflops, 989.4);
  EXPECT_LT(h96.fp8_tflops, 1978.9);
  EXPECT_DOUBLE_EQ(h96.hbm_gib, 96.0);
  EXPECT_DOUBLE_EQ(h96.hbm_tbps, 2.4);

  // H200 is an H100 die with more HBM: same compute peaks.
  EXPECT_DOUBLE_EQ(find_gpu("h200").bf16_tflops, 989.4);
  EXPECT_DOUBLE_EQ(find_gpu("h200").fp8_tflops, 1978.9);
}

TEST(GpuCatalog, UnknownGpuListsTheKeys) {
  try {
    find_gpu("gb300");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "gpu");
    EXPECT_NE(e.allowed().find("h100-sxm-80gb"), std::string::npos) << e.allowed();
    EXPECT_NE(e.allowed().find("mi300x"), std::string::npos) << e.allowed();
  }
}

TEST(GpuCatalog, GpuJsonRoundTripsTheFields) {
  for (const auto& g : gpu_catalog()) {
    const auto j = gpu_to_json(g);
    EXPECT_EQ(j.at("key").get<std::string>(), g.key);
    EXPECT_DOUBLE_EQ(j.at("bf16_tflops").get<double>(), g.bf16_tflops);
    EXPECT_DOUBLE_EQ(j.at("usable_memory_gib").get<double>(), g.usable_memory_gib);
    EXPECT_EQ(j.at("gpus_per_node").get<int>(), g.gpus_per_node);
  }
}

// --- cluster shorthand and JSON --------------------------------------------------------------

TEST(ClusterShorthand, GpuColonCount) {
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  EXPECT_EQ(c.gpu.key, "h100-sxm-80gb");
  EXPECT_EQ(c.gpus(), 64);
  EXPECT_EQ(c.nodes, 8);
  EXPECT_EQ(c.gpus_per_node, 8);

  const Cluster small = load_cluster("a100-sxm-80gb:2");
  EXPECT_EQ(small.nodes, 1);
  EXPECT_EQ(small.gpus_per_node, 2);

  const Cluster amd = load_cluster("mi250x:16");  // 4 per node (catalog)
  EXPECT_EQ(amd.nodes, 4);
  EXPECT_EQ(amd.gpus_per_node, 4);

  const Cluster big = load_cluster("a100-sxm-80gb:1000");
  EXPECT_EQ(big.nodes, 125);
}

TEST(ClusterShorthand, Errors) {
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb"); }), "cluster");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:abc"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:8x"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:0"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:-8"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:12"); }), "cluster.gpus");  // 1.5 nodes
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:1001"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("no-such-gpu:8"); }), "gpu");
}

TEST(ClusterJson, NodesGpusAndOverrides) {
  const Cluster by_nodes = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"nodes", 4}});
  EXPECT_EQ(by_nodes.gpus(), 32);
  EXPECT_EQ(by_nodes.nodes, 4);

  const Cluster four = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"gpus_per_node", 4}});
  EXPECT_EQ(four.nodes, 4);
  EXPECT_EQ(four.gpus_per_node, 4);

  // 200 Gbit/s -> 25 GB/s one way, times the catalog's network efficiency.
  const Cluster slow = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 64}, {"network_gbps_per_gpu", 200}});
  EXPECT_LT(rel_err(slow.inter_node.bandwidth_bytes_per_s, 25e9 * slow.gpu.network_efficiency), 1e-12);

  // NVLink override in GB/s both directions: 400 -> 200 GB/s one way x efficiency.
  const Cluster nv = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 64}, {"nvlink_gbps", 400}});
  EXPECT_LT(rel_err(nv.intra_node.bandwidth_bytes_per_s, 200e9 * nv.gpu.nvlink_efficiency), 1e-12);
}

TEST(ClusterJson, Errors) {
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"nodes", 2}}); }),
            "cluster.gpus");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}}); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"gpu_count", 2}}); }),
            "cluster.gpu_count");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"network_gbps_per_gpu", 0}}); }),
            "cluster.network_gbps_per_gpu");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "tpu"}, {"gpus", 16}}); }), "gpu");
}

// Issue 13, D8: bandwidths in a cluster file are checked against physical bounds where they are
// read, so the error names the field the user wrote, not an internal duration downstream.
TEST(ClusterJson, UnphysicalBandwidthNamesTheClusterField) {
  for (const double bad : {1e-308, 1e-300, -1.0, 1e300}) {
    EXPECT_EQ(thrown_field([&] { cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 8}, {"nvlink_gbps", bad}}); }),
              "cluster.nvlink_gbps") << bad;
    EXPECT_EQ(thrown_field([&] {
                cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"network_gbps_per_gpu", bad}});
              }),
              "cluster.network_gbps_per_gpu") << bad;
  }
  EXPECT_NO_THROW(cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 8}, {"nvlink_gbps", 0.5}}));
}

// --- forgiving names --------------------------------------------------------------------------

TEST(GpuNames, CaseSeparatorsAndAliasesFindTheSameGpu) {
  const GpuSpec* h100 = &find_gpu("h100-sxm-80gb");
  for (const char* name : {"H100-SXM-80GB", "h100_sxm_80gb", "H100 SXM 80GB", "h100", "H100", "h100-sxm"})
    EXPECT_EQ(&find_gpu(name), h100) << name;
  EXPECT_EQ(load_cluster("H100:64").gpu, *h100);
  // Aliases only where unambiguous: "a100" could be a 40 GB or an 80 GB part.
  EXPECT_EQ(thrown_field([] { find_gpu("a100"); }), "gpu");
}

TEST(GpuNames, UnknownGpuSuggestsTheNearestKey) {
  const auto message = [](const std::string& name) -> std::string {
    try {
      find_gpu(name);
    } catch (const Error& e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_NE(message("h100-sxm-80g").find("did you mean h100-sxm-80gb?"), std::string::npos);
  EXPECT_NE(message("h100x").find("did you mean h100-sxm-80gb?"), std::string::npos);  // via the alias
  // 'a100' names no one part (40 and 80 GB differ in memory): every A100 key is suggested.
  EXPECT_NE(message("a100").find("did you mean a100-class, a100-sxm-80gb or a100-sxm-40gb?"), std::string::npos);
  EXPECT_EQ(message("h100-sxm"), "<no error>");  // an alias
  EXPECT_NE(message("H200-SXM").find("did you mean h200?"), std::string::npos);
  EXPECT_NE(message("mi300").find("did you mean mi300x?"), std::string::npos);
  EXPECT_EQ(message("tpu-v5p").find("did you mean"), std::string::npos);
  EXPECT_EQ(message("h100-sxm-80g").find('\n'), std::string::npos);
}

TEST(GpuCatalog, FamiliesAndSourcesAreSetAndAgreeWithTheValidationFamilies) {
  for (const auto& g : gpu_catalog()) {
    EXPECT_NE(g.family, kCustomGpuFamily) << g.key;
    EXPECT_FALSE(g.family.empty()) << g.key;
    EXPECT_FALSE(g.source.empty()) << g.key;
    // evaluation/validation's family of the validation rows names the same architecture.
    if (!gemm_family(g.key).empty()) {
      EXPECT_EQ(gemm_family(g.key), g.family) << g.key;
    }
  }
}

// --- the user's GPUs (--gpu-file) -------------------------------------------------------------

const std::string kExample = std::string(TESSERA_SOURCE_DIR) + "/examples/gpus/b200-like.json";

class UserGpus : public ::testing::Test {
 protected:
  void SetUp() override { clear_user_gpus(); }
  void TearDown() override { clear_user_gpus(); }

  std::string write(const std::string& name, const nlohmann::json& j) {
    const auto path = std::filesystem::path(::testing::TempDir()) /
                      ("tessera_user_gpus_" + std::to_string(::getpid()) + "_" + name);
    std::ofstream(path) << j.dump(2);
    return path.string();
  }
};

TEST_F(UserGpus, TheExampleRegistersAsACustomGpuAndResolvesInClusters) {
  EXPECT_EQ(add_user_gpus_from_file(kExample), std::vector<std::string>{"my-b200"});
  const GpuSpec& mine = find_gpu("My-B200");
  EXPECT_EQ(mine.family, kCustomGpuFamily);  // the file names no family: efficiencies assumed
  EXPECT_EQ(&find_gpu("my-b200"), &mine);
  const Cluster c = load_cluster("my-b200:64");
  EXPECT_EQ(c.gpu, mine);
  EXPECT_EQ(c.gpus(), 64);
  EXPECT_NE(thrown_field([] { find_gpu("v100"); }), "<no error>");
  // The figures are the catalog B200's (same datasheet): only the names differ.
  GpuSpec renamed = mine;
  const GpuSpec& b200 = find_gpu("b200");
  renamed.key = b200.key;
  renamed.name = b200.name;
  renamed.family = b200.family;
  renamed.source = b200.source;
  EXPECT_EQ(renamed, b200);
}

TEST_F(UserGpus, RegisteringTheSameGpusAgainChangesNothing) {
  add_user_gpus_from_file(kExample);
  add_user_gpus_from_file(kExample);
  ASSERT_EQ(user_gpus().size(), 1u);
  // `tessera gpus --json` (catalog + user GPUs) saved to a file reads back without a change.
  std::vector<GpuSpec> all = gpu_catalog();
  all.push_back(user_gpus().front());
  const auto path = write("all-gpus.json", gpus_to_json(all));
  EXPECT_EQ(add_user_gpus_from_file(path).size(), all.size());
  EXPECT_EQ(user_gpus().size(), 1u);
}

TEST_F(UserGpus, ANameOfAnotherGpuIsAnErrorAndTheFileRegistersNothing) {
  GpuSpec faster = find_gpu("h100-sxm-80gb");
  faster.bf16_tflops *= 2;
  EXPECT_EQ(thrown_field([&] { add_user_gpu(faster); }), "gpu.h100-sxm-80gb.key");
  faster.key = "H100_SXM_80GB";  // the same name as find_gpu compares names
  EXPECT_EQ(thrown_field([&] { add_user_gpu(faster); }), "gpu.H100_SXM_80GB.key");
  faster.key = "fast-h100";
  faster.aliases = {"h100"};  // the catalog GPU's alias
  EXPECT_EQ(thrown_field([&] { add_user_gpu(faster); }), "gpu.fast-h100.aliases");
  faster.aliases = {"Fast_H100"};  // repeats its own key
  EXPECT_EQ(thrown_field([&] { add_user_gpu(faster); }), "gpu.fast-h100.aliases");
  faster.aliases = {};
  GpuSpec clash = faster;
  clash.bf16_tflops += 1;  // the same key twice with other figures
  const auto path = write("clash.json", nlohmann::json::array({gpu_to_json(faster), gpu_to_json(clash)}));
  EXPECT_EQ(thrown_field([&] { add_user_gpus_from_file(path); }), "gpu.fast-h100.key");
  EXPECT_TRUE(user_gpus().empty());  // all of the file or none of it
  EXPECT_EQ(thrown_field([] { add_user_gpus_from_file("/no/such/gpus.json"); }), "gpu_file");
}

TEST_F(UserGpus, ClusterJsonTakesAnInlineGpuObject) {
  nlohmann::json gpu = json_fields::parse_file(kExample, "test").at("gpus").at(0);
  gpu.erase("source");
  const Cluster c = cluster_from_json({{"gpu", gpu}, {"nodes", 2}}, "cluster file c.json");
  EXPECT_EQ(c.gpu.key, "my-b200");
  EXPECT_EQ(c.gpus(), 16);
  EXPECT_EQ(c.gpu.family, kCustomGpuFamily);
  EXPECT_NE(c.gpu.source.find("c.json"), std::string::npos) << c.gpu.source;
  EXPECT_TRUE(user_gpus().empty());  // used as given, not registered
  const auto path = write("pools.json", {{"pools", {{{"gpu", gpu}, {"gpus", 8}}, {{"gpu", "h100"}, {"gpus", 8}}}},
                                         {"inter_pool_gbps", 400}});
  const MixedCluster mixed = load_mixed_cluster(path);
  ASSERT_EQ(mixed.pools.size(), 2u);
  EXPECT_EQ(mixed.pools[0].gpu.key, "my-b200");
  EXPECT_EQ(mixed.pools[1].gpu.key, "h100-sxm-80gb");
  gpu["key"] = "b200";  // a catalog key with other figures (family, source)
  EXPECT_EQ(thrown_field([&] { cluster_from_json({{"gpu", gpu}, {"gpus", 8}}); }), "gpu.b200.key");
  gpu["key"] = "ok";
  gpu.erase("hbm_gib");
  EXPECT_EQ(thrown_field([&] { cluster_from_json({{"gpu", gpu}, {"gpus", 8}}); }), "cluster.gpu.ok.hbm_gib");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", 42}, {"gpus", 8}}); }), "cluster.gpu");
}

// Issue 12's end-to-end case, through the API the CLI's --gpu-file calls: a B200-like GPU from a
// file plans llama3-70b, and since its figures equal the catalog B200's, the best plan costs the
// same there.
TEST_F(UserGpus, TheB200LikeFilePlansEndToEnd) {
  add_user_gpus_from_file(kExample);
  const Cluster cluster = load_cluster("my-b200:64");
  const ModelSpec model = load_model("llama3-70b");
  const Workload workload{512, 8192};
  PlannerOptions options;
  options.top_k = 1;
  options.threads = 2;
  const PlanSearch search = search_plans(model, cluster, workload, {}, options);
  ASSERT_FALSE(search.plans.empty());
  const RankedPlan& best = search.plans.front();
  EXPECT_TRUE(best.estimate.fits);
  const Estimate on_catalog_b200 = estimate(model, load_cluster("b200:64"), best.plan, workload);
  EXPECT_DOUBLE_EQ(on_catalog_b200.iteration_time_s, best.estimate.iteration_time_s);
}

}  // namespace
}  // namespace tessera
