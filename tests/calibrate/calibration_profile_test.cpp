// The profile's measured links (formats/calibration_profile_json.h "links"): the section round-trips,
// a profile without it loads as before, every bad field is refused by name, and inside a
// ScopedProfile the loaded clusters carry the measured tiers (per GPU over the top level, plan's
// flags over both; the derived inter-pool link follows the overridden pools).
#include <algorithm>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/calibration_profile.h"
#include "catalog/gpu_catalog.h"
#include "common/thrown_field.h"
#include "core/error.h"
#include "core/units.h"
#include "formats/calibration_profile_json.h"
#include "report/profile_note.h"

namespace tessera {
namespace {

using testing::thrown_field;

constexpr const char* kNodeFields[] = {"intra_node_gbps", "inter_node_gbps", "intra_node_latency_us",
                                       "inter_node_latency_us"};

nlohmann::json profile_with(const nlohmann::json& links, const nlohmann::json& gpus = nlohmann::json::array()) {
  // Assigned key by key: a json value inside nested braces is copied by GCC but wrapped in an
  // array by Clang (nlohmann/json's brace-initialisation caveat).
  nlohmann::json j = nlohmann::json::object();
  j["schema_version"] = kProfileSchemaVersion;
  j["kind"] = kProfileKind;
  j["gpus"] = gpus;
  if (!links.is_null()) j["links"] = links;
  return j;
}

// The field a profile document is refused for, or "<no error>".
std::string refused_field(const nlohmann::json& profile) {
  return thrown_field([&] { profile_from_json(profile, "p.json"); });
}

const nlohmann::json kAllLinks = {{"intra_node_gbps", 2400.0},    {"inter_node_gbps", 300.0},
                                  {"intra_node_latency_us", 4.0}, {"inter_node_latency_us", 12.0},
                                  {"inter_pool_gbps", 400.0},     {"inter_pool_latency_us", 2000.0}};

TEST(ProfileLinks, TheSectionRoundTrips) {
  const nlohmann::json gpu_links = {{"inter_node_gbps", 150.0}, {"inter_node_latency_us", 25.0}};
  const LoadedProfile p = profile_from_json(
      profile_with(kAllLinks, nlohmann::json::array({{{"key", "a100-sxm-80gb"}, {"links", gpu_links}}})), "p.json");
  EXPECT_EQ(links_to_json(p.links), kAllLinks);
  ASSERT_EQ(p.gpus.size(), 1u);
  EXPECT_TRUE(p.gpus[0].parameters.empty());  // an entry that measures only links needs no parameters
  EXPECT_EQ(node_links_to_json(p.gpus[0].links), gpu_links);
  EXPECT_TRUE(p.has_links());
  EXPECT_EQ(links_to_json(links_from_json(links_to_json(p.links), "x")), kAllLinks);
  // Only the fields given are set.
  const LoadedProfile one = profile_from_json(profile_with({{"inter_pool_gbps", 800}}), "p.json");
  EXPECT_FALSE(one.links.every_pool.intra_node_gbps.has_value());
  EXPECT_FALSE(one.links.inter_pool_latency_us.has_value());
  EXPECT_EQ(one.links.inter_pool_gbps, 800.0);
}

TEST(ProfileLinks, AProfileWithoutLinksLoadsAsBefore) {
  CalibrationProfile fitted;
  GpuSpec g = find_gpu("h100-sxm-80gb");
  g.gemm_efficiency = 0.66;
  fitted.gpus.push_back(g);
  const nlohmann::json written = profile_to_json(fitted, {.runs = 3, .files = {"runs.csv"}, .identified = {}});  // what calibrate writes
  ASSERT_FALSE(written.contains("links"));
  const LoadedProfile p = profile_from_json(written, "old.json");
  EXPECT_FALSE(p.has_links());
  EXPECT_TRUE(p.links.empty());
  EXPECT_FALSE(profile_note_json(p).contains("links"));
  const ScopedProfile scope(p);
  const Cluster cluster = load_cluster("h100-sxm-80gb:16");
  const Cluster catalog = make_cluster(g, 16);  // the calibrated GPU's own links, nothing replaced
  EXPECT_EQ(cluster.inter_node.bandwidth_bytes_per_s, catalog.inter_node.bandwidth_bytes_per_s);
  EXPECT_EQ(cluster.intra_node.latency_s, catalog.intra_node.latency_s);
}

TEST(ProfileLinks, EveryBadFieldIsRefusedByName) {
  for (const auto& [name, value] : kAllLinks.items()) {
    const bool latency = name.find("latency") != std::string::npos;
    // Zero, negative, and a unit slip past the bound (Gbit/s as bit/s; seconds as microseconds).
    for (const double bad : {0.0, -1.0, latency ? 1e6 : 1e9}) {
      nlohmann::json links = kAllLinks;
      links[name] = bad;
      EXPECT_EQ(refused_field(profile_with(links)), "profile.links." + name) << name << " = " << bad;
    }
    nlohmann::json text = kAllLinks;
    text[name] = "fast";
    EXPECT_EQ(refused_field(profile_with(text)), "profile.links." + name);
  }
  for (const char* name : kNodeFields) {
    const nlohmann::json gpus = nlohmann::json::array({{{"key", "h100-sxm-80gb"}, {"links", {{name, 0.0}}}}});
    EXPECT_EQ(refused_field(profile_with(nullptr, gpus)), std::string("profile.gpus[0].links.") + name);
  }
  // A node tier's ceiling is 1 ms: a node's 2 ms latency is refused, the inter-pool link's is not.
  EXPECT_EQ(refused_field(profile_with({{"inter_node_latency_us", 2000}})), "profile.links.inter_node_latency_us");
  EXPECT_EQ(refused_field(profile_with({{"inter_pool_latency_us", 2000}})), "<no error>");
  // A typo and a pool-level field in a GPU entry are unknown keys; links must be an object.
  EXPECT_EQ(refused_field(profile_with({{"inter_pool_gbs", 1}})), "profile.links.inter_pool_gbs");
  const nlohmann::json pool_field =
      nlohmann::json::array({{{"key", "h100-sxm-80gb"}, {"links", {{"inter_pool_gbps", 1}}}}});
  EXPECT_EQ(refused_field(profile_with(nullptr, pool_field)), "profile.gpus[0].links.inter_pool_gbps");
  EXPECT_EQ(refused_field(profile_with(400)), "profile.links");
}

TEST(ProfileLinks, MeasuredValuesReplaceTheTiersAsGiven) {
  const Cluster catalog = make_cluster(find_gpu("a100-sxm-80gb"), 64);
  NodeLinkOverrides links;
  links.inter_node_gbps = 400;
  links.intra_node_latency_us = 20;
  const Cluster c = with_node_links(catalog, links);
  // 400 Gbit/s = 50 GB/s, no NCCL efficiency on top; 20 us = 2e-5 s.
  EXPECT_DOUBLE_EQ(c.inter_node.bandwidth_bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(c.intra_node.latency_s, 20e-6);
  EXPECT_EQ(c.intra_node.bandwidth_bytes_per_s, catalog.intra_node.bandwidth_bytes_per_s);
  EXPECT_EQ(c.inter_node.latency_s, catalog.inter_node.latency_s);
  // Set fields of the top win.
  NodeLinkOverrides top;
  top.inter_node_gbps = 100;
  const NodeLinkOverrides merged = overlaid(links, top);
  EXPECT_EQ(merged.inter_node_gbps, 100.0);
  EXPECT_EQ(merged.intra_node_latency_us, 20.0);
}

TEST(ProfileLinks, ClustersInTheScopeCarryTheProfileLinksPerGpuOverTheTopLevel) {
  // Parsed, not brace-built: nested braces build different documents under GCC and Clang.
  const nlohmann::json gpus = nlohmann::json::parse(R"([{"key": "h100-sxm-80gb", "links": {"inter_node_gbps": 200}}])");
  const ScopedProfile scope(
      profile_from_json(profile_with({{"inter_node_gbps", 100}, {"inter_node_latency_us", 30}}, gpus), "p.json"));
  const Cluster h100 = load_cluster("h100-sxm-80gb:64");
  EXPECT_DOUBLE_EQ(h100.inter_node.bandwidth_bytes_per_s, units::gbps_to_bytes_per_s(200));  // its own entry
  EXPECT_DOUBLE_EQ(h100.inter_node.latency_s, 30e-6);                                        // the top level
  const Cluster a100 = cluster_from_json({{"gpu", "a100-sxm-80gb"}, {"gpus", 64}});
  EXPECT_DOUBLE_EQ(a100.inter_node.bandwidth_bytes_per_s, units::gbps_to_bytes_per_s(100));
  // The derived inter-pool link (the smaller pool's NICs together, the slower latency) follows.
  const MixedCluster mixed = load_mixed_cluster("a100-sxm-80gb:64+h100-sxm-80gb:16");
  EXPECT_DOUBLE_EQ(mixed.inter_pool.bandwidth_bytes_per_s,
                   std::min(64 * units::gbps_to_bytes_per_s(100), 16 * units::gbps_to_bytes_per_s(200)));
  EXPECT_DOUBLE_EQ(mixed.inter_pool.latency_s, 30e-6);
}

TEST(ProfileLinks, FlagsWinOverTheProfileAndTheClusterFile) {
  const ScopedProfile scope(
      profile_from_json(profile_with({{"inter_pool_gbps", 800}, {"inter_node_gbps", 100}}), "p.json"));
  EXPECT_DOUBLE_EQ(load_mixed_cluster("a100-sxm-80gb:64+h100-sxm-80gb:64").inter_pool.bandwidth_bytes_per_s,
                   units::gbps_to_bytes_per_s(800));
  LinkOverrides flags;
  flags.inter_pool_gbps = 400;
  flags.inter_pool_latency_us = 20;
  flags.every_pool.inter_node_gbps = 50;
  const MixedCluster m = load_mixed_cluster("a100-sxm-80gb:64+h100-sxm-80gb:64", flags);
  EXPECT_DOUBLE_EQ(m.inter_pool.bandwidth_bytes_per_s, units::gbps_to_bytes_per_s(400));
  EXPECT_DOUBLE_EQ(m.inter_pool.latency_s, 20e-6);
  for (const Cluster& pool : m.pools)
    EXPECT_DOUBLE_EQ(pool.inter_node.bandwidth_bytes_per_s, units::gbps_to_bytes_per_s(50));
  // One pool has no inter-pool link to replace.
  EXPECT_EQ(load_mixed_cluster("h100-sxm-80gb:64", flags).inter_pool.bandwidth_bytes_per_s, 0.0);
}

TEST(ScopedProfile, AnInnerScopeReplacesTheOuterOneUntilItCloses) {
  CalibrationProfile outer_fit;
  GpuSpec g = find_gpu("h100-sxm-80gb");
  g.gemm_efficiency = 0.5;
  outer_fit.gpus.push_back(g);
  const ScopedProfile outer(profile_from_json(profile_to_json(outer_fit, {}), "outer.json"));
  {
    const ScopedProfile inner(profile_from_json(profile_with({{"inter_pool_gbps", 400}}), "inner.json"));
    EXPECT_EQ(active_profile()->file, "inner.json");
    EXPECT_NE(find_gpu("h100-sxm-80gb").gemm_efficiency, 0.5);  // the catalog with the inner profile only
  }
  ASSERT_NE(active_profile(), nullptr);
  EXPECT_EQ(active_profile()->file, "outer.json");
  EXPECT_DOUBLE_EQ(find_gpu("h100-sxm-80gb").gemm_efficiency, 0.5);
}

}  // namespace
}  // namespace tessera
