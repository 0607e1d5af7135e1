// Typed, validated reads of JSON object fields. Every failure is a tessera::Error naming the
// dotted field path, so a malformed file yields one actionable line.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::json_fields {

using Json = nlohmann::json;

// Parses text; a syntax error or a number beyond double range becomes Error(`what`, "malformed
// JSON: ..."), and a key given twice in one object Error(`what`, "key 'a.b' given twice").
Json parse(const std::string& text, const std::string& what);
// The largest file any input reads, and the largest JSON file (profiles, GPU files, clusters,
// models, plans, mixes). Each bounds the work and memory of the largest accepted input on a 2-core,
// 24 GiB machine (README "Limits", measured there): 1 GiB of text is what the largest line-oriented
// inputs (sample files, logs under their own limit) stay within; a 16 MiB JSON document parses in
// about a second, and Tessera's own files are under 1 MiB (a profile fitted on 1,440 runs: 0.4 MiB).
inline constexpr std::uintmax_t kMaxTextFileBytes = std::uintmax_t{1} << 30;
inline constexpr std::uintmax_t kMaxJsonFileBytes = std::uintmax_t{16} << 20;

// Reads a whole file and parses it; a missing file is Error(`what`, "cannot read ..."), one above
// kMaxJsonFileBytes Error(`what`, "... bytes").
Json parse_file(const std::string& path, const std::string& what);
// A whole file as text, read once into a string of its size; Error(`what`) when it is missing or
// larger than max_bytes.
std::string read_text_file(const std::string& path, const std::string& what, std::uintmax_t max_bytes = kMaxTextFileBytes);

// j as JSON text that never throws: bytes that are not UTF-8 (a path, a CSV cell) become U+FFFD
// instead of nlohmann's type_error.316. indent < 0 writes one line.
std::string to_text(const Json& j, int indent = -1);
// What an error line says it got: a scalar as JSON text of at most kMaxEchoChars characters, an
// array or object by its size ("an array of 3 items"), so an error is one short line whatever
// the input held.
inline constexpr std::size_t kMaxEchoChars = 80;
std::string excerpt(const Json& v);
// Documents nest at most this deep (every Tessera format needs under 10 levels); deeper input is
// refused while parsing, so nothing recurses over it later.
inline constexpr int kMaxJsonDepth = 64;
// v's value when it is a JSON integer, or a float with an exact integer value, that fits in
// int64; nothing otherwise (booleans, 9223372036854775808 stored as unsigned, 4096.5, 1e300).
std::optional<std::int64_t> exact_integer(const Json& v);

void require_object(const Json& j, const std::string& path);
// Rejects keys outside `allowed` (catches typos instead of silently ignoring them).
void reject_unknown_keys(const Json& j, const std::string& path,
                         std::initializer_list<const char*> allowed);

bool has(const Json& j, const char* key);
std::int64_t get_int(const Json& j, const char* key, const std::string& path);
std::int64_t get_int_or(const Json& j, const char* key, const std::string& path,
                        std::int64_t fallback);
double get_number(const Json& j, const char* key, const std::string& path);
double get_number_or(const Json& j, const char* key, const std::string& path, double fallback);
bool get_bool_or(const Json& j, const char* key, const std::string& path, bool fallback);
std::string get_string(const Json& j, const char* key, const std::string& path);
std::string get_string_or(const Json& j, const char* key, const std::string& path,
                          const std::string& fallback);

}  // namespace tessera::json_fields
