// Reports say when a calibration profile (--profile) changed their numbers: a "profile" key in
// the JSON document and a last line in the text.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "report/profile_note.h"

namespace tessera::cli {

inline void note_profile(nlohmann::json& document) {
  if (const LoadedProfile* p = active_profile()) document["profile"] = profile_note_json(*p);
}
inline std::string profile_note() {
  const LoadedProfile* p = active_profile();
  return p ? profile_note_text(*p) : std::string();
}

}  // namespace tessera::cli
