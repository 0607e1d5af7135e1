// Forgiving lookup of built-in names (GPU keys and aliases, zoo models, multimodal models, data
// mixes): case and the separators '-', '_' and ' ' do not matter ("Llama-3-70B" finds
// "llama3-70b"), and an unknown name gets "did you mean X?" for the nearest name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace tessera {

// The form names are compared in: lower case, without '-', '_' and ' ' ('.' is kept, so
// "gpt3-1.7b" and a "gpt3-17b" stay apart).
std::string normalized_name(std::string_view name);

// Levenshtein distance (insertions, deletions, substitutions, each costing 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The index in `names` of `query`: an exact match first, else the one name equal to it in
// normalized form; nullopt if none. Throws Error(field, "... is ambiguous") if several names
// normalize to the query and none is exact.
std::optional<std::size_t> match_name(std::string_view query, const std::vector<std::string>& names,
                                      const std::string& field);

// The names nearest to `query`, best first, at most kMaxSuggestions: every name whose normalized
// form starts with the query's (or the query's with theirs) by fewest edits; failing that, the
// names with the fewest edits if within a third of the query's letters (at least two); else none.
inline constexpr std::size_t kMaxSuggestions = 3;
std::vector<std::string> nearest_names(std::string_view query, const std::vector<std::string>& names);

// "a", "a or b", "a, b or c"; "" for none: the "did you mean" part of an Error.
std::string either_of(const std::vector<std::string>& names);

// "a, b, c": the names joined for an Error's allowed list (one line).
std::string joined_names(const std::vector<std::string>& names);

// The Error for an unknown name, one line: "<field>: unknown <what> '<query>'; did you mean
// <suggestion>? (allowed: <allowed>)", the hint left out when `suggestion` is empty (pass
// either_of(nearest_names(...))).
Error unknown_name_error(const std::string& field, const std::string& what, std::string_view query,
                         const std::string& suggestion, const std::string& allowed);

}  // namespace tessera
