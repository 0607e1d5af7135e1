// A tiny well-formedness checker for the report's HTML and SVG: every tag closes in order, void
// and self-closing tags stand alone, script/style bodies are skipped, and a '<' that opens no tag
// (raw user text) is an error. Not an HTML parser: just enough to catch broken output.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::report_testing {

// "" when well formed, else what is wrong and where.
inline std::string markup_problem(std::string_view text) {
  static const std::set<std::string> kVoid = {"meta", "br", "hr", "img", "input", "link"};
  std::vector<std::string> open;
  std::size_t i = 0;
  while ((i = text.find('<', i)) != std::string_view::npos) {
    const std::string where = " at offset " + std::to_string(i);
    if (text.substr(i, 4) == "<!--") {
      i = text.find("-->", i);
      if (i == std::string_view::npos) return "unclosed comment" + where;
      continue;
    }
    if (text.substr(i, 2) == "<!") {  // doctype
      i = text.find('>', i);
      if (i == std::string_view::npos) return "unclosed doctype" + where;
      continue;
    }
    const bool closing = i + 1 < text.size() && text[i + 1] == '/';
    std::size_t name_end = i + (closing ? 2 : 1);
    while (name_end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[name_end])) || text[name_end] == '-'))
      ++name_end;
    const std::string name(text.substr(i + (closing ? 2 : 1), name_end - i - (closing ? 2 : 1)));
    if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return "raw '<'" + where;
    std::size_t end = name_end;
    char quote = 0;
    for (; end < text.size(); ++end) {
      if (quote) {
        if (text[end] == quote) quote = 0;
      } else if (text[end] == '"' || text[end] == '\'') {
        quote = text[end];
      } else if (text[end] == '<') {
        return "'<' inside tag " + name + where;
      } else if (text[end] == '>') {
        break;
      }
    }
    if (end == text.size()) return "unterminated tag " + name + where;
    const bool self_closing = text[end - 1] == '/';
    if (closing) {
      if (open.empty() || open.back() != name) return "unexpected </" + name + ">" + where;
      open.pop_back();
    } else if (!self_closing && !kVoid.count(name)) {
      if (name == "script" || name == "style") {  // raw text: skip to the end tag
        const std::size_t close = text.find("</" + name + ">", end);
        if (close == std::string_view::npos) return "unclosed " + name + where;
        end = close + name.size() + 2;
      } else {
        open.push_back(name);
      }
    }
    i = end + 1;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

inline std::size_t count_of(std::string_view text, std::string_view needle) {
  std::size_t count = 0;
  for (std::size_t i = text.find(needle); i != std::string_view::npos; i = text.find(needle, i + 1)) ++count;
  return count;
}

}  // namespace tessera::report_testing
