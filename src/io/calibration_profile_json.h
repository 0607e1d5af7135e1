// The calibration profile file `tessera calibrate -o PROFILE.json` writes and `--profile FILE`
// reads (README "Calibration profile"):
//   {"schema_version": 1, "kind": "tessera-calibration-profile",
//    "gpus": [{"key": "a100-sxm-80gb", "parameters": {"gemm_efficiency": 0.71, ...}}],
//    "fitted_on": {"runs": 5, "collectives": 0, "gemms": 0, "inputs": ["runs.csv"]},
//    "parameters": [{"gpu", "name", "term", "catalog", "fitted", "uncertainty", "status", "bounds"}],
//    "measurements": [{"id", "kind", "gpu", "measured", "before", "after", "error_before_pct", "error_after_pct"}],
//    "summary": {"median_abs_error_before_pct", "median_abs_error_after_pct"}}
// Only "gpus" changes predictions: each entry's parameters replace those fields of the GPU's
// catalog (or --gpu-file) entry; the rest records what the fit saw and did.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"

namespace tessera {

inline constexpr int kProfileSchemaVersion = 1;
inline constexpr const char* kProfileKind = "tessera-calibration-profile";

struct ProfileInputs {
  std::size_t runs = 0, collectives = 0, gemms = 0;
  std::vector<std::string> files;
};

nlohmann::json profile_to_json(const CalibrationProfile& profile, const ProfileInputs& inputs);

// A profile read back: the fitted values per GPU key.
struct CalibratedGpu {
  std::string key;
  std::map<std::string, double> parameters;  // calibration_parameter.h names
};
struct LoadedProfile {
  std::string file;
  std::vector<CalibratedGpu> gpus;
  ProfileInputs inputs;
};
// Throws Error("profile.<field>", ...) on a malformed file, an unknown parameter or kind.
LoadedProfile profile_from_json(const nlohmann::json& j, const std::string& file);
LoadedProfile load_profile(const std::string& path);

// `gpu` with the profile's values for its key (unchanged when the profile has none), validated.
GpuSpec apply_profile(const GpuSpec& gpu, const LoadedProfile& profile);

}  // namespace tessera

namespace tessera {
// What a report says when a profile is in force: {"file", "gpus": [keys], "fitted_on": {...}},
// and the same as one line of text.
nlohmann::json profile_note_json(const LoadedProfile& profile);
std::string profile_note_text(const LoadedProfile& profile);
}  // namespace tessera
