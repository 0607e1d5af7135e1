#include "formats/probe_environment.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "formats/json_fields.h"
#include "formats/sweep_table.h"

namespace tessera {

namespace {
// A probe of the largest clusters Tessera plans (16,384 GPUs) lists each rank once.
constexpr std::size_t kMaxRanks = 1 << 17;

std::string choice(const json_fields::Json& j, const char* key, const std::string& path,
                   std::initializer_list<std::string_view> allowed) {
  const std::string value = json_fields::get_string(j, key, path);
  std::string names;
  for (std::string_view a : allowed) {
    if (value == a) return value;
    names += (names.empty() ? "" : ", ") + std::string(a);
  }
  throw Error(path + "." + key, "'" + value + "' is not known", names);
}

std::vector<std::string> measurement_files(const json_fields::Json& j, const std::string& path) {
  const std::string field = path + ".files";
  if (!json_fields::has(j, "files") || !j.at("files").is_array())
    throw Error(field, "missing or not a list", "the measurement files written, e.g. [\"gemm.csv\"]");
  std::vector<std::string> files;
  for (const auto& item : j.at("files")) {
    if (item == "ranks.csv") continue;  // always there: read before the measurements
    const bool known = item.is_string() && std::find(std::begin(kProbeFiles), std::end(kProbeFiles),
                                                     item.get<std::string>()) != std::end(kProbeFiles);
    if (!known) throw Error(field, json_fields::excerpt(item) + " is not a probe file", "ranks.csv, gemm.csv, grouped_gemm.csv, attention.csv, kernels.csv, collectives.csv, steps.csv, steps_memory.csv");
    if (std::find(files.begin(), files.end(), item.get<std::string>()) != files.end())
      throw Error(field, "'" + item.get<std::string>() + "' listed twice", "each file once");
    files.push_back(item.get<std::string>());
  }
  return files;
}
}  // namespace

ProbeEnvironment parse_probe_environment(const std::string& json_text, const std::string& file) {
  const std::string path = "probe:" + file;
  const json_fields::Json j = json_fields::parse(json_text, path);
  json_fields::require_object(j, path);
  const std::int64_t format = json_fields::get_int(j, "probe_format", path);
  if (format != kProbeFormat)
    throw Error(path + ".probe_format", std::to_string(format), std::to_string(kProbeFormat) + " (this Tessera's probe format)");
  ProbeEnvironment env;
  env.device = choice(j, "device", path, {"cuda", "cpu"});
  env.backend = choice(j, "backend", path, {"nccl", "gloo"});
  env.device_name = json_fields::get_string(j, "device_name", path);
  env.world_size = json_fields::get_int(j, "world_size", path);
  env.nodes = json_fields::get_int(j, "nodes", path);
  env.gpus_per_node = json_fields::get_int(j, "gpus_per_node", path);
  if (env.nodes < 1 || env.gpus_per_node < 1 || env.world_size != env.nodes * env.gpus_per_node)
    throw Error(path + ".world_size",
                std::to_string(env.world_size) + " is not nodes x gpus_per_node = " + std::to_string(env.nodes) + " x " +
                    std::to_string(env.gpus_per_node),
                "nodes >= 1, gpus_per_node >= 1 and their product");
  env.files = measurement_files(j, path);
  if (json_fields::has(j, "torch") && j.at("torch").is_string()) env.torch_version = j.at("torch").get<std::string>();
  return env;
}

void check_probe_ranks(std::string_view csv_text, const std::string& file, const ProbeEnvironment& env) {
  const SweepTable table(csv_text, "ranks", file, {"rank", "world_size"}, {"local_rank", "node", "hostname", "device_name"},
                         kMaxRanks);
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const SweepRow r = table.row(i);
    const double world = r.whole("world_size");
    if (world != static_cast<double>(env.world_size))
      r.fail("world_size", "rank says world_size " + std::string(r.text("world_size")) + ", environment.json says " +
                               std::to_string(env.world_size),
             "every rank in one world");
    const double rank = r.number("rank");
    if (rank < 0 || rank >= world || static_cast<double>(static_cast<std::int64_t>(rank)) != rank)
      r.fail("rank", "rank " + std::string(r.text("rank")), "0 .. world_size - 1");
    if (!seen.insert(static_cast<std::int64_t>(rank)).second)
      r.fail("rank", "rank " + std::string(r.text("rank")) + " appears twice", "each rank once");
  }
  if (static_cast<std::int64_t>(seen.size()) != env.world_size)
    table.fail(table.header_line(), 1,
               std::to_string(seen.size()) + " ranks reported, the world has " + std::to_string(env.world_size),
               "one row per rank");
}

}  // namespace tessera
