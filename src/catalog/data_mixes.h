// The built-in data mixes (data/mixes/*.json) and --data's resolution: a built-in name, a .json
// mix or a .jsonl sample file (formats/data_mix_json.h reads both).
#pragma once

#include <string>
#include <vector>

#include "plan/data_mix.h"

namespace tessera {

std::vector<std::string> builtin_data_mix_names();
// A built-in name, a .json mix or a .jsonl sample file. Throws Error("data", ...).
DataMix load_data_mix(const std::string& name_or_path);

}  // namespace tessera
