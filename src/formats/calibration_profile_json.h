// The calibration profile file `tessera calibrate -o PROFILE.json` writes and `--profile FILE`
// reads (README "Calibration profile"):
//   {"schema_version": 1, "kind": "tessera-calibration-profile",
//    "gpus": [{"key": "a100-sxm-80gb", "parameters": {"gemm_efficiency": 0.71, ...}}],
//    "fitted_on": {"runs": 5, "collectives": 0, "gemms": 0, "inputs": ["runs.csv"]},
//    "parameters": [{"gpu", "name", "term", "catalog", "fitted", "uncertainty", "status", "bounds"}],
//    "measurements": [{"id", "kind", "gpu", "measured", "before", "after", "error_before_pct", "error_after_pct"}],
//    "summary": {"median_abs_error_before_pct", "median_abs_error_after_pct"}}
// A GPU entry may carry the dense GEMMs the fit measured, "measured_gemms": [{"m", "n", "k",
// "dtype": "bf16" | "fp8", "tflops"}]: shapes at or near them are priced from the measurement
// (cost/measured_gemm_scale.h).
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

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "calibrate/calibration_profile.h"

namespace tessera {

inline constexpr int kProfileSchemaVersion = 1;
inline constexpr const char* kProfileKind = "tessera-calibration-profile";

nlohmann::json profile_to_json(const CalibrationProfile& profile, const ProfileInputs& inputs);
// The profile's "fitted_on" object: counts per kind, input files, the parameters identified.
nlohmann::json fitted_on_json(const ProfileInputs& inputs);

// Throws Error("profile.<field>", ...) on a malformed file, an unknown parameter or kind.
LoadedProfile profile_from_json(const nlohmann::json& j, const std::string& file);
LoadedProfile load_profile(const std::string& path);

// A links section as the profile file writes it (only the set fields), and back; `path` names
// the section in errors ("profile.links", "profile.gpus[0].links").
nlohmann::json node_links_to_json(const NodeLinkOverrides& links);
nlohmann::json links_to_json(const LinkOverrides& links);
LinkOverrides links_from_json(const nlohmann::json& j, const std::string& path);
NodeLinkOverrides node_links_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tessera
