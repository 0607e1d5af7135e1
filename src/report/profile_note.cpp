#include "report/profile_note.h"

#include "formats/calibration_profile_json.h"
#include "formats/json_fields.h"

namespace tessera {

nlohmann::json profile_note_json(const LoadedProfile& profile) {
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& g : profile.gpus) keys.push_back(g.key);
  nlohmann::json note = {
      {"file", profile.file},
      {"gpus", keys},
      {"fitted_on", fitted_on_json(profile.inputs)}};
  if (profile.has_links()) {
    note["links"] = links_to_json(profile.links);
    note["gpu_links"] = nlohmann::json::object();
    for (const auto& g : profile.gpus)
      if (!g.links.empty()) note["gpu_links"][g.key] = node_links_to_json(g.links);
  }
  if (profile.has_measured_gemms()) {
    note["measured_gemms"] = nlohmann::json::object();
    for (const auto& g : profile.gpus)
      if (!g.measured_gemms.empty()) note["measured_gemms"][g.key] = g.measured_gemms.size();
  }
  return note;
}

std::string profile_note_text(const LoadedProfile& profile) {
  std::string keys;
  for (const auto& g : profile.gpus) keys += (keys.empty() ? "" : ", ") + g.key;
  std::string links;
  if (profile.has_links()) {
    links = "; measured links";
    if (!profile.links.empty()) links += " " + json_fields::to_text(links_to_json(profile.links));
    for (const auto& g : profile.gpus)
      if (!g.links.empty()) links += " " + g.key + " " + json_fields::to_text(node_links_to_json(g.links));
  }
  std::string gemms;
  for (const auto& g : profile.gpus)
    if (!g.measured_gemms.empty())
      gemms += (gemms.empty() ? "; measured GEMMs priced as measured:" : ",") + std::string(" ") + g.key + " " +
               std::to_string(g.measured_gemms.size()) + " shapes";
  const auto& identified = profile.inputs.identified;
  if (identified && identified->empty() && !profile.has_links() && !profile.has_measured_gemms())
    return "calibration profile " + profile.file + " changes nothing: no parameter was identified from its " +
           profile.inputs.counts_text() + ", so " + (keys.empty() ? "every GPU" : keys) + " keeps the catalog's values\n";
  std::string moved;
  if (identified && !identified->empty()) {
    moved = "; moved";
    for (const auto& name : *identified) moved += " " + name;
  }
  return "calibration profile " + profile.file + " applied to " + (keys.empty() ? "no GPU" : keys) + " (fitted on " +
         profile.inputs.counts_text() + moved + ")" + links + gemms + "\n";
}

}  // namespace tessera
