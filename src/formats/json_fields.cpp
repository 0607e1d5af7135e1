#include "formats/json_fields.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <vector>

#include "core/error.h"

namespace tessera::json_fields {

namespace {
std::string field_path(const std::string& path, const char* key) {
  return path.empty() ? std::string(key) : path + "." + key;
}

// Tracks where the parser is, so a key given twice is named by its dotted path. nlohmann keeps
// the last of two equal keys silently (json.hpp, basic_json::parse docs), which would let
// {"tp": 8, "tp": 4} plan with tp=4; one rule everywhere: a key given twice is an error.
class DuplicateKeyCheck {
 public:
  explicit DuplicateKeyCheck(std::string what) : what_(std::move(what)) {}

  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    using Event = Json::parse_event_t;
    if (depth > kMaxJsonDepth)
      throw Error(what_, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                  "JSON nested at most " + std::to_string(kMaxJsonDepth) + " levels");
    switch (event) {
      case Event::object_start: enter(false); break;
      case Event::array_start: enter(true); break;
      case Event::object_end:
      case Event::array_end: frames_.pop_back(); break;
      case Event::key: note_key(parsed.get<std::string>()); break;
      case Event::value: next_element(); break;
    }
    return true;  // keep every value: this callback only checks
  }

 private:
  struct Frame {
    bool is_array = false;
    std::set<std::string> keys;
    std::string key;
    std::size_t next_index = 0;
  };

  void next_element() {
    if (!frames_.empty() && frames_.back().is_array) ++frames_.back().next_index;
  }
  void enter(bool is_array) {
    next_element();
    frames_.push_back(Frame{is_array, {}, {}, 0});
  }
  void note_key(const std::string& key) {
    Frame& top = frames_.back();
    top.key = key;
    if (!top.keys.insert(key).second)
      throw Error(what_, "key '" + path() + "' given twice", "each key once per object");
  }
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.is_array) out += "[" + std::to_string(f.next_index - 1) + "]";
      else out += (out.empty() ? "" : ".") + f.key;
    }
    return out;
  }

  std::string what_;
  std::vector<Frame> frames_;
};

// nlohmann prefixes "[json.exception.parse_error.101] "; keep the human part.
std::string human_part(const std::string& message) {
  const auto pos = message.find("] ");
  return pos == std::string::npos ? message : message.substr(pos + 2);
}
}  // namespace

Json parse(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text, DuplicateKeyCheck(what));
  } catch (const nlohmann::json::out_of_range& e) {
    // 406: a number literal beyond double range (1e400).
    throw Error(what, "malformed JSON: " + human_part(e.what()), "numbers within double range (about 1.8e308)");
  } catch (const nlohmann::json::exception& e) {
    throw Error(what, "malformed JSON: " + human_part(e.what()), "a valid JSON document");
  }
}

std::string to_text(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string excerpt(const Json& v) {
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + (v.size() == 1 ? " item" : " items");
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + (v.size() == 1 ? " key" : " keys");
  if (v.is_string() && v.get_ref<const std::string&>().size() > kMaxEchoChars) {
    // Cut on a UTF-8 character boundary (continuation bytes are 10xxxxxx).
    const std::string& s = v.get_ref<const std::string&>();
    std::size_t end = kMaxEchoChars;
    while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
    return to_text(Json(s.substr(0, end))) + "... (" + std::to_string(s.size()) + " bytes)";
  }
  return to_text(v);
}

std::optional<std::int64_t> exact_integer(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    // Accept 4096.0 but not 4096.5 or 1e300: nothing is silently truncated. 2^53 is where
    // doubles stop holding every integer.
    constexpr double kExactIntegerLimit = 9007199254740992.0;
    if (std::isfinite(d) && std::fabs(d) <= kExactIntegerLimit && d == std::floor(d))
      return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

std::string read_text_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(what, "'" + path + "' is not a readable file", "a path to a regular file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw Error(what, "cannot read file '" + path + "'", "a readable file");
  if (size > max_bytes)
    throw Error(what, "'" + path + "' holds " + std::to_string(size) + " bytes",
                "a file of at most " + std::to_string(max_bytes) + " bytes");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(what, "cannot read file '" + path + "'", "a readable file");
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::uintmax_t>(in.gcount()) != size) throw Error(what, "cannot read file '" + path + "'", "a readable file");
  return text;
}

Json parse_file(const std::string& path, const std::string& what) {
  return parse(read_text_file(path, what, kMaxJsonFileBytes), what + " (" + path + ")");
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
  if (const auto value = exact_integer(v)) return *value;
  throw Error(field, "expected an integer, got " + excerpt(v), "an integer from -9.2e18 to 9.2e18");
}

std::int64_t get_int_or(const Json& j, const char* key, const std::string& path,
                        std::int64_t fallback) {
  return has(j, key) ? get_int(j, key, path) : fallback;
}

double get_number(const Json& j, const char* key, const std::string& path) {
  const std::string field = field_path(path, key);
  if (!has(j, key)) throw Error(field, "missing", "a number");
  const Json& v = j.at(key);
  if (!v.is_number()) throw Error(field, "expected a number, got " + excerpt(v), "a number");
  return v.get<double>();
}

double get_number_or(const Json& j, const char* key, const std::string& path, double fallback) {
  return has(j, key) ? get_number(j, key, path) : fallback;
}

bool get_bool_or(const Json& j, const char* key, const std::string& path, bool fallback) {
  if (!has(j, key)) return fallback;
  const Json& v = j.at(key);
  if (!v.is_boolean())
    throw Error(field_path(path, key), "expected true or false, got " + excerpt(v), "true, false");
  return v.get<bool>();
}

std::string get_string(const Json& j, const char* key, const std::string& path) {
  const std::string field = field_path(path, key);
  if (!has(j, key)) throw Error(field, "missing", "a string");
  const Json& v = j.at(key);
  if (!v.is_string()) throw Error(field, "expected a string, got " + excerpt(v), "a string");
  return v.get<std::string>();
}

std::string get_string_or(const Json& j, const char* key, const std::string& path,
                          const std::string& fallback) {
  return has(j, key) ? get_string(j, key, path) : fallback;
}

}  // namespace tessera::json_fields
