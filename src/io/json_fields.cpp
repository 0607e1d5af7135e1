#include "io/json_fields.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace tessera::json_fields {

namespace {
std::string field_path(const std::string& path, const char* key) {
  return path.empty() ? std::string(key) : path + "." + key;
}
}  // namespace

Json parse(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    // nlohmann prefixes "[json.exception.parse_error.101] "; keep the human part.
    const auto pos = msg.find("] ");
    if (pos != std::string::npos) msg = msg.substr(pos + 2);
    throw Error(what, "malformed JSON: " + msg, "a valid JSON document");
  }
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(what, "'" + path + "' is not a readable file", "a path to a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(what, "cannot read file '" + path + "'", "a readable file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Json parse_file(const std::string& path, const std::string& what) {
  return parse(read_text_file(path, what), what + " (" + path + ")");
}

void require_object(const Json& j, const std::string& path) {
  if (!j.is_object()) throw Error(path, "expected a JSON object", "{...}");
}

void reject_unknown_keys(const Json& j, const std::string& path,
                         std::initializer_list<const char*> allowed) {
  for (const auto& item : j.items()) {
    bool known = false;
    for (const char* key : allowed) known = known || item.key() == key;
    if (!known) {
      std::string list;
      for (const char* key : allowed) list += (list.empty() ? "" : ", ") + std::string(key);
      throw Error(field_path(path, item.key().c_str()), "unknown field", list);
    }
  }
}

bool has(const Json& j, const char* key) { return j.contains(key) && !j.at(key).is_null(); }

std::int64_t get_int(const Json& j, const char* key, const std::string& path) {
  const std::string field = field_path(path, key);
  if (!has(j, key)) throw Error(field, "missing", "an integer");
  const Json& v = j.at(key);
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // Accept 4096.0 but not 4096.5 or 1e300: nothing is silently truncated.
    if (std::isfinite(d) && std::fabs(d) < 9e15 && d == std::floor(d))
      return static_cast<std::int64_t>(d);
  }
  throw Error(field, "expected an integer, got " + v.dump(), "an integer");
}

std::int64_t get_int_or(const Json& j, const char* key, const std::string& path,
                        std::int64_t fallback) {
  return has(j, key) ? get_int(j, key, path) : fallback;
}

double get_number(const Json& j, const char* key, const std::string& path) {
  const std::string field = field_path(path, key);
  if (!has(j, key)) throw Error(field, "missing", "a number");
  const Json& v = j.at(key);
  if (!v.is_number()) throw Error(field, "expected a number, got " + v.dump(), "a number");
  return v.get<double>();
}

double get_number_or(const Json& j, const char* key, const std::string& path, double fallback) {
  return has(j, key) ? get_number(j, key, path) : fallback;
}

bool get_bool_or(const Json& j, const char* key, const std::string& path, bool fallback) {
  if (!has(j, key)) return fallback;
  const Json& v = j.at(key);
  if (!v.is_boolean())
    throw Error(field_path(path, key), "expected true or false, got " + v.dump(), "true, false");
  return v.get<bool>();
}

std::string get_string(const Json& j, const char* key, const std::string& path) {
  const std::string field = field_path(path, key);
  if (!has(j, key)) throw Error(field, "missing", "a string");
  const Json& v = j.at(key);
  if (!v.is_string()) throw Error(field, "expected a string, got " + v.dump(), "a string");
  return v.get<std::string>();
}

std::string get_string_or(const Json& j, const char* key, const std::string& path,
                          const std::string& fallback) {
  return has(j, key) ? get_string(j, key, path) : fallback;
}

}  // namespace tessera::json_fields
