// Data mix files (data/mixes/*.json, README "Input formats") -> DataMix.
//
// Distributions: {"name", "source", "sequence_tokens": 8192,
//   "text": {"median_tokens", "sigma", "cap_tokens"},
//   "images": {"min", "max", "sizes": [{"px", "probability"}, ...]},
//   "audio": {"probability", "min_s", "max_s"},
//   "generate": {"probability", "images"}}      (every block optional; at least one of text/images/audio)
// Real samples: a .jsonl file, one sample per line:
//   {"text_tokens": 120, "images": [336, 672], "audio_s": [12.5], "generated_images": 1}
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/data_mix.h"

namespace tessera {

DataMix data_mix_from_json(const nlohmann::json& j, const std::string& path = "data");
// Parses JSONL text (one sample object per line; blank lines skipped); errors name the line.
DataMix data_mix_from_jsonl(const std::string& text, const std::string& name);

}  // namespace tessera
