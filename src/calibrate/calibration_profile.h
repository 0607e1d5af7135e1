// A calibration profile as values (what `tessera calibrate` fitted, formats/calibration_profile_json.h
// reads and writes it), and applying it: a GPU's fitted parameters, a cluster's measured link tiers.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.h"
#include "hardware/gpu_spec.h"
#include "hardware/mixed_cluster.h"

namespace tessera {

// What a profile was fitted on: counts of each kind of measurement, the input files, and what moved.
struct ProfileInputs {
  std::size_t runs = 0, collectives = 0, gemms = 0, attention = 0, kernels = 0;
  std::vector<std::string> files;
  // The parameters the fit moved (fitted or at a bound), per "gpu.parameter"; nullopt in a profile
  // that does not record them (written by hand, or before they were recorded).
  std::optional<std::vector<std::string>> identified;
  // "3 runs, 0 collective rows, 66 GEMMs" (attention calls and kernels where there are any).
  std::string counts_text() const;
};

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
  std::vector<MeasuredGemm> measured_gemms;  // the dense GEMMs the fit measured (GpuSpec::measured_gemms)
};
struct LoadedProfile {
  std::string file;
  std::vector<CalibratedGpu> gpus;
  ProfileInputs inputs;
  LinkOverrides links;
  bool has_links() const;  // any measured link, top level or per GPU
  bool has_measured_gemms() const;  // any GPU with a measured GEMM table
};

// The node-tier fields of a links section, in file order (the profile file's names).
struct NodeLinkField {
  const char* name;
  std::optional<double> NodeLinkOverrides::*value;
  bool latency;  // else a bandwidth
};
inline constexpr NodeLinkField kNodeLinkFields[] = {
    {"intra_node_gbps", &NodeLinkOverrides::intra_node_gbps, false},
    {"inter_node_gbps", &NodeLinkOverrides::inter_node_gbps, false},
    {"intra_node_latency_us", &NodeLinkOverrides::intra_node_latency_us, true},
    {"inter_node_latency_us", &NodeLinkOverrides::inter_node_latency_us, true},
};

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

}  // namespace tessera
