#include "dataserver/coordinator_checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "data_service.pb.h"
#include "formats/json_fields.h"

namespace tessera {

namespace {
constexpr const char* kFormat = "tessera-data-coordinator";
}  // namespace

void write_coordinator_checkpoint(const std::string& path, const CoordinatorCheckpoint& c) {
  const nlohmann::json j = {{"format", kFormat},
                            {"protocol_version", static_cast<int>(tessera::data::v1::PROTOCOL_VERSION)},
                            {"index", c.index},
                            {"ranks", c.settings.ranks},
                            {"microbatches", c.settings.microbatches},
                            {"max_tokens", c.settings.max_tokens},
                            {"method", to_string(c.settings.method)},
                            {"seed", c.settings.seed},
                            {"epoch", c.settings.epoch},
                            {"pipeline_stages", c.settings.pipeline_stages},
                            {"context_parallel", c.settings.context_parallel},
                            {"cursors", c.cursors}};
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << j.dump() << "\n";
    if (!out.flush()) throw Error("--checkpoint", "cannot write " + temporary, "a writable path");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);  // atomic on POSIX: a reader sees the old or the new file
  if (ec) throw Error("--checkpoint", "cannot rename " + temporary + ": " + ec.message(), "a writable folder");
}

CoordinatorCheckpoint read_coordinator_checkpoint(const std::string& path) {
  const nlohmann::json j = json_fields::parse_file(path, "checkpoint");
  json_fields::require_object(j, "checkpoint");
  json_fields::reject_unknown_keys(j, "checkpoint", {"format", "protocol_version", "index", "ranks", "microbatches",
                                                     "max_tokens", "method", "seed", "epoch", "pipeline_stages", "context_parallel",
                                                     "cursors"});
  if (json_fields::get_string(j, "format", "checkpoint") != kFormat)
    throw Error("checkpoint.format", "not a coordinator checkpoint", kFormat);
  const std::int64_t version = json_fields::get_int(j, "protocol_version", "checkpoint");
  if (version != tessera::data::v1::PROTOCOL_VERSION)
    throw Error("checkpoint.protocol_version", "written by protocol " + std::to_string(version),
                std::to_string(static_cast<int>(tessera::data::v1::PROTOCOL_VERSION)));
  CoordinatorCheckpoint c;
  c.index = json_fields::get_string(j, "index", "checkpoint");
  c.settings.ranks = static_cast<int>(json_fields::get_int(j, "ranks", "checkpoint"));
  c.settings.microbatches = static_cast<int>(json_fields::get_int(j, "microbatches", "checkpoint"));
  c.settings.max_tokens = json_fields::get_int(j, "max_tokens", "checkpoint");
  c.settings.method = parse_balance_method(json_fields::get_string(j, "method", "checkpoint"));
  c.settings.seed = static_cast<std::uint64_t>(json_fields::get_int(j, "seed", "checkpoint"));
  c.settings.epoch = json_fields::get_int(j, "epoch", "checkpoint");
  c.settings.pipeline_stages = static_cast<int>(json_fields::get_int(j, "pipeline_stages", "checkpoint"));
  c.settings.context_parallel = static_cast<int>(json_fields::get_int(j, "context_parallel", "checkpoint"));
  if (!j.contains("cursors") || !j.at("cursors").is_array()) throw Error("checkpoint.cursors", "missing", "an array of integers");
  for (std::size_t r = 0; r < j.at("cursors").size(); ++r) {
    const auto v = json_fields::exact_integer(j.at("cursors")[r]);
    if (!v) throw Error("checkpoint.cursors[" + std::to_string(r) + "]", "not an integer", "0 .. the rank's micro-batches");
    c.cursors.push_back(*v);
  }
  return c;
}

}  // namespace tessera
