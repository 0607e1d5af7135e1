#include "report/json_number.h"

#include <cstdio>

#include "core/error.h"
#include "report/html_text.h"

namespace tessera::report {

namespace {

constexpr int kMaxDecimals = 12;

[[noreturn]] void missing(std::string_view path, const std::string& why) {
  throw Error("report", "the document has no " + why + " at '" + std::string(path) + "'",
              "a path to a field the command's --json document has");
}

std::string exact_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

std::string shown_text(double value, int decimals, std::string_view unit) {
  if (decimals < 0 || decimals > kMaxDecimals)
    throw Error("report.decimals", "got " + std::to_string(decimals), "0 to " + std::to_string(kMaxDecimals));
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return std::string(buffer) + std::string(unit);
}

}  // namespace

const nlohmann::json& json_at(const nlohmann::json& doc, std::string_view path) {
  const nlohmann::json* at = &doc;
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') ++i;
    if (i < path.size() && path[i] == '[') {
      const std::size_t close = path.find(']', i);
      if (close == std::string_view::npos) missing(path, "closing ']'");
      std::size_t index = 0;
      for (std::size_t k = i + 1; k < close; ++k) {
        if (path[k] < '0' || path[k] > '9') missing(path, "array index");
        index = index * 10 + static_cast<std::size_t>(path[k] - '0');
      }
      if (!at->is_array() || index >= at->size()) missing(path, "array element");
      at = &(*at)[index];
      i = close + 1;
      continue;
    }
    const std::size_t end = path.find_first_of(".[", i);
    const std::string key(path.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
    if (!at->is_object() || !at->contains(key)) missing(path, "field '" + key + "'");
    at = &(*at)[key];
    i = end == std::string_view::npos ? path.size() : end;
  }
  return *at;
}

double json_number(const nlohmann::json& doc, std::string_view path) {
  const nlohmann::json& at = json_at(doc, path);
  if (!at.is_number()) missing(path, "number");
  return at.get<double>();
}

HtmlCell json_cell(const nlohmann::json& doc, std::string path, int decimals, double scale, std::string_view unit) {
  const double value = json_number(doc, path);
  HtmlCell cell{shown_text(value * scale, decimals, unit), value, std::move(path), scale};
  return cell;
}

std::string json_span(const nlohmann::json& doc, std::string path, int decimals, double scale, std::string_view unit) {
  const double value = json_number(doc, path);
  std::string html =
      "<span class=\"num\" data-json=\"" + escape_html(path) + "\" data-value=\"" + exact_text(value) + "\"";
  if (scale != 1) html += " data-scale=\"" + exact_text(scale) + "\"";
  return html + ">" + escape_html(shown_text(value * scale, decimals, unit)) + "</span>";
}

HtmlCell text_cell(std::string text) { return HtmlCell{std::move(text), std::nullopt, "", 1}; }

}  // namespace tessera::report
