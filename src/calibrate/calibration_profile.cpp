#include "calibrate/calibration_profile.h"

#include <algorithm>

#include "calibrate/calibration_parameter.h"
#include "core/checks.h"
#include "core/units.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {
LinkTier with_measured(LinkTier tier, const std::optional<double>& gbps, const std::optional<double>& latency_us) {
  if (gbps) tier.bandwidth_bytes_per_s = units::gbps_to_bytes_per_s(*gbps);
  if (latency_us) tier.latency_s = *latency_us * units::kMicrosecond;
  return tier;
}

}  // namespace

GpuSpec apply_profile(const GpuSpec& gpu, const LoadedProfile& profile) {
  GpuSpec out = gpu;
  for (const auto& g : profile.gpus) {
    if (g.key != gpu.key) continue;
    for (const auto& [name, value] : g.parameters) out.*(find_calibration_parameter(name)->field) = value;
    if (!g.measured_gemms.empty()) out.measured_gemms = g.measured_gemms;
  }
  out.validate();
  return out;
}

bool LoadedProfile::has_measured_gemms() const {
  return std::any_of(gpus.begin(), gpus.end(), [](const CalibratedGpu& g) { return !g.measured_gemms.empty(); });
}

std::string ProfileInputs::counts_text() const {
  std::string out = std::to_string(runs) + " runs, " + std::to_string(collectives) + " collective rows, " +
                    std::to_string(gemms) + " GEMMs";
  if (attention > 0) out += ", " + std::to_string(attention) + " attention calls";
  if (kernels > 0) out += ", " + std::to_string(kernels) + " kernel timings";
  return out;
}

bool LoadedProfile::has_links() const {
  return !links.empty() || std::any_of(gpus.begin(), gpus.end(), [](const CalibratedGpu& g) { return !g.links.empty(); });
}

void require_link_gbps(const std::string& field, double gbps) {
  require_in_range(field, gbps, physical::kMinBandwidthGbps, physical::kMaxBandwidthGbps, "Gbit/s");
}

void require_node_latency_us(const std::string& field, double latency_us) {
  require_in_range(field, latency_us, physical::kMinFixedTimeS / units::kMicrosecond,
                   physical::kMaxFixedTimeS / units::kMicrosecond, "us");
}

void require_inter_pool_latency_us(const std::string& field, double latency_us) {
  require_in_range(field, latency_us, physical::kMinFixedTimeS / units::kMicrosecond,
                   kMaxInterPoolLatencyS / units::kMicrosecond, "us");
}

NodeLinkOverrides overlaid(NodeLinkOverrides base, const NodeLinkOverrides& top) {
  for (const auto& f : kNodeLinkFields)
    if (top.*f.value) base.*f.value = top.*f.value;
  return base;
}

NodeLinkOverrides profile_node_links(const LoadedProfile& profile, const std::string& gpu_key) {
  NodeLinkOverrides links = profile.links.every_pool;
  for (const auto& g : profile.gpus)
    if (g.key == gpu_key) links = overlaid(links, g.links);
  return links;
}

Cluster with_node_links(Cluster cluster, const NodeLinkOverrides& links) {
  cluster.intra_node = with_measured(cluster.intra_node, links.intra_node_gbps, links.intra_node_latency_us);
  cluster.inter_node = with_measured(cluster.inter_node, links.inter_node_gbps, links.inter_node_latency_us);
  cluster.validate();
  return cluster;
}

void set_inter_pool_links(MixedCluster& cluster, const LinkOverrides& links) {
  if (cluster.pools.size() < 2) return;
  cluster.inter_pool = with_measured(cluster.inter_pool, links.inter_pool_gbps, links.inter_pool_latency_us);
}

}  // namespace tessera
