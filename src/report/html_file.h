// Writing a report page to the path given with --html.
#pragma once

#include <string>

namespace tessera {

// Writes `html` to `path` (replacing it). Throws Error("--html", ...) when the file cannot be
// written.
void write_html_file(const std::string& path, const std::string& html);

}  // namespace tessera
