#include "catalog/name_match.h"

#include <algorithm>
#include <cctype>

namespace tessera {

namespace {

// A typo of up to a third of the name's letters (at least two) still reads as that name; past
// that a suggestion is noise (a chosen bound; tests/catalog/name_match_test.cpp shows both sides).
constexpr std::size_t kMinSuggestionDistance = 2;
constexpr std::size_t kSuggestionLengthDivisor = 3;

std::size_t max_suggestion_distance(std::size_t query_length) {
  return std::max(kMinSuggestionDistance, query_length / kSuggestionLengthDivisor);
}

bool is_separator(char c) { return c == '-' || c == '_' || c == ' '; }

bool either_starts_with_other(std::string_view a, std::string_view b) {
  return !a.empty() && !b.empty() && (a.starts_with(b) || b.starts_with(a));
}

}  // namespace

std::string normalized_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name)
    if (!is_separator(c)) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Two-row dynamic programme (Wagner & Fischer 1974).
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::optional<std::size_t> match_name(std::string_view query, const std::vector<std::string>& names,
                                      const std::string& field) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == query) return i;
  const std::string wanted = normalized_name(query);
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (normalized_name(names[i]) != wanted) continue;
    if (found)
      throw Error(field, "'" + std::string(query) + "' is ambiguous: " + names[*found] + " or " + names[i],
                  "the exact name");
    found = i;
  }
  return found;
}

std::vector<std::string> nearest_names(std::string_view query, const std::vector<std::string>& names) {
  const std::string wanted = normalized_name(query);
  if (wanted.empty()) return {};
  struct Scored {
    bool prefix;
    std::size_t distance;
    std::size_t index;
  };
  // The length difference is a lower bound of the distance and is the distance when one name is a
  // prefix of the other; past the suggestion threshold the exact distance cannot matter, so a long
  // query (a path, garbage) costs O(names), not O(names x its length x theirs).
  const std::size_t threshold = max_suggestion_distance(wanted.size());
  std::vector<Scored> scored;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string candidate = normalized_name(names[i]);
    const bool prefix = either_starts_with_other(wanted, candidate);
    const std::size_t length_difference =
        wanted.size() > candidate.size() ? wanted.size() - candidate.size() : candidate.size() - wanted.size();
    const std::size_t distance =
        prefix || length_difference > threshold ? length_difference : edit_distance(wanted, candidate);
    scored.push_back({prefix, distance, i});
  }
  // Prefix matches first, then the fewest edits; the catalog order breaks ties.
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    return a.prefix != b.prefix ? a.prefix : a.distance < b.distance;
  });
  std::vector<std::string> out;
  for (const auto& s : scored) {
    if (out.size() == kMaxSuggestions) break;
    const bool kept = s.prefix ? scored.front().prefix
                               : !scored.front().prefix && s.distance == scored.front().distance &&
                                     s.distance <= max_suggestion_distance(wanted.size());
    if (!kept) break;
    out.push_back(names[s.index]);
  }
  return out;
}

std::string either_of(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

std::string joined_names(const std::vector<std::string>& names) {
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  return list;
}

Error unknown_name_error(const std::string& field, const std::string& what, std::string_view query,
                         const std::string& suggestion, const std::string& allowed) {
  std::string problem = "unknown " + what + " '" + std::string(query) + "'";
  if (!suggestion.empty()) problem += "; did you mean " + suggestion + "?";
  return Error(field, problem, allowed);
}

}  // namespace tessera
