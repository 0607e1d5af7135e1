// What a report says when a calibration profile is in force.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/calibration_profile.h"

namespace tessera {

// What a report says when a profile is in force: {"file", "gpus": [keys], "fitted_on": {...}} and,
// when it measures links, "links" (its top-level section) and "gpu_links" ({key: section}); the
// same as one line of text.
nlohmann::json profile_note_json(const LoadedProfile& profile);
std::string profile_note_text(const LoadedProfile& profile);

}  // namespace tessera
