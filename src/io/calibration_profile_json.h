// The calibration profile file `tessera calibrate -o PROFILE.json` writes and `--profile FILE`
// reads (README "Calibration profile"):
//   {"schema_version": 1, "kind": "tessera-calibration-profile",
//    "gpus": [{"key": "a100-sxm-80gb", "parameters": {"gemm_efficiency": 0.71, ...}}],
//    "fitted_on": {"runs": 5, "collectives": 0, "gemms": 0, "inputs": ["runs.csv"]},
//    "parameters": [{"gpu", "name", "term", "catalog", "fitted", "uncertainty", "status", "bounds"}],
//    "measurements": [{"id", "kind", "gpu", "measured", "before", "after", "error_before_pct", "error_after_pct"}],
//    "summary": {"median_abs_error_before_pct", "median_abs_error_after_pct"}}
// Only "gpus" and "links" change predictions: each entry's parameters replace those fields of the
// GPU's catalog (or --gpu-file) entry; the rest records what the fit saw and did.
//
// Measured link tiers (optional, issue 17; a file without them loads as before):
//   "links": {"intra_node_gbps", "inter_node_gbps", "intra_node_latency_us", "inter_node_latency_us",
//             "inter_pool_gbps", "inter_pool_latency_us"}      every field optional
//   "gpus": [{"key": ..., "parameters": {...}, "links": {"intra_node_gbps", ...}}]   the four node tiers
// A bandwidth is the achieved bus bandwidth in Gbit/s, one direction (nccl-tests' busbw in GB/s x 8):
// per GPU for the node tiers, aggregate between two pools for inter_pool (as a cluster JSON's
// inter_pool_gbps). A latency is the per-message (ring step) time in microseconds. Each replaces the
// cluster's tier as measured: no NCCL efficiency is applied on top. The top-level node tiers apply to
// every pool; a GPU entry's links to the pools of that GPU and win over the top level; the
// inter_pool fields to the link between pools of a mixed cluster.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "hardware/cluster.h"
#include "hardware/mixed_cluster.h"

namespace tessera {

inline constexpr int kProfileSchemaVersion = 1;
inline constexpr const char* kProfileKind = "tessera-calibration-profile";

struct ProfileInputs {
  std::size_t runs = 0, collectives = 0, gemms = 0;
  std::vector<std::string> files;
};

nlohmann::json profile_to_json(const CalibrationProfile& profile, const ProfileInputs& inputs);

// Measured values of one pool's two link tiers; an unset field keeps the cluster's.
struct NodeLinkOverrides {
  std::optional<double> intra_node_gbps, inter_node_gbps, intra_node_latency_us, inter_node_latency_us;
  bool empty() const { return !intra_node_gbps && !inter_node_gbps && !intra_node_latency_us && !inter_node_latency_us; }
};
// The profile's top-level "links" (or plan's link flags): node tiers of every pool, the inter-pool link.
struct LinkOverrides {
  NodeLinkOverrides every_pool;
  std::optional<double> inter_pool_gbps, inter_pool_latency_us;
  bool empty() const { return every_pool.empty() && !inter_pool_gbps && !inter_pool_latency_us; }
};

// A profile read back: the fitted values per GPU key.
struct CalibratedGpu {
  std::string key;
  std::map<std::string, double> parameters;  // calibration_parameter.h names
  NodeLinkOverrides links;                   // the pools of this GPU
};
struct LoadedProfile {
  std::string file;
  std::vector<CalibratedGpu> gpus;
  ProfileInputs inputs;
  LinkOverrides links;
  bool has_links() const;  // any measured link, top level or per GPU
};
// Throws Error("profile.<field>", ...) on a malformed file, an unknown parameter or kind.
LoadedProfile profile_from_json(const nlohmann::json& j, const std::string& file);
LoadedProfile load_profile(const std::string& path);

// `gpu` with the profile's values for its key (unchanged when the profile has none), validated.
GpuSpec apply_profile(const GpuSpec& gpu, const LoadedProfile& profile);

// Bounds of a measured link value, shared by the profile reader and plan's link flags; each throws
// Error(field, ...). Bandwidth: physical::kMin/kMaxBandwidthGbps. A node tier's latency: the
// fixed-time range of hardware/physical_ranges.h (1 ns .. 1 ms); the inter-pool link's up to
// kMaxInterPoolLatencyS.
void require_link_gbps(const std::string& field, double gbps);
void require_node_latency_us(const std::string& field, double latency_us);
void require_inter_pool_latency_us(const std::string& field, double latency_us);
// Pools joined across buildings or cloud regions (APNet'25's changing topologies) see up to tens of
// milliseconds one way (~50 ms across a continent); 100 ms keeps those and refuses seconds typed as
// microseconds.
inline constexpr double kMaxInterPoolLatencyS = 0.1;

// `top`'s set fields over `base`'s.
NodeLinkOverrides overlaid(NodeLinkOverrides base, const NodeLinkOverrides& top);
// The node tiers a profile sets for a pool of `gpu_key`: the top level, then the GPU's entry.
NodeLinkOverrides profile_node_links(const LoadedProfile& profile, const std::string& gpu_key);
// `cluster` with the given tiers replaced (bytes/s = Gbit/s / 8, seconds = us x 1e-6), validated.
Cluster with_node_links(Cluster cluster, const NodeLinkOverrides& links);
// The inter-pool link replaced where `links` sets it (a one-pool cluster has none to replace).
void set_inter_pool_links(MixedCluster& cluster, const LinkOverrides& links);
// A links section as the profile file writes it (only the set fields), and back; `path` names
// the section in errors ("profile.links", "profile.gpus[0].links").
nlohmann::json node_links_to_json(const NodeLinkOverrides& links);
nlohmann::json links_to_json(const LinkOverrides& links);
LinkOverrides links_from_json(const nlohmann::json& j, const std::string& path);
NodeLinkOverrides node_links_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tessera

namespace tessera {
// What a report says when a profile is in force: {"file", "gpus": [keys], "fitted_on": {...}} and,
// when it measures links, "links" (its top-level section) and "gpu_links" ({key: section}); the
// same as one line of text.
nlohmann::json profile_note_json(const LoadedProfile& profile);
std::string profile_note_text(const LoadedProfile& profile);
}  // namespace tessera
